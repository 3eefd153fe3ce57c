"""The small games of ``island-fortress calibrate`` (``research/calibrate.py``): an OpenSpiel game
small enough to solve, the fixed target policies, and what OpenSpiel computes on them exactly.

* ``load_small_game``: a two-player zero-sum OpenSpiel game with information-state tensors
  (``kuhn_poker``, ``leduc_poker``, ``goofspiel(num_cards=4,imp_info=True,points_order=descending)``;
  a simultaneous-move game is played turn by turn, ``pyspiel.convert_to_turn_based``), refused
  when its tree has more than ``MAX_HISTORIES`` histories.
* ``TargetSpec`` / ``target_policy``: the frozen target, a ``TabularPolicy``: ``uniform`` (every
  legal action alike), ``cfr:N`` (CFR's average policy after N iterations) or ``random:S`` (each
  information state's legal actions weighted by a flat Dirichlet draw of the named stream
  ``calibration-target`` of seed S).
* ``exact_figures``: each seat's exact best-response value against the target
  (``best_response.BestResponsePolicy``) and OpenSpiel's ``exploitability`` (their mean, in a
  zero-sum game); ``seat_values``: a policy's exact value in each seat against the target
  (``expected_game_score.policy_value``), with no sampling.
* ``InformationStates``: every information state of the game, its tensor and legal actions, in
  ``TabularPolicy``'s order: what a network is read on to become a tabular policy.

pyspiel (the ``openspiel`` extra) is imported when a game is loaded, never at import: the package
imports without it.
"""

from __future__ import annotations

import contextlib
import importlib
import os
import re
import sys
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

import numpy as np

from island_fortress_env.players.seeds import Stream, generator

# The measure's defaults (``island-fortress calibrate``): a game, a target, budgets and seeds.
DEFAULT_GAME = "leduc_poker"
DEFAULT_TARGET = "uniform"
DEFAULT_BUDGETS = (20_000, 100_000)
DEFAULT_SEEDS = 3
MAX_HISTORIES = 200_000  # the largest game tree solved exactly here (leduc_poker has 9,457)
TARGET_HELP = (
    "uniform, cfr:N (CFR's average policy after N iterations) or random:S (a random tabular "
    "policy drawn from seed S)"
)


class CalibrationError(ValueError):
    """A game, target or setting that ``island-fortress calibrate`` cannot use."""


@dataclass(frozen=True)
class TargetSpec:
    """A target policy: ``kind`` ``uniform``, ``cfr`` (``number`` iterations) or ``random``
    (``number`` the seed)."""

    kind: str
    number: int = 0

    @property
    def label(self) -> str:
        return self.kind if self.kind == "uniform" else f"{self.kind}:{self.number}"


def parse_target(text: str) -> TargetSpec:
    """``uniform``, ``cfr:N`` (N >= 1) or ``random:S`` (S >= 0); else a ``CalibrationError``."""
    if text == "uniform":
        return TargetSpec("uniform")
    match = re.fullmatch(r"(cfr|random):(\d{1,9})", text)
    if match is None or (match[1] == "cfr" and int(match[2]) < 1):
        raise CalibrationError(f"target {text!r}: expected {TARGET_HELP}")
    return TargetSpec(match[1], int(match[2]))


def import_pyspiel() -> Any:
    """pyspiel itself (an ``ImportError`` naming it when the ``openspiel`` extra is missing)."""
    return importlib.import_module("pyspiel")


@dataclass(frozen=True)
class SmallGame:
    """A loaded game: ``game`` (a turn-based ``pyspiel.Game``), its tensor and action widths."""

    spec: str  # the game string as given
    game: Any
    obs_size: int  # the information-state tensor's length
    num_actions: int  # distinct actions
    histories: int  # nodes of its tree, terminal and chance nodes included
    utility_scale: float  # the largest absolute return: rewards are divided by it


def load_small_game(spec: str) -> SmallGame:
    """The game ``spec`` (an OpenSpiel game string), checked: two players, zero-sum,
    information-state tensors, at most ``MAX_HISTORIES`` histories; else a ``CalibrationError``."""
    pyspiel = import_pyspiel()
    try:
        with quiet_stderr():  # OpenSpiel writes its refusal there too, every game's name in it
            game = pyspiel.load_game(spec)
    except pyspiel.SpielError as exc:
        first = str(exc).removeprefix("OpenSpiel exception: ").splitlines()[0]
        raise CalibrationError(f"--game {spec!r}: {first}") from None
    kind = game.get_type()
    if game.num_players() != 2:
        raise CalibrationError(f"--game {spec!r}: has {game.num_players()} players, not 2")
    if kind.utility != pyspiel.GameType.Utility.ZERO_SUM:
        raise CalibrationError(f"--game {spec!r}: is not zero-sum ({kind.utility.name})")
    if not kind.provides_information_state_tensor:
        raise CalibrationError(f"--game {spec!r}: has no information-state tensor to learn from")
    if kind.dynamics == pyspiel.GameType.Dynamics.SIMULTANEOUS:
        game = pyspiel.convert_to_turn_based(game)
    histories = count_histories(game.new_initial_state(), MAX_HISTORIES)
    if histories > MAX_HISTORIES:
        raise CalibrationError(
            f"--game {spec!r}: its tree has more than {MAX_HISTORIES:,} histories, too many to solve "
            "exactly here"
        )
    (obs_size,) = game.information_state_tensor_shape()
    scale = max(abs(game.min_utility()), abs(game.max_utility()))
    return SmallGame(spec, game, int(obs_size), int(game.num_distinct_actions()), histories, float(scale))


@contextlib.contextmanager
def quiet_stderr() -> Iterator[None]:
    """File descriptor 2 sent to the null device inside the block (C++ writes to it directly)."""
    sys.stderr.flush()
    saved = os.dup(2)
    try:
        with open(os.devnull, "w") as null:
            os.dup2(null.fileno(), 2)
        yield
    finally:
        os.dup2(saved, 2)
        os.close(saved)


def count_histories(root: Any, cap: int) -> int:
    """The nodes of the tree under ``root``, counted up to ``cap + 1`` (then the count stops)."""
    count, stack = 0, [root]
    while stack and count <= cap:
        state = stack.pop()
        count += 1
        if state.is_terminal():
            continue
        moves = (
            [outcome for outcome, _ in state.chance_outcomes()]
            if state.is_chance_node()
            else state.legal_actions()
        )
        stack.extend(state.child(move) for move in moves)
    return count


@dataclass(frozen=True)
class InformationStates:
    """Every information state of a game in ``TabularPolicy``'s order: its tensor, its legal
    actions and the seat to move there."""

    obs: np.ndarray  # float32 (states, obs_size)
    masks: np.ndarray  # bool (states, num_actions)
    seats: np.ndarray  # int64 (states,)
    keys: tuple[str, ...]  # the information-state strings


def tabular(game: Any) -> Any:
    """A uniform ``TabularPolicy`` of ``game``: the table every policy here is written into."""
    from open_spiel.python import policy

    return policy.TabularPolicy(game)


def information_states(small: SmallGame) -> InformationStates:
    table = tabular(small.game)
    states = table.states
    obs = np.array([s.information_state_tensor() for s in states], np.float32).reshape(len(states), -1)
    seats = np.array([s.current_player() for s in states], np.int64)
    keys = tuple(s.information_state_string() for s in states)
    return InformationStates(obs, table.legal_actions_mask.astype(bool), seats, keys)


def policy_from(small: SmallGame, probabilities: np.ndarray) -> Any:
    """A ``TabularPolicy`` whose rows are ``probabilities`` (states x actions, in
    ``information_states``' order; each row legal-only and summing to 1)."""
    table = tabular(small.game)
    if probabilities.shape != table.action_probability_array.shape:
        raise ValueError(
            f"probabilities of shape {probabilities.shape}, expected {table.action_probability_array.shape}"
        )
    table.action_probability_array[:] = probabilities
    return table


def probabilities_of(small: SmallGame, target: Any) -> np.ndarray:
    """A tabular policy's rows in ``information_states``' order (by information-state key)."""
    table = tabular(small.game)
    return np.array([target.policy_for_key(key) for key in table.state_lookup], np.float64)


def target_policy(small: SmallGame, spec: TargetSpec) -> Any:
    """The ``TabularPolicy`` that ``spec`` names on ``small``'s game."""
    if spec.kind == "uniform":
        return tabular(small.game)
    if spec.kind == "cfr":
        from open_spiel.python.algorithms import cfr

        solver = cfr.CFRSolver(small.game)
        for _ in range(spec.number):
            solver.evaluate_and_update_policy()
        return policy_from(small, probabilities_of(small, solver.average_policy()))
    if spec.kind == "random":
        mask = tabular(small.game).legal_actions_mask.astype(bool)
        weights = generator(spec.number, Stream.CALIBRATION_TARGET).exponential(size=mask.shape) * mask
        return policy_from(small, weights / weights.sum(axis=1, keepdims=True))
    raise CalibrationError(f"unknown target kind {spec.kind!r}")


@dataclass(frozen=True)
class ExactFigures:
    """What OpenSpiel computes exactly against the target, in the game's units."""

    best_response: tuple[float, float]  # each seat's exact best-response value
    exploitability: float  # OpenSpiel's exploitability(game, target): their mean (zero-sum)
    target_values: tuple[float, float]  # the target's own value in each seat against itself


def exact_figures(small: SmallGame, target: Any) -> ExactFigures:
    from open_spiel.python.algorithms import best_response, exploitability

    root = small.game.new_initial_state()
    values = [
        float(best_response.BestResponsePolicy(small.game, seat, target).value(root)) for seat in (0, 1)
    ]
    return ExactFigures(
        best_response=(values[0], values[1]),
        exploitability=float(exploitability.exploitability(small.game, target)),
        target_values=_pair(seat_values(small, target, target)),
    )


def seat_values(small: SmallGame, learned: Any, target: Any) -> tuple[float, float]:
    """The exact value of ``learned`` (a ``TabularPolicy``) in each seat with ``target`` in the
    other: seat s plays the rows of seat s's information states from ``learned``, every other row
    from ``target``."""
    from open_spiel.python.algorithms import expected_game_score

    states = information_states(small)
    mine, theirs = probabilities_of(small, learned), probabilities_of(small, target)
    values = []
    for seat in (0, 1):
        joint = policy_from(small, np.where((states.seats == seat)[:, None], mine, theirs))
        root = small.game.new_initial_state()
        values.append(float(expected_game_score.policy_value(root, [joint, joint])[seat]))
    return _pair(values)


def _pair(values: Any) -> tuple[float, float]:
    return (float(values[0]), float(values[1]))
