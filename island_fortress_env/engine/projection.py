"""The score of a game as if it ended now: the engine's own final scoring (docs/RULES.md E19),
played on a copy of the state, for a table to show what the end bonuses would give each seat.

``final_scoring_now(state)`` takes an engine ``State`` or the C++ core's ``CoreState`` (their public
fields read alike) and returns an ``EndNow``: the events the end of the game would log now, every
seat's total and the winners, without the Favor Trade-in (it depends on choices still to come).
Final scoring reads no hidden field, so what it returns is public. The state itself is never changed.
"""

from __future__ import annotations

from dataclasses import dataclass

from . import events as ev
from .fields import StateFields
from .protocol import StateProtocol
from .state import State

_NOT_COPIED = ("_log", "_legal")


@dataclass(frozen=True)
class EndNow:
    """The final scoring if the game ended now: its events, each seat's total, the winners."""

    events: list[ev.Event]
    score: tuple[int, ...]
    winners: tuple[int, ...]


def final_scoring_now(state: StateProtocol) -> EndNow:
    """The final scoring if the game ended now (module doc)."""
    copy: State = object.__new__(State)
    for name in StateFields.__slots__:
        if name not in _NOT_COPIED:
            value = getattr(state, name)
            setattr(copy, name, list(value) if isinstance(value, list) else value)
    copy._log = []
    copy._legal = None
    copy._final_scoring()
    return EndNow(ev.typed(copy._log), tuple(copy.score), tuple(copy.winners))
