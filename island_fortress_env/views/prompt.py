"""The text face of the game: what one seat may know, in words, for a reader of text (a language
model, a harness such as TextArena), its legal moves as numbered strings, and a reply parser.

``observation_text(state, seat)`` is the seat's information set in words: the stage and the
decision pending (``narrate.pending_text``), the wall as drawn by ``views.text.render_wall``, the
supplies, every player's open resources, the seat's own favor hand and the cards it is choosing
from, its own sealed bid, and what happened since the seat's last move (the narrator's sentences,
``narrate.Narrator``), cut oldest first to keep the text within ``TEXT_BUDGET``. ``prompt(state,
seat)`` adds, for the seat to move, the legal moves numbered from 1 (``legal_moves``: their words
are ``narrate.action_words``, their costs ``narrate.describe_choice``), then how to answer.
``parse_reply`` maps an answer ("[3]", "3", a move's words, "#<action id>") to a legal action or
raises ``ReplyError``.

Every word comes from the engine and the narrator (``tests/test_narrate_no_rules.py`` reads this
module too), and what a seat may see is asked of ``engine.visibility``, the one place that rule is
written: another seat's favor hand and choice and its sealed bid appear as counts and "sealed",
the deck as its size (``tests/test_prompt.py`` redeals everything a seat cannot see and checks the
text is byte for byte the same). ``state`` is an engine ``State`` or a core ``CoreState``.
"""

from __future__ import annotations

import re
import sys
from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from island_fortress_env.engine import actions as A
from island_fortress_env.engine import events as ev
from island_fortress_env.engine import visibility
from island_fortress_env.engine.decisions import Decision
from island_fortress_env.engine.files import printable
from island_fortress_env.views.narrate import (
    MARKS,
    ROLE_NAMES,
    Narrator,
    action_words,
    and_list,
    card_text,
    cell_label,
    describe_choice,
    final_score_lines,
    pending_text,
    plural,
    seat_name,
)
from island_fortress_env.views.text import render_wall

if TYPE_CHECKING:
    from island_fortress_env.engine.favors import FavorCard

__all__ = [
    "CHOOSE",
    "TEXT_BUDGET",
    "Move",
    "ReplyError",
    "legal_moves",
    "listed_numbers",
    "observation_text",
    "parse_reply",
    "prompt",
]

YOU = "you"
CHOOSE = "Your move. Choose one:"  # the line above the numbered moves
# Layout, not a rule: the most characters a seat's text takes when what happened since its last
# move has to be cut to fit (the other sections are never cut).
TEXT_BUDGET = 3990
# What happens to a player rather than what it chooses: a seat's last move is its last event of
# another kind (its role played, cards kept, bid sealed, block placed, a pass...).
_HAPPENS_TO = frozenset(
    {
        ev.EventKind.INCOME,
        ev.EventKind.SCORE,
        ev.EventKind.INCENTIVE,
        ev.EventKind.ROW_COMPLETE,
        ev.EventKind.GOVERNOR_LOST,
        ev.EventKind.WALL_COMPLETE,
    }
)
_NUMBER = re.compile(r"\[\s*(?P<bracketed>\d+)\s*\]|(?P<bare>\d+)")
_ACTION_ID = re.compile(r"#\s*(?P<id>\d+)")
_LISTED = re.compile(r"^\[(?P<number>\d+)\] ", re.MULTILINE)
_ZERO = str(0)  # the leading zeros of a number given


class ReplyError(ValueError):
    """A reply that names no legal move; the message says why and how to answer."""


@dataclass(frozen=True)
class Move:
    """A legal move as shown to the seat to move: its number in the list (from 1), its action id
    and its words (``narrate.action_words``)."""

    number: int
    action: int
    text: str


def legal_moves(state: Any) -> list[Move]:
    """The legal actions of the player to move, numbered from 1 in ``legal_actions()`` order
    (none once the game is over). Each move's words are ``narrate.action_words``; where two moves
    would read the same (a buyback with Jade or with a chip), each has its cost added."""
    if state.is_terminal():
        return []
    actions = [int(a) for a in state.legal_actions()]
    words = [printable(action_words(state, a)) for a in actions]  # as shown, so as answered
    folded = [_normal(w) for w in words]
    for i, a in enumerate(actions):
        if folded.count(folded[i]) > 1:
            cost = describe_choice(state, a).cost
            words[i] = printable(f"{words[i]} ({cost or f'#{a}'})")
    return [Move(k, a, w) for k, (a, w) in enumerate(zip(actions, words, strict=True), start=1)]


def _names(state: Any, seat: int) -> tuple[str, ...]:
    return tuple(YOU if p == seat else "" for p in range(state.n))


def _check_seat(state: Any, seat: Any) -> int:
    if isinstance(seat, bool) or not isinstance(seat, int) or not 0 <= seat < state.n:
        raise ValueError(f"seat must be an integer from {0} to {state.n - 1}, not {seat!r}")
    return seat


def _cards(state: Any, ids: Sequence[int]) -> list[FavorCard]:
    deck = state.game.deck.cards
    return [deck[i] for i in ids]


def _card_line(card: FavorCard) -> str:
    return f"{card_text(card)}, pattern {'/'.join(card.pattern)}"


def _roles(mask: int) -> str:
    if mask == A.ALL_ROLES:
        return "all"
    held = [name for c, name in enumerate(ROLE_NAMES) if mask >> c & 1]
    return and_list(held) if held else "none"


def _player_line(state: Any, p: int, seat: int, names: Sequence[str]) -> str:
    """One player's open resources, and its favor cards and bid as ``seat`` may see them (the
    counts that are 0 of a Treasure, a Buyback Chip, an income or petition bonus left out)."""
    parts = [
        f"{state.score[p]} VP",
        plural(state.jade[p], "Jade"),
        plural(state.laborers[p], "Laborer"),
        plural(state.convicts[p], "Convict"),
        f"{plural(state.blocks[p], 'Wall Block')} (stockpile {state.stock_blocks[p]})",
        f"{state.blocks_built(p)} on the wall",
    ]
    if state.treasure[p]:
        parts.append(plural(state.treasure[p], "Treasure"))
    if state.chips[p]:
        parts.append(plural(state.chips[p], "Buyback Chip"))
    if state.income_bonus[p]:
        parts.append(f"income +{state.income_bonus[p]}")
    if state.petition_bonus[p]:
        parts.append(f"petition bonus +{state.petition_bonus[p]}")
    parts.append(f"Taskmaster in region {state.region[p] + 1}")
    parts.append(f"roles in hand: {_roles(state.roles_hand[p])}")
    if state.roles_hand[p] | state.roles_table[p] != A.ALL_ROLES:  # else the others are on the table
        parts.append(f"played: {_roles(state.roles_table[p])}")
    parts.append(plural(state.favor_hand[p].bit_count(), "favor card"))
    mask = state.favor_played[p]
    played = _cards(state, [i for i in range(mask.bit_length()) if mask >> i & 1])
    if played:
        parts.append("favor cards played: " + ", ".join(card.name for card in played))
    if p == state.holder:
        parts.append("Governor marker" + (" and block in hand" if state.gov_in_hand else ""))
    if visibility.bids_sealed(state):
        bid = visibility.sealed_bid(state, p, seat)
        if bid is not None:
            parts.append(f"sealed bid {plural(bid, 'Jade')}")
        elif visibility.has_sealed_bid(state, p):
            parts.append("bid sealed")
    elif state.last_bids is not None:
        parts.append(f"last bid {plural(state.last_bids[p], 'Jade')}")
    return f"{seat_name(names, p)}: " + ", ".join(parts) + "."


def _own_cards(state: Any, seat: int) -> list[str]:
    """The seat's own favor hand, the cards it is choosing from and the bid it is entering."""
    lines = []
    hand = visibility.favor_hand(state, seat, seat) or ()
    if hand:
        lines.append("Your favor hand:")
        lines += [f"  {_card_line(card)}" for card in _cards(state, hand)]
    choosing = visibility.choosing_from(state, seat, seat) or ()
    if choosing:
        lines.append("The favor cards you are choosing from:")
        lines += [f"  {_card_line(card)}" for card in _cards(state, choosing)]
    for p in range(state.n):
        count = state.drawn[p].bit_count()
        if p != seat and count:
            who = seat_name(_names(state, seat), p)
            lines.append(f"{who} is choosing from {plural(count, 'favor card')}.")
    entering = visibility.own_bid(state, seat)
    if entering and seat == state.current and not visibility.has_sealed_bid(state, seat):
        lines.append(f"Your bid so far: {plural(entering, 'Jade')}.")
    return lines


def _last_move(log: Sequence[ev.Event], seat: int) -> int:
    """The index in ``log`` of ``seat``'s last move (-1 before its first)."""
    for i in range(len(log) - 1, -1, -1):
        event = log[i]
        if event.kind not in _HAPPENS_TO and getattr(event, "player", None) == seat:
            return i
    return -1


def _recent(state: Any, seat: int, names: Sequence[str], room: int) -> list[str]:
    """The narrator's sentences for the events since ``seat``'s last move, the newest that fit
    in ``room`` characters (the left-out oldest ones counted)."""
    log = state.log
    start = _last_move(log, seat) + 1
    narrator = Narrator(names, state.game.deck.cards)
    for event in log[:start]:
        narrator.note(event)
    told = [printable(f"  {line.text}") for line in narrator.lines(log[start:])]
    if not told:
        return []
    head = "What happened since your last move:" if start else "What happened so far:"
    after = [0] * (len(told) + 1)  # after[k]: the characters of told[k:], a newline each
    for k in range(len(told) - 1, -1, -1):
        after[k] = after[k + 1] + len(told[k]) + 1
    cut = 0
    while cut < len(told) and len(head) + len(_left_out(cut)) + after[cut] > room:
        cut += 1
    head += _left_out(cut)
    return [head, *told[cut:]]


def _left_out(count: int) -> str:
    return f" ({plural(count, 'earlier sentence')} left out)" if count else ""


def _supply(state: Any) -> str:
    if state.unlimited:
        return "unlimited"
    return (
        f"{plural(state.sup_laborers, 'Laborer')}, {plural(state.sup_convicts, 'Convict')}, "
        f"{plural(state.sup_reinf, 'Reinforcement')}, {plural(state.sup_chips, 'Buyback Chip')}"
    )


def observation_text(state: Any, seat: int) -> str:
    """What ``seat`` may know of ``state`` in words, without the numbered moves: the stage and the
    pending decision, the wall, the supplies, every player's open resources, the seat's own cards
    and bid, and what happened since its last move (as much of it as keeps the text within
    ``TEXT_BUDGET`` characters)."""
    return _observation(state, _check_seat(state, seat), TEXT_BUDGET)


def _observation(state: Any, seat: int, budget: int) -> str:
    names = _names(state, seat)
    stage = "the deal" if state.round == 0 else f"round {state.round}"
    lines = [f"Island Fortress, {plural(state.n, 'player')}. You are {MARKS[seat]}. Now: {stage}."]
    lines.append(f"Pending: {pending_text(state, names)}")
    if not state.is_terminal() and state.decision in (Decision.KEEP_DEALT_FAVORS, Decision.KEEP_DRAWN_FAVORS):
        lines.append(f"Favor cards still to keep: {state.keep_left}.")
    lines += ["", "The wall (top level first):", *render_wall(state)]
    lines.append(
        f"  ({MARKS[0]}-{MARKS[state.n - 1]}: blocks, lower case if reinforced; G: Governor block; "
        f".: empty; cells are named as {cell_label(0)})"
    )
    lines.append(
        f"Governor blocks left: {state.gov_stock}. Favor deck: {plural(len(state.deck), 'card')}. "
        f"Supply: {_supply(state)}."
    )
    lines += ["", "Players:"]
    lines += [f"  {_player_line(state, p, seat, names)}" for p in range(state.n)]
    own = _own_cards(state, seat)
    if own:
        lines += ["", *own]
    end = ["", *final_score_lines(state, names)] if state.is_terminal() else []
    lines = [printable(line.rstrip()) for line in lines + end]
    room = budget - sum(len(line) + 1 for line in lines) - 1  # less the blank line before
    recent = _recent(state, seat, names, room)
    if recent:
        at = len(lines) - len(end)
        lines[at:at] = ["", *recent]
    return "\n".join(lines)


def _move_line(state: Any, move: Move) -> str:
    cost = describe_choice(state, move.action).cost
    shown = f" ({cost})" if cost and not move.text.endswith(f"({cost})") else ""
    return f"[{move.number}] {move.text}{shown}"


def prompt(state: Any, seat: int) -> str:
    """``observation_text`` and, when ``seat`` is to move, the numbered legal moves and how to
    answer; for another seat, whose move it is. What happened since the seat's last move is cut,
    oldest first, to keep the whole within ``TEXT_BUDGET`` characters."""
    seat = _check_seat(state, seat)
    if state.is_terminal():
        tail = ["The game is over: there is no move to make."]
    elif state.current_player() != seat:
        tail = [f"It is {MARKS[state.current_player()]}'s move, not yours."]
    else:
        moves = legal_moves(state)
        tail = [CHOOSE]
        tail += [printable(_move_line(state, m)) for m in moves]
        tail.append(_how_to_answer(moves))
    tail_text = "\n".join(tail)
    return _observation(state, seat, TEXT_BUDGET - len(tail_text) - len("\n\n")) + "\n\n" + tail_text


def _how_to_answer(moves: Sequence[Move]) -> str:
    last = moves[-1].number
    if last == moves[0].number:
        return f"Answer with [{last}]."
    return f"Answer with the number of one move in brackets, from [{moves[0].number}] to [{last}]."


def _normal(text: str) -> str:
    return " ".join(text.split()).casefold()


def parse_reply(state: Any, reply: str) -> int:
    """The legal action ``reply`` names: "[k]" or "k" (the move's number), the move's words as
    listed (case and spaces aside), or "#<action id>". Anything else raises ``ReplyError``."""
    if not isinstance(reply, str):
        raise ReplyError(f"a reply is text (a str), not {type(reply)}")
    if state.is_terminal():
        raise ReplyError("the game is over: there is no move to make")
    return parse_among(legal_moves(state), reply)


def parse_among(moves: Sequence[Move], reply: str) -> int:
    """The action of the move among ``moves`` (as ``legal_moves`` lists them) that ``reply``
    names, read as ``parse_reply`` reads it: for a harness that holds the listed moves, not the
    state. ``ReplyError`` if it names none."""
    if not isinstance(reply, str):
        raise ReplyError(f"a reply is text (a str), not {type(reply)}")
    if not moves:
        raise ReplyError("there is no move to make")
    said = reply.strip()
    how = (
        f"answer with a move's number in brackets from [{moves[0].number}] to [{moves[-1].number}], "
        "or its words as listed"
    )
    number = _NUMBER.fullmatch(said)
    if number:
        digits = (number["bracketed"] or number["bare"]).lstrip(_ZERO)
        for move in moves:
            if str(move.number) == digits:
                return move.action
        raise ReplyError(f"there is no move [{digits or _ZERO:.20}]: {how}")
    action = _ACTION_ID.fullmatch(said)
    if action:
        digits = action["id"].lstrip(_ZERO) or _ZERO
        for move in moves:
            if str(move.action) == digits:
                return move.action
        raise ReplyError(f"action #{digits:.20} is not legal now: {how}")
    words = _normal(said)
    named = [m for m in moves if _normal(m.text) == words]
    if len(named) == 1:
        return named[0].action
    if named:
        numbers = and_list([f"[{m.number}]" for m in named])
        raise ReplyError(f"the words name {plural(len(named), 'move')} ({numbers}): answer with the number")
    shown = printable(f"{said!r:.80}")
    raise ReplyError(f"the reply {shown} names no legal move: {how}")


def listed_numbers(text: str) -> list[int]:
    """The move numbers listed in ``text`` under its last ``CHOOSE`` line (a prompt, or a
    harness's history of them): what an agent that reads only the text may answer with."""
    at = text.rfind(CHOOSE)
    if at < 0:
        return []
    longest = len(str(sys.maxsize))  # a longer number is no move of a prompt's
    return [int(m["number"]) for m in _LISTED.finditer(text, at) if len(m["number"]) < longest]
