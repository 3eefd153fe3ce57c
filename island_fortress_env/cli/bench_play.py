"""The benchmark's play loops and its timer (``tools/bench.py`` runs them).

* players: a ``play(i)`` per item that plays game ``i`` of its seed (random legal actions through
  the engine, the AEC loop, a batch of vector games, three heuristic agents, an OpenSpiel game)
  and returns the decisions it took;
* timing: ``measure_interleaved`` runs every item's repeats round-robin (so a shared machine's
  changing load hits all items alike) after one untimed warm-up game each; ``time_per_call``
  times one call on sampled states (``sample_states``), in µs.
"""

from __future__ import annotations

import functools
import gc
import random
import statistics
import time
from collections.abc import Callable, Sequence
from typing import Any

import numpy as np

from island_fortress_env.players.seeds import Stream, agent_seed, stream_seed

BATCH_GAMES = 256  # games per batch call
BATCH_STEPS = 10  # batch calls per timed "game" of the batch item
WARMUP_GAME = 1_000_000  # game index of the untimed warm-up game (deal_of(seed, index))


# ---------------------------------------------------------------------------- random play


def deal_of(seed: int, i: int) -> int:
    """The deal seed of game ``i`` of a benchmark seeded ``seed`` (``players.seeds``)."""
    return stream_seed(seed, Stream.BENCH_GAMES, i)


def choose_from_mask(rng: random.Random, mask: np.ndarray) -> int:
    """THE random choice of every AEC environment here: a uniform legal id from the mask."""
    legal = np.flatnonzero(mask)
    return int(legal[rng.randrange(len(legal))])


def choose_from_list(rng: random.Random, legal: Sequence[int]) -> int:
    """The same draw for APIs that hand out the legal ids (the engine, OpenSpiel)."""
    return legal[rng.randrange(len(legal))]


def engine_game_player(num_players: int, seed: int, backend: str = "python") -> Callable[[int], int]:
    """play(i) plays game ``deal_of(seed, i)`` on the bare game states of ``backend`` and returns its
    decision count."""
    from island_fortress_env.core import Game

    game = Game(num_players=num_players, backend=backend)
    rng = random.Random(seed)

    def play(i: int) -> int:
        state = game.new_initial_state(deal_of(seed, i))
        decisions = 0
        while not state.is_terminal():
            state.apply_action(choose_from_list(rng, state.legal_actions()))
            decisions += 1
        return decisions

    return play


def aec_game_player(env: Any, seed: int) -> Callable[[int], int]:
    """play(i): one game of any PettingZoo AEC env with action masks (the standard loop)."""
    rng = random.Random(seed)

    def play(i: int) -> int:
        env.reset(seed=deal_of(seed, i))
        decisions = 0
        for _agent in env.agent_iter():
            observation, _reward, termination, truncation, _info = env.last()
            if termination or truncation:
                action = None
            else:
                action = choose_from_mask(rng, observation["action_mask"])
                decisions += 1
            env.step(action)
        return decisions

    return play


def batch_player(threads: int, seed: int, games: int = BATCH_GAMES) -> Callable[[int], int]:
    """play(i): ``BATCH_STEPS`` calls of a batch of ``games`` three-player core games, a random
    legal action in every game; returns the decisions made (games x calls)."""
    from island_fortress_env import vector

    env = vector.make(games, num_players=3, seed=seed, threads=threads)
    env.reset()

    def play(i: int) -> int:
        for _ in range(BATCH_STEPS):
            env.step(env.random_actions())
        return BATCH_STEPS * games

    return play


def heuristic_game_player(num_players: int, seed: int, backend: str) -> Callable[[int], int]:
    """play(i): game ``deal_of(seed, i)`` with a ``HeuristicAgent`` at every seat, each given its seat's
    observation-free call ``act(None, mask, state)``; returns the decision count."""
    from island_fortress_env.baseline.heuristic import HeuristicAgent
    from island_fortress_env.core import Game
    from island_fortress_env.env.observation import action_mask

    game = Game(num_players=num_players, backend=backend)

    def play(i: int) -> int:
        state = game.new_initial_state(deal_of(seed, i))
        agents = [HeuristicAgent(seed=agent_seed(seed, i, p)) for p in range(num_players)]
        decisions = 0
        while not state.is_terminal():
            agent = agents[state.current_player()]
            state.apply_action(agent.act(None, action_mask(state), state))
            decisions += 1
        return decisions

    return play


def openspiel_game_player(game: Any, seed: int) -> Callable[[int], int]:
    """play(i): one OpenSpiel game, the observation tensor and legal actions every step."""
    rng = random.Random(seed)

    def play(i: int) -> int:
        state = game.new_initial_state()
        decisions = 0
        while not state.is_terminal():
            if state.is_chance_node():
                outcomes = state.chance_outcomes()
                state.apply_action(outcomes[rng.randrange(len(outcomes))][0])
                continue
            state.observation_tensor(state.current_player())
            state.apply_action(choose_from_list(rng, state.legal_actions()))
            decisions += 1
        return decisions

    return play


# ---------------------------------------------------------------------------- timing


def _timed_run(play: Callable[[int], int], budget: float, first: int) -> dict:
    """Whole games (at least one) until ``budget`` seconds have passed; the wall time and the
    process's CPU time (every thread's) they took."""
    clock = time.perf_counter
    games = steps = 0
    start, cpu_start = clock(), time.process_time()
    while True:
        steps += play(first + games)
        games += 1
        elapsed = clock() - start
        if elapsed >= budget:
            cpu = max(time.process_time() - cpu_start, 1e-9)
            return {"seconds": elapsed, "cpu_seconds": cpu, "games": games, "steps": steps}


def summarize_runs(runs: list[dict]) -> dict:
    """Medians over the runs. ``steps_per_cpu_s`` divides by the CPU time the process got instead
    of the wall time: on a machine shared with other work it says what an idle machine would give
    (one thread's worth per CPU-second), while the ratios between items of one run stay the fair
    comparison."""
    total_games = sum(r["games"] for r in runs)
    return {
        "steps_per_s": statistics.median(r["steps"] / r["seconds"] for r in runs),
        "games_per_s": statistics.median(r["games"] / r["seconds"] for r in runs),
        "steps_per_cpu_s": statistics.median(r["steps"] / r["cpu_seconds"] for r in runs),
        "steps_per_game": sum(r["steps"] for r in runs) / total_games,
        "games": total_games,
        "runs": runs,
    }


def measure_interleaved(
    plays: dict[str, Callable[[int], int]],
    seconds: float,
    repeats: int,
    tolerant: Sequence[str] = (),
    log: Callable[[str], None] | None = None,
) -> dict[str, dict]:
    """Throughput of every play function, round-robin: repeat r runs each item once (for
    ``seconds / repeats``) before repeat r + 1 starts, so a change in the load of a shared
    machine hits all items alike and the ratios between them stay fair. Medians of the
    repeats. An exception in a ``tolerant`` item (an anchor) is recorded, not raised."""
    results: dict[str, dict] = {}
    live = dict(plays)

    def attempt(name: str, fn: Callable[[], Any]) -> Any:
        try:
            return fn()
        except Exception as err:
            if name not in tolerant:
                raise
            results[name] = {"status": "error", "error": f"{type(err).__name__}: {err}"}
            del live[name]
            return None

    for name, play in list(live.items()):
        attempt(name, functools.partial(play, WARMUP_GAME))  # imports, caches, first calls: untimed
    runs: dict[str, list[dict]] = {name: [] for name in live}
    budget = seconds / repeats
    for r in range(repeats):
        if log is not None:
            log(f"throughput, repeat {r + 1}/{repeats}: {', '.join(live)}")
        for name, play in list(live.items()):
            gc.collect()
            first = sum(run["games"] for run in runs[name])
            run = attempt(name, functools.partial(_timed_run, play, budget, first))
            if run is not None:
                runs[name].append(run)
    for name in live:
        results[name] = summarize_runs(runs[name])
    return results


def time_per_call(fn: Callable[[Any], Any], items: Sequence[Any], seconds: float, repeats: int) -> dict:
    """timeit-style: call ``fn`` on every item, again and again for ``seconds / repeats``;
    µs per call, median (and best) of the repeats."""
    clock = time.perf_counter
    budget = seconds / repeats
    per_call = []
    for item in items[:8]:
        fn(item)  # warm-up
    gc.collect()
    for _ in range(repeats):
        calls = 0
        start = clock()
        while True:
            for item in items:
                fn(item)
            calls += len(items)
            elapsed = clock() - start
            if elapsed >= budget:
                break
        per_call.append(elapsed / calls * 1e6)
    return {"us": statistics.median(per_call), "best_us": min(per_call), "calls": calls, "runs_us": per_call}


def sample_states(num_players: int, seed: int, games: int, per_game: int, backend: str = "python") -> list:
    """Non-terminal states spread evenly over ``games`` random games (clones, legal cached)."""
    from island_fortress_env.core import Game

    game = Game(num_players=num_players, backend=backend)
    rng = random.Random(seed)
    samples = []
    for g in range(games):
        state = game.new_initial_state(stream_seed(seed, Stream.BENCH_POSITIONS, g))
        history = []
        while not state.is_terminal():
            history.append(state.clone())
            state.apply_action(choose_from_list(rng, state.legal_actions()))
        step = max(1, len(history) // per_game)
        samples.extend(history[step // 2 :: step][:per_game])
    for state in samples:
        state.legal_actions()
    return samples
