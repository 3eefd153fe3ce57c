"""The record of a finished game: what trainers and evaluations read off it, from its final state
and its event log.

``game_result(state, seed, length)`` is the reference for the batched core's record
(``vector.VectorEnv.final``, written in C++ as each game ends): the two are equal game for game
(tests/test_core_vector.py). It takes an engine ``State`` or a ``CoreState`` with its event log
(``core.replay`` keeps one), finished.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from . import scoring, tables
from .events import Bought, Build, Buyback, Event, Petition, Recruited, Role, Score
from .protocol import StateProtocol


@dataclass(frozen=True)
class GameResult:
    """A finished game; every tuple holds one entry per seat."""

    players: int  # the table size
    seed: int  # the seed it was dealt from
    length: int  # the decisions taken in it
    rounds: int  # the rounds played
    score: tuple[int, ...]  # final scores
    rank: tuple[int, ...]  # finishing position, 1 = winner (scoring.finishing_positions)
    win: tuple[float, ...]  # win share, 1/m for m tied winners (scoring.win_share)
    blocks_built: tuple[int, ...]  # blocks on the wall
    favors_played: tuple[int, ...]  # favor cards laid on the table
    jade_spent: tuple[int, ...]  # Jade paid to the supply (jade_spent)
    components: tuple[tuple[int, ...], ...]  # points by scoring.COMPONENTS, per seat


def points_by_component(log: Sequence[Event], num_players: int) -> list[list[int]]:
    """Each seat's points by component (in ``scoring.COMPONENTS`` order), from the Score events."""
    column = {name: i for i, name in enumerate(scoring.COMPONENTS)}
    out = [[0] * len(scoring.COMPONENTS) for _ in range(num_players)]
    for event in log:
        if isinstance(event, Score):
            out[event.player][column[scoring.SCORE_COMPONENTS[event.reason]]] += event.points
    return out


def jade_spent(log: Sequence[Event], num_players: int) -> list[int]:
    """The Jade each seat paid to the supply: its petition bid where it won, Recruit, Buy Blocks,
    a double build, a repeated role, a Taskmaster buyback."""
    spent = [0] * num_players
    for event in log:
        if isinstance(event, Petition):
            spent[event.winner] += event.bids[event.winner]
        elif isinstance(event, (Recruited, Bought, Build, Role)):
            spent[event.player] += event.cost
        elif isinstance(event, Buyback) and not event.chip:
            spent[event.player] += tables.TASKMASTER_BUYBACK_COST
    return spent


def game_result(state: StateProtocol, seed: int, length: int) -> GameResult:
    """The record of the finished game ``state``, dealt from ``seed`` and ``length`` decisions long
    (neither is kept in a state); ``ValueError`` if the game is not over."""
    if not state.is_terminal():
        raise ValueError("the game is not over: a result needs a finished game")
    n = state.n
    log = state.log
    blocks = [state.blocks_built(p) for p in range(n)]
    return GameResult(
        players=n,
        seed=seed,
        length=length,
        rounds=state.round,
        score=tuple(state.score),
        rank=tuple(scoring.finishing_positions(state.score, blocks, state.jade, state.treasure)),
        win=tuple(scoring.win_share(state.winners, p) for p in range(n)),
        blocks_built=tuple(blocks),
        favors_played=tuple(state.favor_played[p].bit_count() for p in range(n)),
        jade_spent=tuple(jade_spent(log, n)),
        components=tuple(map(tuple, points_by_component(log, n))),
    )
