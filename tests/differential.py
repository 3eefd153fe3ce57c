"""The C++ core against the Python engine over the whole accepted configuration range.

A sweep draws game configurations across everything ``GameConfig`` and the core accept (2-4
players, every variant, Quicker Play counts from none up to the core's bound of 10**15 with and
without ``unlimited_components``, the shipped deck and decks at the deck rules' limits) and plays
each game on both backends with the same actions, chosen by a policy that seeks out the rare
decisions (Taskmaster B's repeats of every role, Replace, favor plays and trade-ins, buybacks,
two-block builds, bids entered by digits) between heuristic and random moves. At every step it
compares the legal actions, every field a reader reads, the event log, every seat's observation
bytes, the action mask, the role choice's refusals and their words, the heuristic's choice on both
backends and the message of an illegal action; at every bid and every 25th step the redeal of the
unseen for every seat. ``compare_vector`` steps the batch (``vector``) against engine copies.

Run it by hand for a longer sweep (``python tests/differential.py --games 2000``); the test suite
runs a fixed corpus and a short sweep (``tests/test_core_sweep.py``).
"""

from __future__ import annotations

import argparse
import atexit
import json
import random
import shutil
import sys
import tempfile
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

from island_fortress_env import core
from island_fortress_env.baseline.heuristic import HeuristicAgent
from island_fortress_env.engine import Game, tables
from island_fortress_env.engine import actions as A
from island_fortress_env.engine.decisions import Decision
from island_fortress_env.engine.favors import DECK_REWARD_LIMITS, REWARD_LIMITS
from island_fortress_env.engine.state import IllegalActionError, State
from island_fortress_env.engine.visibility import redeal_unseen
from island_fortress_env.env.global_state import encode_global_state
from island_fortress_env.env.observation import ObservationEncoder, action_mask
from island_fortress_env.views.narrate_refusals import refusals

# Every field of a state that readers (observation, global state, agents, views) read.
FIELDS = (
    "n", "rng", "unlimited", "jade", "laborers", "convicts", "blocks", "stock_blocks", "chips",
    "treasure", "score", "income_bonus", "petition_bonus", "region", "roles_hand", "roles_table",
    "favor_hand", "favor_played", "drawn", "turns_taken", "bids", "last_bids", "occ", "own",
    "gov_bits", "reinf", "sup_jade", "sup_treasure", "sup_chips", "sup_reinf", "sup_laborers",
    "sup_convicts", "gov_stock", "gov_box", "gov_in_hand", "prison_jade", "prison_convicts", "deck",
    "favor_discard", "round", "decision", "current", "holder", "turn_index", "actions_this_turn",
    "buyback_used", "last_card", "in_action", "keep_left", "op", "build_left", "build_need",
    "worker_need", "favor_card", "order", "order_pos", "wall_completer", "winners", "bid_digits_left",
)  # fmt: skip

# The largest count the core holds (core.state.MAX_CORE_COUNT) and the counts around the places
# where a fixed-size quantity meets an unbounded one (a bid's digits, a build's Workers).
COUNTS = (0, 1, 2, 3, 7, 16, 17, 100, 101, 250_000, 2**30 - 1, 2**30, 10**9, 2**31, 10**15)

_PATTERNS = (
    ["X"], ["XX"], ["X", "X"], ["XXX"], ["X.", ".X"], [".X", "X."], ["XX", "XX"], ["X..", "XXX"],
    ["X.X", "XXX"], ["XXX", "X.X", "XXX"], ["X", "X", "X"], [".X.", "XXX"],
)  # fmt: skip


def configs() -> Any:
    """A Hypothesis strategy of configurations drawn as ``draw_config`` draws them (its decks
    in a folder made once per process)."""
    from hypothesis import strategies as st

    return st.integers(min_value=0, max_value=2**64 - 1).map(
        lambda seed: draw_config(random.Random(seed), _deck_dir())
    )


_DECK_DIRS: list[Path] = []


def _deck_dir() -> Path:
    if not _DECK_DIRS:
        _DECK_DIRS.append(Path(tempfile.mkdtemp(prefix="differential-decks-")))
        atexit.register(shutil.rmtree, _DECK_DIRS[0], ignore_errors=True)
    return _DECK_DIRS[0]


class Parting(AssertionError):
    """The backends disagree: which game, at which step, about what."""


def write_limit_deck(path: Path, cards: int, seed: int) -> Path:
    """A deck of ``cards`` cards whose rewards reach the deck rules' limits: every card the most
    one card may give of its reward kinds, the persistent bonuses up to the deck's totals."""
    pick = random.Random(seed)
    totals = dict.fromkeys(DECK_REWARD_LIMITS, 0)
    out = []
    for i in range(cards):
        kinds = pick.sample(sorted(REWARD_LIMITS), pick.randint(1, 3))
        rewards = {}
        for kind in kinds:
            amount = REWARD_LIMITS[kind]
            if kind in totals:
                amount = min(amount, DECK_REWARD_LIMITS[kind] - totals[kind])
                totals[kind] += amount
            if amount > 0:
                rewards[kind] = amount
        rewards = rewards or {"vp": REWARD_LIMITS["vp"]}
        out.append({"name": f"limit {i}", "pattern": pick.choice(_PATTERNS), "rewards": rewards})
    path.write_text(json.dumps({"name": f"limit deck {seed}", "cards": out}), "utf-8")
    return path


def draw_config(pick: random.Random, deck_dir: Path) -> dict[str, Any]:
    """A configuration drawn across the accepted range (``GameConfig`` and the core's bound)."""
    n = pick.choice(tables.PLAYER_COUNTS)
    cfg: dict[str, Any] = {"num_players": n}
    if pick.random() < 0.3:
        cfg["no_replace"] = True
    if pick.random() < 0.3 and tables.REGIONS_BY_PLAYERS[n] + 1 <= n:
        cfg["extra_region"] = True
    for name in ("extra_jade", "start_laborers", "start_convicts"):
        if pick.random() < 0.5:
            cfg[name] = pick.choice(COUNTS) if pick.random() < 0.8 else pick.randint(0, 10**15)
    if pick.random() < 0.4:
        cfg["start_blocks"] = pick.randint(0, tables.COMPONENTS["blocks_per_player"])
    if pick.random() < 0.4:
        cfg["first_round_incentive"] = pick.choice(("wall_block", "buyback_chip", "treasure"))
    if pick.random() < 0.5:
        cfg["favor_trade_in"] = True
    if pick.random() < 0.55:
        cfg["unlimited_components"] = True
    if pick.random() < 0.25:
        cards = pick.choice((5 * n, 24, tables.MAX_FAVOR_CARDS))  # the setup deals 5 to each
        deck_seed = pick.randrange(2**32)
        cfg["favor_deck"] = str(write_limit_deck(deck_dir / f"deck-{deck_seed}.json", cards, deck_seed))
    return cfg


def _rare(action: int, decision: Decision) -> bool:
    """Actions a heuristic or uniform player seldom takes, which the policy seeks out."""
    if A.REPEAT <= action < A.REPEAT + A.NUM_REPEATABLE:
        return True
    if action in (A.ROLE + A.OP_REPLACE, A.ROLE + A.OP_PLAY_FAVOR, A.ROLE + A.OP_REMOVE_REINFORCEMENT):
        return True
    if action in (A.BUILD_COUNT + 1, A.TRADE_JADE, A.TRADE_CONVICT, A.BUYBACK_TASKMASTER):
        return True
    return A.BUYBACK_CHIP <= action < A.KEEP_FAVOR or decision == Decision.PLAY_FAVOR_CARD


@dataclass
class Chooser:
    """Picks each move: a rare action where one is legal (half the time), else the heuristic's
    choice (checked equal on both backends) or a uniform one."""

    seed: int
    rare_share: float = 0.5
    heuristic_share: float = 0.5
    pick: random.Random = field(init=False)
    agents: list[HeuristicAgent] = field(init=False)
    core_agents: list[Any] = field(init=False)

    def __post_init__(self) -> None:
        from island_fortress_env.core.heuristic import CoreHeuristicAgent

        self.pick = random.Random(self.seed)
        self.agents = [HeuristicAgent(seed=self.seed * 4 + p) for p in range(tables.MAX_PLAYERS)]
        self.core_agents = [CoreHeuristicAgent(seed=self.seed * 4 + p) for p in range(tables.MAX_PLAYERS)]

    def choose(self, py: State, cs: Any) -> int:
        legal = py.legal_actions()
        rare = [a for a in legal if _rare(a, py.decision)]
        if rare and self.pick.random() < self.rare_share:
            return self.pick.choice(rare)
        if self.pick.random() < self.heuristic_share:
            p = py.current_player()
            expected = self.agents[p].act(None, action_mask(py), py)
            got = self.core_agents[p].act(None, None, cs)
            if got != expected:
                raise Parting(f"the heuristic chooses {got} on the core, {expected} on the engine")
            return expected
        return self.pick.choice(legal)


def _error(state: Any, action: int) -> str | None:
    try:
        state.clone().apply_action(action)
    except IllegalActionError as exc:
        return str(exc)
    return None


def compare_step(py: State, cs: Any, encoder: ObservationEncoder, pick: random.Random) -> None:
    """Everything a reader may read of the two states, compared; raises ``Parting``."""

    def same(what: str, got: Any, expected: Any) -> None:
        if got != expected:
            raise Parting(f"{what}: core {got!r:.300} != engine {expected!r:.300}")

    legal = py.legal_actions()
    same("legal actions", tuple(cs.legal_actions()), tuple(legal))
    same("player", cs.current_player(), py.current_player())
    for name in FIELDS:
        same(name, getattr(cs, name), getattr(py, name))
    same("log", cs.log, py.log)
    for seat in range(py.n):
        same(f"observation of seat {seat}", cs.encode(seat).tobytes(), encoder.encode(py, seat).tobytes())
    same("mask", cs.action_mask().tobytes(), action_mask(py).tobytes())
    same("global state", cs.global_state().tobytes(), encode_global_state(py, encoder).tobytes())
    same("returns", cs.returns(), py.returns())
    if py.is_terminal():
        return
    same("refusals", refusals(cs), refusals(py))
    offered = set(legal)
    illegal = [a for a in (pick.randrange(A.NUM_ACTIONS) for _ in range(6)) if a not in offered]
    for action in illegal[:2]:
        same(f"the refusal of {action}", _error(cs, action), _error(py, action))


def compare_redeals(py: State, cs: Any, seed: int) -> None:
    for seat in range(py.n):
        got, expected = redeal_unseen(cs, seat, seed), redeal_unseen(py, seat, seed)
        for name in FIELDS:
            if getattr(got, name) != getattr(expected, name):
                raise Parting(f"the redeal for seat {seat} differs in {name}")
        if tuple(got.legal_actions()) != tuple(expected.legal_actions()):
            raise Parting(f"the redeal for seat {seat} offers other actions")


@dataclass(frozen=True)
class GameReport:
    """One game played on both backends."""

    steps: int
    rare: int  # moves the policy took from the rare actions
    repeats: int  # Taskmaster B's repeats among all moves
    redeals: int


def compare_game(cfg: dict[str, Any], seed: int, max_steps: int = 3000) -> GameReport:
    """Plays ``cfg``'s game of ``seed`` on both backends; raises ``Parting`` (naming the game and
    step) at the first difference."""
    game = Game(**cfg)
    py = game.new_initial_state(seed)
    cs = core.Game(**cfg).new_initial_state(seed)
    encoder = ObservationEncoder(game)
    chooser = Chooser(seed)
    step = rare = repeats = redeals = 0
    try:
        while True:
            compare_step(py, cs, encoder, chooser.pick)
            if py.is_terminal() or step >= max_steps:
                break
            if py.decision == Decision.PETITION_BID or step % 25 == 0:
                compare_redeals(py, cs, seed ^ step)
                redeals += 1
            action = chooser.choose(py, cs)
            rare += _rare(action, py.decision)
            repeats += A.REPEAT <= action < A.REPEAT + A.NUM_REPEATABLE
            py.apply_action(action)
            cs.apply_action(action)
            step += 1
    except Parting as why:
        raise Parting(f"{cfg} seed {seed}, step {step}: {why}") from None
    return GameReport(step, rare, repeats, redeals)


def compare_vector(cfg: dict[str, Any], seed: int, games: int = 2, steps: int = 900) -> int:
    """Steps ``games`` games of the batch with the policy's moves against engine copies: the same
    players, observations, masks, rewards and game ends. Returns the games finished."""
    import island_fortress_env.vector as vector

    options = {k: v for k, v in cfg.items() if k != "num_players"}
    env = vector.make(games, num_players=cfg["num_players"], seed=seed, **options)
    env.reset()
    engine = [env.games[i].new_initial_state(env.game_seed(i)) for i in range(games)]
    encoders = [ObservationEncoder(g) for g in env.games]
    pick = random.Random(seed)
    finished = 0
    for step in range(steps):
        actions = np.zeros(games, dtype=np.int64)
        for i, py in enumerate(engine):
            where = f"{cfg} seed {seed}, game {i}, step {step}"
            if env.player[i] != py.current_player():
                raise Parting(f"{where}: the batch's player differs")
            if env.obs[i].tobytes() != encoders[i].encode(py, py.current_player()).tobytes():
                raise Parting(f"{where}: the batch's observation differs")
            if env.mask[i].view(np.int8).tobytes() != action_mask(py).tobytes():
                raise Parting(f"{where}: the batch's mask differs")
            legal = py.legal_actions()
            rare = [a for a in legal if _rare(a, py.decision)]
            actions[i] = pick.choice(rare if rare and pick.random() < 0.5 else legal)
        env.step(actions)
        for i, py in enumerate(engine):
            py.apply_action(int(actions[i]))
            if bool(env.done[i]) != py.is_terminal():
                raise Parting(f"{cfg} seed {seed}, game {i}, step {step}: the batch's game end differs")
            if env.done[i]:
                if env.rewards[i, : py.n].tobytes() != np.asarray(py.returns(), np.float32).tobytes():
                    raise Parting(f"{cfg} seed {seed}, game {i}: the batch's rewards differ")
                engine[i] = env.games[i].new_initial_state(env.game_seed(i))
                finished += 1
    return finished


def sweep(games: int, seed: int, deck_dir: Path, vector_every: int = 10) -> tuple[int, list[str]]:
    """``games`` configurations and seeds drawn from ``seed``; returns the steps compared and
    every parting found (empty when the backends agree everywhere)."""
    pick = random.Random(seed)
    steps, partings = 0, []
    for g in range(games):
        cfg = draw_config(pick, deck_dir)
        game_seed = pick.randrange(2**64)
        try:
            steps += compare_game(cfg, game_seed).steps
            if g % vector_every == 0:
                compare_vector(cfg, game_seed % 2**63)
        except Parting as why:
            partings.append(str(why))
    return steps, partings


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--games", type=int, default=2000, help="games to draw (default 2000)")
    parser.add_argument("--seed", type=int, default=0, help="the sweep's seed (default 0)")
    args = parser.parse_args(argv)
    if not core.available():
        parser.exit(2, f"the C++ core is not built ({core.build_error()})\n")
    with tempfile.TemporaryDirectory() as deck_dir:
        steps, partings = sweep(args.games, args.seed, Path(deck_dir))
    for line in partings:
        print(line)
    print(f"{args.games} games, {steps} steps compared, {len(partings)} partings")
    return 1 if partings else 0


if __name__ == "__main__":
    sys.exit(main())
