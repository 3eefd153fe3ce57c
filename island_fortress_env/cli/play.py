"""``island-fortress play``: a person plays one seat against agents in the terminal.

The board is the public text view (or, with ``--window``, the picture in a window, as the
person's seat sees it); the person also sees their own favor hand, the cards they are choosing
from and their own sealed bid, and nothing else that is hidden: other players' kept cards and
sealed bids are told as "keeps a favor card" / "seals a petition bid" until revealed.
After every move of any seat, what happened is told in words (``views.narrate.Narrator``):
income, every score with its reason, Workers lost, the petition's bids and tie-break, a lost
Governor block, the end of each round and the final score with its breakdown. Seats are named
one way throughout: "A (you)", "B (heuristic)".

The legal choices are listed in words with what they cost (at a role choice, the role actions
that cannot be taken now are listed too, with why). A petition bid is chosen by its amount
(``2`` bids 2 Jade; with unlimited components, a bid of several base-101 digits by each digit),
any other choice by its listed number or by typing the start of its text; a decision with one
legal choice is taken and shown, not asked. A count is listed and typed by itself (``2`` at "how
many Laborers" uses 2 Laborers; ``3`` at a draw draws 3), and the cells the Governor block may be
placed on, offered beside a decision of the holder's turn, by ``g1``, ``g2``..., after the
decision's own choices, so neither is ever typed for the other. A compound move (Build Wall's
count, cells and Workers, for instance) is asked step by step, since each step is a decision of
its own. A bad
entry is explained and asked again, with nothing changed (``tools/entries.py`` reads numbers);
``help`` shows the rules and the role cards. At the end the game is saved as a game record
(``island-fortress replay``): the path is checked before the game starts, and a record that
cannot be written there after all is saved in the temporary directory instead (or, failing
that, printed), so a finished game is never lost. A game stopped with ``quit`` is not saved (a
game record holds a finished game, one that replays to its result); play says so, and how to deal
the same game again (the command with its seed).
"""

from __future__ import annotations

import argparse
import datetime as dt
import tempfile
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from island_fortress_env.cli.arguments import (
    UsageError,
    agent_spec,
    non_negative_int,
    record_file,
    rule_option,
    seed_value,
)
from island_fortress_env.cli.entries import read_number, shown
from island_fortress_env.engine import actions as A
from island_fortress_env.engine import visibility
from island_fortress_env.engine.decisions import Decision
from island_fortress_env.engine.tables import PLAYER_COUNTS
from island_fortress_env.env.records import (
    GameRecord,
    RecordError,
    check_output_file,
    dumps,
    printable,
    printable_lines,
    save,
    save_unique,
)
from island_fortress_env.players import AGENTS_HELP, make_agent
from island_fortress_env.players.seeds import agent_seed, deal_seed
from island_fortress_env.views.narrate import (
    Line,
    Narrator,
    TargetKind,
    Tone,
    card_rewards,
    describe_choice,
    public_move_text,
    refusals,
    seat_name,
)
from island_fortress_env.views.rules_summary import rules_summary
from island_fortress_env.views.text import render_text

if TYPE_CHECKING:
    from rich.console import Console

    from island_fortress_env.engine import State
    from island_fortress_env.engine.favors import FavorCard

HUMAN = "human"
YOU = "you"  # the person's seat is named "A (you)"
PROMPT = "your choice> "
COMMANDS = (
    "Type a choice's number (at a bid: the Jade to bid; at a count: the count; g1, g2...: "
    "a cell for the Governor block) or the start of its text; "
    "'board' shows the table again, 'help' the rules, 'quit' stops (a game is saved when it ends)."
)
_BOLD = frozenset({Tone.ROUND, Tone.END, Tone.PETITION})


def say(console: Console, text: object = "", style: str | None = None, soft_wrap: bool | None = None) -> None:
    """Print ``text`` as it is: never read as rich markup, and its control characters escaped
    (``printable_lines``: a favor card's name, an agent's or a file's cannot drive the terminal)."""
    console.print(printable_lines(text), markup=False, style=style, soft_wrap=soft_wrap)


class QuitGame(Exception):
    """The person stopped the game (``quit`` or end of input)."""


def card_words(card: FavorCard) -> str:
    """A favor card as the narrator says it: its name, its pattern (rows top first) and what
    it gives once played ("+1 income every round, 2 Convicts")."""
    return f"{card.name} [{' / '.join(card.pattern)}]: {card_rewards(card)}"


def private_view(state: State, seat: int) -> str:
    """The seat's own hidden things: favor hand, the cards it is choosing from, its sealed bid."""
    cards = state.game.deck.cards
    lines = []
    hand = [card_words(cards[i]) for i in visibility.favor_hand(state, seat, seat) or ()]
    lines.append("Your favor hand: " + ("; ".join(hand) if hand else "empty"))
    drawn = [card_words(cards[i]) for i in visibility.choosing_from(state, seat, seat) or ()]
    if drawn:
        lines.append("You are choosing from: " + "; ".join(drawn))
    bid = visibility.sealed_bid(state, seat, seat)
    if bid is not None:
        lines.append(f"Your sealed bid: {bid} Jade")
    return "\n".join(lines)


def rules_text() -> str:
    """``help``: the rules and the role cards in a page, then how to enter a choice."""
    out = []
    for section in rules_summary():
        out.append(f"{section.title}:")
        out.extend(f"  - {line}" for line in section.lines)
    out.append(COMMANDS)
    return "\n".join(out)


@dataclass(frozen=True)
class Choice:
    action: int | None  # None: the entry chose nothing
    message: str = ""  # why, for a bad entry


def parse_choice(
    entry: str,
    legal: Sequence[int],
    labels: Sequence[str],
    numbers: Sequence[int | None] | None = None,
    what: str = "action",
    keys: Sequence[str] | None = None,
) -> Choice:
    """A number or the start of one action's text, case-insensitive. ``numbers[i]`` is the
    number ``legal[i]`` is listed by (default 1, 2, ...; a bid's is its amount, a count's the
    count; None: listed by no number, as the Governor cells are), ``what`` the word for it in a
    reply ("There is no bid 7"), ``keys[i]`` what it is listed by in a reply (default its number)."""
    text = entry.strip().lower()
    if not text:
        return Choice(None, "Nothing entered. " + COMMANDS)
    numbers = list(range(1, len(legal) + 1)) if numbers is None else list(numbers)
    numbered = [n for n in numbers if n is not None]
    low, high = (min(numbered), max(numbered)) if numbered else (1, 0)
    number = read_number(text, low, high, what)
    if number is not None:
        if number.value is None:
            return Choice(None, number.message)
        if number.value not in numbered:
            return Choice(None, f"There is no {what} {number.value}: choose one of those listed.")
        return Choice(legal[numbers.index(number.value)])
    matches = [i for i, label in enumerate(labels) if label.lower().startswith(text)]
    exact = [i for i in matches if labels[i].lower() == text]
    if len(matches) == 1 or len(exact) == 1:
        return Choice(legal[(exact or matches)[0]])
    if not matches:
        return Choice(None, f"No legal action starts with '{shown(entry.strip())}'. " + COMMANDS)
    keys = [str(n) for n in numbers] if keys is None else list(keys)
    listed = ", ".join(f"{keys[i]}: {labels[i]}" for i in matches[:6])
    more = f" and {len(matches) - 6} more" if len(matches) > 6 else ""
    return Choice(
        None, f"'{shown(entry.strip())}' fits {len(matches)} actions ({listed}{more}); type more or a number."
    )


def bid_numbers(state: State, legal: Sequence[int]) -> tuple[list[int], str] | None:
    """At a petition bid, each choice's number is the Jade it bids (or, entering a bid of
    several base-101 digits, the digit): the numbers and their word. None elsewhere."""
    if not legal or any(A.family_of(a).start != A.BID for a in legal):
        return None
    plain = describe_choice(state, legal[0]).kind is TargetKind.BID
    return [a - A.BID for a in legal], "bid" if plain else "digit"


# The decisions whose choices are counts: each is listed by its count ("3. 3 Laborers and 1
# Convict", "2. Build 2 blocks", "5. Draw 5 favor cards, keep 2"), so typing the natural number
# picks it. The word is the one a bad entry's reply names ("There is no count 7").
_COUNTED = {
    Decision.ASSIGN_LABORERS: "count of Laborers",
    Decision.RECRUIT_COUNT: "count",
    Decision.BUY_BLOCKS_COUNT: "count",
    Decision.BUILD_COUNT: "count",
    Decision.DRAW_FAVORS_COUNT: "count",
}
GOVERNOR_KEY = "g"  # the Governor block's cells are listed as g1, g2, ...


@dataclass(frozen=True)
class Menu:
    """How a decision's legal choices are listed: the decision's own choices first, each by its
    number (a count or a bid by its amount, anything else 1, 2, ...), then the cells the Governor
    block may be placed on, by ``g`` and a number, so that neither is ever listed under the
    other's numbers."""

    legal: list[int]  # the decision's own choices, in the listed order
    numbers: list[int]  # the number each is listed by
    what: str  # the word for a number in a reply ("bid", "count", "action")
    governor: list[int]  # the Governor block's cells (actions), listed as g1, g2, ...


def menu(state: State, legal: Sequence[int]) -> Menu:
    """The listing of ``legal`` (the legal actions of the player to move in ``state``)."""
    governor = [a for a in legal if A.family_of(a).start == A.GOVERNOR]
    own = [a for a in legal if A.family_of(a).start != A.GOVERNOR] or governor
    if own is governor:  # only Governor cells to choose from: they are the decision
        governor = []
    bids = bid_numbers(state, own)
    if bids is not None:
        return Menu(own, bids[0], bids[1], governor)
    what = _COUNTED.get(state.decision)
    if what is not None:
        values = [describe_choice(state, a).value for a in own]
        if len(set(values)) == len(values):
            return Menu(own, values, what, governor)
    return Menu(own, list(range(1, len(own) + 1)), "action", governor)


def parse_governor(entry: str, cells: Sequence[int]) -> Choice | None:
    """``g3`` (or ``G 3``): the third Governor cell listed; None when the entry is not of that
    form, a ``Choice`` saying why when there is no such cell."""
    text = entry.strip().lower()
    if not text.startswith(GOVERNOR_KEY) or not text[1:].strip().isdigit():
        return None
    number = read_number(text[1:].strip(), 1, len(cells), "Governor cell")
    if number is None:  # pragma: no cover - digits always read as a number
        return None
    if not cells:
        return Choice(None, "The Governor block cannot be placed now.")
    if number.value is None:
        span = f"{GOVERNOR_KEY}1-{GOVERNOR_KEY}{len(cells)}" if len(cells) > 1 else f"{GOVERNOR_KEY}1"
        return Choice(None, f"There is no Governor cell {shown(text[1:].strip())}: choose {span}.")
    return Choice(cells[number.value - 1])


def default_record_path(seed: int) -> Path:
    stamp = dt.datetime.now().strftime("%Y%m%d-%H%M%S")
    return Path(f"island-fortress-{stamp}-seed{seed}.json")


def play_game(
    agents: Sequence[str],
    seat: int = 0,
    seed: int | None = None,
    window: bool = False,
    save_path: str | Path | None = None,
    rules: dict[str, Any] | None = None,
    ask: Callable[[str], str] = input,
    console: Console | None = None,
) -> GameRecord | None:
    """Play one game: the person at ``seat``, ``agents`` (specs) at the other seats in order.
    Returns the saved record, or None when the person quits. Before the game starts, a
    ``save_path`` that cannot be written (or already exists) is a ``RecordError``."""
    from rich.console import Console

    from island_fortress_env.env.aec import env as make_env

    console = console or Console(highlight=False, soft_wrap=True)
    n = len(agents) + 1
    if not 0 <= seat < n:
        raise ValueError(f"--seat must be 0..{n - 1} for {n} players, not {seat}")
    seed = deal_seed() if seed is None else seed  # 64 bits from the OS: nobody else can deal it
    if save_path is None:  # a dated name here; save_unique finds a free one at the end
        check_output_file(default_record_path(seed), "game record", overwrite=True)
    else:
        check_output_file(save_path, "--save")
    rules = {"num_players": n, **(rules or {})}
    env = make_env(**rules)
    env.reset(seed=seed)
    raw = env.unwrapped
    specs = list(agents)
    specs.insert(seat, HUMAN)
    # each agent's seed from the seed's own stream of agents' seeds; a remote bot gets the OS's
    players = {p: make_agent(spec, agent_seed(seed, 0, p)) for p, spec in enumerate(specs) if p != seat}
    names = tuple(specs)
    # Printed without markup, control characters escaped: a name is shown as it is.
    shown_names = tuple(YOU if p == seat else printable(name) for p, name in enumerate(specs))
    say(console, f"Island Fortress, {n} players, seed {seed}. You are {seat_name((), seat)}.")
    for p in range(n):
        say(console, f"  {seat_name(shown_names, p)}")
    say(console, COMMANDS)
    table_window = None
    if window:
        from island_fortress_env.views.picture import TableWindow

        table_window = TableWindow(f"Island Fortress - you are {seat_name((), seat)}")
    narrator = Narrator(shown_names, raw.game_state.game.deck.cards)
    told = 0

    def tell(mover: int | None = None, move: str = "") -> None:
        """Say the public events since the last call; a move that caused none is said itself."""
        nonlocal told
        log = raw.game_state.log
        lines = narrator.lines(log[told:])
        told = len(log)
        if not lines and move:
            lines = [Line(f"{seat_name(shown_names, mover or 0)}: {move}.", Tone.PLAIN, mover)]
        for line in lines:
            if line.tone is Tone.ROUND and line.text.startswith("Round") and "begins" in line.text:
                say(console)
            say(console, line.text, style="bold" if line.tone in _BOLD else None)

    taken: list[int] = []
    try:
        tell()  # the deal and the first income
        for name in env.agent_iter():
            obs, _reward, termination, truncation, _info = env.last()
            if termination or truncation:
                env.step(None)
                continue
            state = raw.game_state
            p = raw.agent_name_mapping[name]
            if p == seat:
                if table_window is not None:
                    from island_fortress_env.views.picture import render_rgb

                    table_window.show(render_rgb(state, seat, names))
                action = _ask_person(state, seat, shown_names, ask, console)
                move = ""  # the person knows what they chose
            else:
                action = int(players[p].act(obs["observation"], obs["action_mask"], state))
                move = public_move_text(state, action)
            taken.append(action)
            env.step(action)
            if raw.game_state.is_terminal():
                say(console, "\n" + render_text(raw.game_state, 0, shown_names))
            tell(p, move)
    except QuitGame:
        say(console, stopped_words(len(taken), seed, agents, seat, rules, save_path))
        return None
    finally:
        if table_window is not None:
            table_window.close()
        env.close()
    final = raw.game_state
    rules = {"num_players": n, **raw.game.config.variants}  # the game's own options, nothing else
    record = GameRecord.from_game(rules, seed, taken, names, final)
    path = printable(save_game(record, save_path, console))
    say(console, f"Game saved as {path} (replay it with: island-fortress replay {path})")
    return record


def stopped_words(
    decisions: int,
    seed: int,
    agents: Sequence[str],
    seat: int,
    rules: dict[str, Any],
    save_path: str | Path | None,
) -> str:
    """What ``quit`` says: nothing is saved, why, and the command that deals this game again."""
    where = f"at {printable(str(save_path))}" if save_path is not None else "under a dated name here"
    options = "".join(
        f" --rule {key}={str(value).lower() if isinstance(value, bool) else value}"
        for key, value in rules.items()
        if key != "num_players"
    )
    command = f"island-fortress play --agents {' '.join(agents)} --seat {seat} --seed {seed}{options}"
    if save_path is not None:
        command += f" --save {save_path}"
    return printable(
        f"Game stopped; nothing saved. A game record holds a finished game: it is saved {where} "
        f"when the game ends. To play this deal again ({decisions} decisions were made): {command}"
    )


def save_game(record: GameRecord, save_path: str | Path | None, console: Console) -> Path:
    """Save a finished game at ``save_path`` (default: a dated name here). Should that fail now
    (the folder went away, the disk is full, the name was taken meanwhile), save it in the
    temporary directory instead; should that fail too, print the record and raise."""
    try:
        if save_path is None:
            return save_unique(record, default_record_path(record.seed))
        return save(record, save_path)
    except RecordError as exc:
        say(console, f"{printable(exc)}; saving it in the temporary directory instead.")
    try:
        return save_unique(record, Path(tempfile.gettempdir()) / default_record_path(record.seed).name)
    except RecordError:
        say(console, "The game record follows; keep it as a .json file:")
        say(console, dumps(record), soft_wrap=True)
        raise


def _ask_person(
    state: State, seat: int, names: Sequence[str], ask: Callable[[str], str], console: Console
) -> int:
    """Show the board and the legal choices; ask until the entry names one. A decision with
    one legal choice is taken and shown, not asked."""
    legal = list(state.legal_actions())
    choices = [describe_choice(state, a) for a in legal]
    who = seat_name(names, seat)
    if len(legal) == 1:
        cost = f" ({choices[0].cost})" if choices[0].cost else ""
        say(console, f"{who}: the only choice, {choices[0].label}{cost}.")
        return legal[0]
    listing = menu(state, legal)
    by_action = dict(zip(legal, choices, strict=True))
    own = [by_action[a] for a in listing.legal]
    labels = [c.label for c in own]
    numbers, what = listing.numbers, listing.what
    width = max(3, *(len(str(n)) for n in numbers))

    def show_board() -> None:
        say(console, "\n" + render_text(state, 0, names))
        say(console, private_view(state, seat))

    def show_actions() -> None:
        say(console, f"\n{who} to decide: {state.decision_name()}")
        if what != "action":
            contiguous = numbers == list(range(numbers[0], numbers[0] + len(numbers)))
            span = f"{numbers[0]}-{numbers[-1]}" if contiguous else ", ".join(map(str, numbers))
            say(console, f"  (type the {what}: {span})")
        for number, choice in zip(numbers, own, strict=True):
            cost = f": {choice.cost}" if choice.cost else ""
            say(console, f"  {number:{width}d}. {choice.label}{cost}")
        if listing.governor:
            say(console, f"  Or place the Governor block (free; type {GOVERNOR_KEY} and its number):")
            for i, action in enumerate(listing.governor, 1):
                say(console, f"  {GOVERNOR_KEY + str(i):>{width}}. {by_action[action].label}")
        refused = refusals(state)
        if refused:
            say(console, "  Not possible now:")
            for r in refused:
                say(console, f"       {r.label}: {r.reason}")

    show_board()
    show_actions()
    while True:
        try:
            entry = ask(PROMPT)
        except EOFError:
            raise QuitGame from None
        word = entry.strip().lower()
        if word == "quit":
            raise QuitGame
        if word == "board":
            show_board()
            show_actions()
            continue
        if word in ("help", "?"):
            say(console, rules_text())
            continue
        choice = parse_governor(entry, listing.governor)
        if choice is None:
            gov_keys = [f"{GOVERNOR_KEY}{i}" for i in range(1, len(listing.governor) + 1)]
            choice = parse_choice(
                entry,
                listing.legal + listing.governor,
                labels + [by_action[a].label for a in listing.governor],
                [*numbers, *[None] * len(listing.governor)],
                what,
                [*(str(n) for n in numbers), *gov_keys],
            )
        if choice.action is not None:
            return choice.action
        say(console, choice.message, style="bold")


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.description = "Play one seat against agents; the game is saved as a game record at the end."
    parser.add_argument("--players", type=int, default=None, choices=PLAYER_COUNTS, help="default 3")
    parser.add_argument(
        "--agents", nargs="+", default=None, type=agent_spec, metavar="AGENT",
        help=f"the other players in seat order: {AGENTS_HELP} (default: heuristic)",
    )  # fmt: skip
    parser.add_argument(
        "--seat", type=non_negative_int, default=0, help="your seat (0 plays first; default 0)"
    )
    parser.add_argument("--seed", type=seed_value, default=None, help="env.reset seed (default: random)")
    parser.add_argument("--window", action="store_true", help="also show the table as a picture in a window")
    parser.add_argument(
        "--save", default=None, type=record_file, metavar="FILE",
        help="game record path, a new file (default: a dated name here)",
    )  # fmt: skip
    parser.add_argument(
        "--rule", action="append", default=[], type=rule_option, metavar="KEY=VALUE",
        help="rules option / variant, e.g. --rule no_replace=true (repeatable)",
    )  # fmt: skip


def run(args: argparse.Namespace) -> int:
    players = args.players if args.players is not None else (len(args.agents) + 1 if args.agents else 3)
    agents = args.agents or ["heuristic"] * (players - 1)
    if len(agents) != players - 1:
        raise UsageError(
            f"--agents names the {players - 1} other players of a {players}-player game, got {len(agents)}"
        )
    if not 2 <= players <= 4:
        raise UsageError(f"give 1-3 --agents (a 2-4 player game), got {len(agents)}")
    if args.seat >= players:
        raise UsageError(f"--seat must be 0..{players - 1} in a {players}-player game, got {args.seat}")
    play_game(
        agents, seat=args.seat, seed=args.seed, window=args.window, save_path=args.save, rules=dict(args.rule)
    )
    return 0
