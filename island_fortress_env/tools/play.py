"""``island-fortress play``: a person plays one seat against agents in the terminal.

The board is the public text view (or, with ``--window``, the picture in a window, as the
person's seat sees it); the person also sees their own favor hand, the cards they are choosing
from and their own sealed bid, and nothing else that is hidden: other players' kept cards and
sealed bids are reported as "keeps a favor card" / "places a sealed bid" until revealed.
Legal actions are listed in words and chosen by number or by typing the start of their text;
a compound move (Build Wall's count, cells and Workers, for instance) is asked step by step,
since each step is a decision of its own. A bad entry is explained and asked again, with
nothing changed (``tools/entries.py`` reads numbers). At the end the game is saved as a game
record (``island-fortress replay``): the path is checked before the game starts, and a record
that cannot be written there after all is saved in the temporary directory instead (or, failing
that, printed), so a finished game is never lost.
"""

from __future__ import annotations

import datetime as dt
import secrets
import tempfile
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from rich.console import Console

from island_fortress_env.engine import actions as A
from island_fortress_env.engine import visibility
from island_fortress_env.env.records import (
    GameRecord,
    RecordError,
    check_output_file,
    dumps,
    printable,
    save,
    save_unique,
)
from island_fortress_env.players import make_agent
from island_fortress_env.tools.entries import read_number, shown
from island_fortress_env.views.text import PLAYER_MARKS, render_text

if TYPE_CHECKING:
    from island_fortress_env.engine import State

HUMAN = "human"
PROMPT = "your choice> "
COMMANDS = (
    "Type a number or the start of an action; 'board' shows the table again, 'help' this line, 'quit' stops."
)
_HIDDEN_FROM_OTHERS = {A.KEEP_FAVOR: "keeps a favor card", A.BID: "places a sealed bid"}


class QuitGame(Exception):
    """The person stopped the game (``quit`` or end of input)."""


def public_action_text(state: State, action: int) -> str:
    """What the other seats may learn of ``action``: kept cards and sealed bids stay hidden."""
    hidden = _HIDDEN_FROM_OTHERS.get(A.family_of(action).start)
    return hidden or state.action_to_string(action)


def private_view(state: State, seat: int) -> str:
    """The seat's own hidden things: favor hand, the cards it is choosing from, its sealed bid."""
    cards = state.game.deck.cards
    lines = []
    hand = [cards[i].describe() for i in visibility.favor_hand(state, seat, seat) or ()]
    lines.append("Your favor hand: " + ("; ".join(hand) if hand else "empty"))
    drawn = [cards[i].describe() for i in visibility.choosing_from(state, seat, seat) or ()]
    if drawn:
        lines.append("You are choosing from: " + "; ".join(drawn))
    bid = visibility.sealed_bid(state, seat, seat)
    if bid is not None:
        lines.append(f"Your sealed bid: {bid} Jade")
    return "\n".join(lines)


@dataclass(frozen=True)
class Choice:
    action: int | None  # None: the entry chose nothing
    message: str = ""  # why, for a bad entry


def parse_choice(entry: str, legal: Sequence[int], labels: Sequence[str]) -> Choice:
    """A number (1-based, as listed) or the start of one action's text, case-insensitive."""
    text = entry.strip().lower()
    if not text:
        return Choice(None, "Nothing entered. " + COMMANDS)
    number = read_number(text, 1, len(legal), "action")
    if number is not None:
        return Choice(None, number.message) if number.value is None else Choice(legal[number.value - 1])
    matches = [i for i, label in enumerate(labels) if label.lower().startswith(text)]
    exact = [i for i in matches if labels[i].lower() == text]
    if len(matches) == 1 or len(exact) == 1:
        return Choice(legal[(exact or matches)[0]])
    if not matches:
        return Choice(None, f"No legal action starts with '{shown(entry.strip())}'. " + COMMANDS)
    listed = ", ".join(f"{i + 1}: {labels[i]}" for i in matches[:6])
    more = f" and {len(matches) - 6} more" if len(matches) > 6 else ""
    return Choice(
        None, f"'{shown(entry.strip())}' fits {len(matches)} actions ({listed}{more}); type more or a number."
    )


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
    from island_fortress_env.env.aec import env as make_env

    console = console or Console(highlight=False, soft_wrap=True)
    n = len(agents) + 1
    if not 0 <= seat < n:
        raise ValueError(f"--seat must be 0..{n - 1} for {n} players, not {seat}")
    seed = secrets.randbelow(2**31) if seed is None else seed
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
    players = {p: make_agent(spec, seed + p) for p, spec in enumerate(specs) if p != seat}
    names = tuple(specs)
    shown_names = [printable(name) for name in specs]  # printed without markup: text as it is
    console.print(f"Island Fortress, {n} players, seed {seed}. You are {PLAYER_MARKS[seat]} (seat {seat}).")
    for p in range(n):
        console.print(f"  {PLAYER_MARKS[p]}: {'you' if p == seat else shown_names[p]}", markup=False)
    console.print(COMMANDS)
    table_window = None
    if window:
        from island_fortress_env.views.picture import TableWindow

        table_window = TableWindow(f"Island Fortress - you are {PLAYER_MARKS[seat]}")
    taken: list[int] = []
    seen_round = revealed_round = 0
    try:
        for name in env.agent_iter():
            obs, _reward, termination, truncation, _info = env.last()
            if termination or truncation:
                env.step(None)
                continue
            state = raw.game_state
            if state.round != seen_round:
                seen_round = state.round
                console.print(f"\n[bold]===== Round {state.round} =====[/bold]")
            bidding = visibility.bids_sealed(state)
            if state.last_bids is not None and not bidding and revealed_round != state.round:
                revealed_round = state.round
                bids = ", ".join(f"{PLAYER_MARKS[q]} {b}" for q, b in enumerate(state.last_bids))
                console.print(f"Bids revealed: {bids}; {PLAYER_MARKS[state.holder]} won the petition.")
            p = raw.agent_name_mapping[name]
            if p == seat:
                if table_window is not None:
                    from island_fortress_env.views.picture import render_rgb

                    table_window.show(render_rgb(state, seat, names))
                action = _ask_person(state, seat, ask, console)
            else:
                action = int(players[p].act(obs["observation"], obs["action_mask"], state))
                line = f"{PLAYER_MARKS[p]} ({shown_names[p]}): {public_action_text(state, action)}"
                console.print(line, markup=False)
            taken.append(action)
            env.step(action)
    except QuitGame:
        console.print("Game stopped; nothing saved.")
        return None
    finally:
        if table_window is not None:
            table_window.close()
        env.close()
    final = raw.game_state
    console.print("\n" + render_text(final), markup=False)
    console.print("\nFinal scores:")
    for p in range(n):
        won = "  winner" if p in final.winners else ""
        name = "you" if p == seat else shown_names[p]
        console.print(f"  {PLAYER_MARKS[p]} {name:<12} {final.score[p]:4d}{won}", markup=False)
    rules = {"num_players": n, **raw.game.config.variants}  # the game's own options, nothing else
    record = GameRecord.from_game(rules, seed, taken, names, final)
    path = printable(save_game(record, save_path, console))
    console.print(f"Game saved as {path} (replay it with: island-fortress replay {path})", markup=False)
    return record


def save_game(record: GameRecord, save_path: str | Path | None, console: Console) -> Path:
    """Save a finished game at ``save_path`` (default: a dated name here). Should that fail now
    (the folder went away, the disk is full, the name was taken meanwhile), save it in the
    temporary directory instead; should that fail too, print the record and raise."""
    try:
        if save_path is None:
            return save_unique(record, default_record_path(record.seed))
        return save(record, save_path)
    except RecordError as exc:
        console.print(f"{printable(exc)}; saving it in the temporary directory instead.", markup=False)
    try:
        return save_unique(record, Path(tempfile.gettempdir()) / default_record_path(record.seed).name)
    except RecordError:
        console.print("The game record follows; keep it as a .json file:", markup=False)
        console.print(dumps(record), markup=False, soft_wrap=True)
        raise


def _ask_person(state: State, seat: int, ask: Callable[[str], str], console: Console) -> int:
    """Show the board and the legal actions; ask until the entry names one."""
    legal = list(state.legal_actions())
    labels = [state.action_to_string(a) for a in legal]

    def show_board() -> None:
        console.print("\n" + render_text(state), markup=False)
        console.print(private_view(state, seat), markup=False)

    def show_actions() -> None:
        console.print(f"\n{PLAYER_MARKS[seat]} to decide: {state.decision_name()}")
        for i, label in enumerate(labels, start=1):
            console.print(f"  {i:3d}. {label}", markup=False)

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
            console.print(COMMANDS)
            continue
        choice = parse_choice(entry, legal, labels)
        if choice.action is not None:
            return choice.action
        console.print(choice.message, style="bold", markup=False)
