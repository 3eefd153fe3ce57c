"""Both backends over the whole accepted configuration range (``tests/differential.py``).

Huge Quicker Play counts once hid a difference: the core offered Build Wall (and Taskmaster B's
repeat of it) with no empty supported cell in the region, and the first block of two where no
second could follow, as soon as a player held 2**30 Workers (docs/RULES.md E6). The rule itself is
tested here on both backends, six games that once parted are replayed step by step, and a short
sweep draws configurations across the range; ``python tests/differential.py --games 2000`` runs a
longer one.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from differential import compare_game, compare_step, compare_vector, sweep, write_limit_deck

from island_fortress_env import core
from island_fortress_env.baseline.heuristic import HeuristicAgent
from island_fortress_env.engine import Game
from island_fortress_env.engine import actions as A
from island_fortress_env.engine.decisions import Decision
from island_fortress_env.engine.refusals import Reason, refusal
from island_fortress_env.env.observation import ObservationEncoder, action_mask

pytestmark = pytest.mark.skipif(
    not core.available(), reason=f"the C++ core is not built ({core.build_error()})"
)

HUGE = {"unlimited_components": True, "start_laborers": 10**15, "extra_jade": 5, "start_blocks": 4}


def _at_role_choice(options: dict[str, Any], seed: int = 3) -> tuple[Any, Any]:
    """The same game on both backends at the first role choice with the Builder in hand."""
    py = Game(**options).new_initial_state(seed)
    cs = core.Game(**options).new_initial_state(seed)
    while not (py.decision == Decision.CHOOSE_ROLE_ACTION and A.ROLE + A.OP_BUILD in py.legal_actions()):
        action = py.legal_actions()[0]
        py.apply_action(action)
        cs.apply_action(action)
    return py, cs


def _fill_region(state: Any, keep: int = 0) -> Any:
    """A copy of ``state`` whose mover's region is filled with Governor blocks but for its
    ``keep`` highest cells (no supply is spent on them)."""
    geo = state.game.geometry
    mask = geo.region_mask[state.region[state.current_player()]]
    bits = [b for b in range(mask.bit_length()) if mask >> b & 1]
    for bit in bits[: len(bits) - keep] if keep else bits:
        state = state.with_block(geo.bit_cell[bit], state.current_player(), governor=True)
    return state


@pytest.mark.parametrize(
    "options", [{"num_players": 2, **HUGE}, {"num_players": 3, **HUGE, "start_convicts": 10**15}]
)
def test_build_needs_a_cell_however_many_workers_there_are(options: dict[str, Any]) -> None:
    """E6: with every cell of the region built, Build Wall is not offered, not even with 10**15
    Workers, on either backend, and Taskmaster B's repeat of it neither."""
    for state in (_fill_region(s) for s in _at_role_choice({**options, "start_blocks": 4})):
        assert state.laborers[state.current_player()] >= 10**15
        assert A.ROLE + A.OP_BUILD not in state.legal_actions()
        assert A.REPEAT + A.OP_BUILD not in state.legal_actions()
        assert refusal(state, A.ROLE + A.OP_BUILD).reason is Reason.NO_BUILDABLE_CELL


def test_two_blocks_need_two_cells_however_many_workers_there_are() -> None:
    """E6: with one cell left in the region, Build Wall offers one block and never two."""
    options = {"num_players": 2, **HUGE}
    py, cs = (_fill_region(s, keep=1) for s in _at_role_choice(options))
    encoder = ObservationEncoder(py.game)
    import random

    for state in (py, cs):
        assert A.ROLE + A.OP_BUILD in state.legal_actions()
    for state in (py, cs):
        state = state.clone()
        state.apply_action(A.ROLE + A.OP_BUILD)
        assert state.decision == Decision.BUILD_COUNT
        counts = [a for a in state.legal_actions() if a in A.family_of(A.BUILD_COUNT)]
        assert counts == [A.BUILD_COUNT]  # one block; two need two cells
    compare_step(py, cs, encoder, random.Random(0))


# Games that parted before the fix (the core listed Build Wall or its repeat, 147 or 159, where the
# engine did not): each is played by the heuristic alone (one agent seeded with the game's seed) on
# both backends; ``deck`` is a 36-card deck at the deck limits (``write_limit_deck``).
PARTED: tuple[tuple[dict[str, Any], int], ...] = (
    (
        {"num_players": 4, "extra_region": True, "extra_jade": 10**9, "start_laborers": 10**15,
         "start_convicts": 10**9, "favor_trade_in": True, "unlimited_components": True},
        42687,
    ),
    ({"num_players": 2, "extra_jade": 101, "start_laborers": 10**15, "start_blocks": 9, "deck": 1,
      "unlimited_components": True}, 8),
    ({"num_players": 3, "no_replace": True, "start_convicts": 10**15, "first_round_incentive": "buyback_chip",
      "favor_trade_in": True, "deck": 2, "unlimited_components": True}, 1),
    ({"num_players": 3, "extra_region": True, "extra_jade": 88, "start_convicts": 10**15, "start_blocks": 9,
      "favor_trade_in": True, "unlimited_components": True}, 1),
    ({"num_players": 2, "start_convicts": 10**15, "start_blocks": 18, "deck": 3,
      "unlimited_components": True}, 8),
    ({"num_players": 3, "no_replace": True, "start_laborers": 10**15, "start_blocks": 13,
      "unlimited_components": True}, 1),
)  # fmt: skip


def _options(cfg: dict[str, Any], tmp_path: Path) -> dict[str, Any]:
    options = dict(cfg)
    if "deck" in options:
        deck = options.pop("deck")
        options["favor_deck"] = str(write_limit_deck(tmp_path / f"deck{deck}.json", 36, deck))
    return options


@pytest.mark.parametrize("cfg,seed", PARTED, ids=[f"game{i}" for i in range(len(PARTED))])
def test_games_that_once_parted_agree_at_every_step(cfg: dict[str, Any], seed: int, tmp_path: Path) -> None:
    options = _options(cfg, tmp_path)
    py = Game(**options).new_initial_state(seed)
    cs = core.Game(**options).new_initial_state(seed)
    encoder = ObservationEncoder(py.game)
    agent = HeuristicAgent(seed=seed)
    import random

    pick = random.Random(seed)
    steps = 0
    while not py.is_terminal():
        compare_step(py, cs, encoder, pick)
        action = agent.act(None, action_mask(py), py)
        py.apply_action(action)
        cs.apply_action(action)
        steps += 1
    compare_step(py, cs, encoder, pick)
    assert steps > 100


@pytest.mark.parametrize("chunk", range(6))
def test_a_sweep_over_the_configuration_range_finds_no_difference(chunk: int, tmp_path: Path) -> None:
    steps, partings = sweep(25, seed=1000 + chunk, deck_dir=tmp_path, vector_every=5)
    assert partings == []
    assert steps > 25 * 150


def test_the_sweep_reaches_the_rare_decisions(tmp_path: Path) -> None:
    """The policy plays Taskmaster B's repeats, and the batch finishes games of huge counts."""
    options = _options(PARTED[0][0], tmp_path)
    report = compare_game(options, 5)
    assert report.repeats > 5 and report.rare > 30 and report.redeals > 10
    assert compare_vector({"num_players": 3, **HUGE}, 4, games=2, steps=1200) >= 1
