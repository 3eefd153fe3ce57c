"""Performance benchmark: both backends of the game and reference games, side by side.

    island-fortress bench                      # ~4 min: 3 s per item, median of 3 repeats
    island-fortress bench --quick --no-anchors
    island-fortress bench --profile 3          # cProfile of 3-player AEC play

Everything is measured in one process with one random-play loop (plus one fresh subprocess
per memory figure), on each backend (``--backends``: the C++ core and the Python engine):

* engine: ``core.Game(backend=...)`` states alone, a ``random.Random(seed)`` picking from
  ``legal_actions()`` and ``apply_action`` through Python;
* AEC: ``island_fortress_v0.env(num_players=n, backend=...)`` with the standard ``agent_iter()`` /
  ``last()`` / ``step()`` loop, the action drawn from ``np.flatnonzero(obs["action_mask"])``; for
  comparison also 3 players with ``raw_env`` in PettingZoo's stock ``OrderEnforcingWrapper``;
* batch: ``island_fortress_env.vector``, 256 three-player games per call, a random legal action in
  every game (``random_actions``) and the observation and mask of every game written at every
  step, on 1 and on 2 threads;
* heuristic: three ``HeuristicAgent`` players at a table (on a core state the agent plays through
  its C++ twin), decisions per second; and a heuristic-vs-heuristic ``evaluate`` of 200 games, its
  time on each backend;
* micro: ``clone()``, the observation, the mask and (engine) an uncached ``legal_actions()``, in µs
  per call, on states sampled from real random games;
* memory: RSS growth of 1,000 live, reset environments of each backend, each in a fresh subprocess;
* search: the search player (``players.search``) over the shipped policy's network in torch
  (``search:checkpoints/policy-2-4p-v3.zip:N``) and over the same network exported to ONNX
  (``search:FILE.onnx:N``, onnxruntime; exported at the start of the item by
  ``agents.onnx_export``), milliseconds per decision on the same positions of 2-player games, the
  two taking turns decision by decision with the same seed, so the same determinisations; the ONNX
  side is skipped with a note where onnx, onnxruntime or onnxscript is not installed (the ``onnx``
  extra), both where torch is not;
* anchors: PettingZoo classic ``connect_four_v3``, ``texas_holdem_no_limit_v6``, ``chess_v6``
  through the very same AEC loop, and OpenSpiel ``connect_four`` / ``chess`` (legal actions and
  ``observation_tensor()`` every step) when ``open-spiel`` is importable. Anchors whose packages
  are missing are reported as "not installed" (``pip install -e ".[bench]"``).

A "step" is one decision of a player: the ``env.step(None)`` calls that retire finished agents
are made but not counted. Each throughput figure is the median over ``--repeats`` runs of
whole games (whole batch calls), each run lasting about ``--seconds / --repeats``; the throughput
items run round-robin (every item's repeat 1, then every item's repeat 2, ...), so a shared
machine's changing load hits ours and the anchors alike: compare the ratios within one run. The
targets are printed as PASS/FAIL lines for information; nothing here asserts on speed.
"""

from __future__ import annotations

import argparse
import datetime as _dt
import gc
import importlib
import json
import os
import statistics
import sys
import tempfile
import time
import warnings
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

import numpy as np

from island_fortress_env.cli.bench_memory import measure_memory
from island_fortress_env.cli.bench_play import (
    BATCH_GAMES,
    WARMUP_GAME,
    aec_game_player,
    batch_player,
    engine_game_player,
    heuristic_game_player,
    measure_interleaved,
    openspiel_game_player,
    sample_states,
    time_per_call,
)
from island_fortress_env.cli.bench_report import (
    ANCHORS,
    BACKENDS,
    PETTINGZOO_ANCHORS,
    compute_ratios,
    evaluate_targets,
    format_report,
    machine_info,
)
from island_fortress_env.engine.tables import PLAYER_COUNTS
from island_fortress_env.players.seeds import Stream, agent_seed, stream_seed

DEFAULT_OUT = "bench-results/bench.json"
DEFAULT_SECONDS = 3.0
QUICK_SECONDS = 0.1
DEFAULT_REPEATS = 3
MEMORY_ENVS = 1000
QUICK_MEMORY_ENVS = 100
EVAL_GAMES = 200  # the heuristic-vs-heuristic evaluation
QUICK_EVAL_GAMES = 2
BATCH_THREADS = (1, 2)
SEARCH_PLAYERS = 2  # the search item's table size
SEARCH_BATCH = 256  # the batched search's positions searched at once
SEARCH_SIMULATIONS = 16  # simulations per decision
QUICK_SEARCH_SIMULATIONS = 4
SEARCH_DECISIONS = 8  # decisions timed per network
QUICK_SEARCH_DECISIONS = 2
SEARCH_EXPORT_CHECKS = 16  # positions on which the export compares onnxruntime with torch
ONNX_MODULES = ("onnx", "onnxruntime", "onnxscript")  # the search item's ONNX side (the onnx extra)

# The pip package that provides each module the anchors import.
PIP_NAME = {"pygame": "pygame-ce", "chess": "chess", "rlcard": "rlcard", "pyspiel": "open-spiel"}


def _fresh_legal_actions(state: Any) -> tuple[int, ...]:
    state.invalidate_cache()  # drop the engine's per-state memo: time the real computation
    return state.legal_actions()


def measure_micro(
    num_players: int, seed: int, seconds: float, repeats: int, quick: bool, backend: str
) -> dict:
    from island_fortress_env.core import Game
    from island_fortress_env.env.observation import ObservationEncoder, action_mask

    states = sample_states(
        num_players, seed, games=2 if quick else 10, per_game=10 if quick else 30, backend=backend
    )
    encoder = ObservationEncoder(Game(num_players=num_players, backend=backend))
    encode = encoder.encode
    out: dict[str, Any] = {"states": len(states)}
    out["clone"] = time_per_call(lambda s: s.clone(), states, seconds, repeats)
    out["encode"] = time_per_call(lambda s: encode(s, s.current_player()), states, seconds, repeats)
    out["mask"] = time_per_call(action_mask, states, seconds, repeats)
    if hasattr(states[0], "invalidate_cache"):  # the engine's memo (a core state keeps its own)
        out["legal_actions"] = time_per_call(
            _fresh_legal_actions, [s.clone() for s in states], seconds, repeats
        )
    return out


def measure_evaluation(backend: str, games: int, seed: int) -> dict:
    """The wall time of ``evaluate`` with three heuristic agents for ``games`` games on ``backend``
    (the agents' choices are the same on both: so are the results)."""
    from island_fortress_env.training.evaluate import evaluate

    gc.collect()
    start = time.perf_counter()
    result = evaluate(["heuristic"] * 3, games=games, seed=seed, env_options={"backend": backend})
    seconds = time.perf_counter() - start
    return {
        "games": games,
        "seconds": seconds,
        "games_per_s": games / seconds,
        "wins": [a["wins"] for a in result["agents"]],
    }


def search_positions(count: int, seed: int, num_players: int = SEARCH_PLAYERS) -> list:
    """``count`` positions with a choice to make (two legal actions or more), spread over two
    random games."""
    deals = stream_seed(seed, Stream.BENCH_SEARCH)  # other positions than the timed games'
    states = [
        s
        for s in sample_states(num_players, deals, games=2, per_game=2 * count, backend=_default())
        if len(s.legal_actions()) > 1
    ]
    pick = np.linspace(0, len(states) - 1, count).astype(int)
    return [states[i] for i in pick]


def _default() -> str:
    from island_fortress_env.core import default_backend

    return default_backend()


def _missing(modules: Sequence[str]) -> list[str]:
    import importlib.util

    return [m for m in modules if importlib.util.find_spec(m) is None]


def measure_search(
    simulations: int, decisions: int, seed: int, log: Callable[[str], None] | None = None
) -> dict:
    """The search player per decision with the shipped policy's network in torch and in ONNX
    (module doc): each network's milliseconds per decision (median, mean, best, every run), the
    ONNX side's speed against torch's, and how often the two chose the same move."""
    from island_fortress_env.players.search import SearchAgent
    from island_fortress_env.players.specs import SHIPPED_POLICY

    out: dict[str, Any] = {
        "players": SEARCH_PLAYERS, "simulations": simulations, "decisions": decisions,
        "checkpoint": SHIPPED_POLICY.name, "backend": _default(),
    }  # fmt: skip
    if _missing(("torch",)):
        out["torch"] = {"status": "not installed", "missing": "torch", "note": "pip install torch==2.13.0"}
        out["onnx"] = {"status": "skipped", "note": "the export to ONNX needs torch"}
        return out
    agents = {"torch": SearchAgent(SHIPPED_POLICY, simulations, seed=seed)}
    missing = _missing(ONNX_MODULES)
    with tempfile.TemporaryDirectory(prefix="island-fortress-bench-") as folder:
        if missing:
            out["onnx"] = {
                "status": "not installed",
                "missing": ", ".join(missing),
                "note": "pip install -e '.[onnx]' (onnx, onnxruntime, onnxscript)",
            }
        else:
            from island_fortress_env.agents.onnx_export import export_onnx
            from island_fortress_env.players.positions import sample_positions

            if log is not None:
                log(f"search: exporting {SHIPPED_POLICY.name} to ONNX ...")
            start = time.perf_counter()
            checks = sample_positions(SEARCH_EXPORT_CHECKS)
            report = export_onnx(SHIPPED_POLICY, Path(folder) / "policy.onnx", positions=checks)
            out["export_seconds"] = time.perf_counter() - start
            agents["onnx"] = SearchAgent(report.path, simulations, seed=seed)  # reads the model now
    positions = search_positions(decisions, seed)
    names = list(agents)
    for agent in agents.values():  # imports, sessions, first calls: untimed
        _decide(agent, positions[0])
    runs: dict[str, list[float]] = {name: [] for name in names}
    choices: dict[str, list[int]] = {name: [] for name in names}
    gc.collect()
    for i, state in enumerate(positions):
        for name in names if i % 2 == 0 else names[::-1]:  # each goes first at every other position
            agent = agents[name]
            agent.reset(agent_seed(seed, i, 0))  # the same determinisations for both networks
            start = time.perf_counter()
            choices[name].append(_decide(agent, state))
            runs[name].append((time.perf_counter() - start) * 1e3)
    for name in names:
        out[name] = {
            "status": "ok",
            "ms_per_decision": statistics.median(runs[name]),
            "mean_ms": statistics.fmean(runs[name]),
            "best_ms": min(runs[name]),
            "runs_ms": runs[name],
            "choices": choices[name],
        }
    if "onnx" in runs:
        out["onnx_speedup"] = out["torch"]["ms_per_decision"] / out["onnx"]["ms_per_decision"]
        out["same_choices"] = sum(a == b for a, b in zip(choices["torch"], choices["onnx"], strict=True))
    out["batched"] = measure_batched_search(simulations, seed, out["torch"]["ms_per_decision"])
    return out


def _decide(agent: Any, state: Any) -> int:
    return int(agent.act(state.encode(state.current_player()), state.action_mask(), state))


def measure_batched_search(simulations: int, seed: int, one_game_ms: float) -> dict:
    """The core's batched search (``core.search.BatchedSearch``) over the same torch network and
    simulations, ``SEARCH_BATCH`` positions searched at once on 2 threads (one network call a
    simulation step): decisions a second, and that against the one-game player's."""
    from island_fortress_env.core import available
    from island_fortress_env.core.search import BatchedSearch
    from island_fortress_env.players.search import Evaluator
    from island_fortress_env.players.specs import SHIPPED_POLICY

    if not available():
        return {"status": "the C++ core is not built"}
    positions = search_positions(SEARCH_BATCH, seed)
    search = BatchedSearch(Evaluator(SHIPPED_POLICY), simulations, threads=2)
    seeds = np.arange(len(positions), dtype=np.uint64)
    search.run(positions[:8], seeds[:8])  # first calls: untimed
    gc.collect()
    start = time.perf_counter()
    search.run(positions, seeds)
    seconds = time.perf_counter() - start
    per_second = len(positions) / seconds
    return {
        "status": "ok", "batch": len(positions), "seconds": seconds, "decisions_per_second": per_second,
        "rows": search.rows, "network_calls": search.steps, "speedup": per_second * one_game_ms / 1e3,
    }  # fmt: skip


# ---------------------------------------------------------------------------- memory


# ---------------------------------------------------------------------------- anchors


def _not_installed(err: ImportError) -> dict:
    module = (err.name or "").split(".")[0]
    return {"status": "not installed", "missing": PIP_NAME.get(module, module or str(err))}


def load_anchor(name: str, seed: int = 0) -> tuple[dict, Callable[[int], int] | None]:
    """(status dict, play function or None). Missing packages give "not installed", any
    other failure "error": an anchor never stops the benchmark."""
    os.environ.setdefault("PYGAME_HIDE_SUPPORT_PROMPT", "1")
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # deprecation / dtype notices at import and construction
        try:
            if name in PETTINGZOO_ANCHORS:
                module = importlib.import_module(f"pettingzoo.classic.{name}")
                return {"status": "ok", "api": "pettingzoo AEC"}, aec_game_player(module.env(), seed)
            import pyspiel

            game = pyspiel.load_game(name.removeprefix("openspiel_"))
            return {"status": "ok", "api": "openspiel"}, openspiel_game_player(game, seed)
        except ImportError as err:
            return _not_installed(err), None
        except Exception as err:
            return {"status": "error", "error": f"{type(err).__name__}: {err}"}, None


def measure_anchor(name: str, seconds: float, repeats: int) -> dict:
    """One anchor alone (``run`` measures them interleaved with the rest)."""
    status, play = load_anchor(name)
    if play is None:
        return status
    return {**status, **measure_interleaved({name: play}, seconds, repeats, tolerant=(name,))[name]}


def add_arguments(p: argparse.ArgumentParser) -> None:
    p.description = (
        "Benchmark both backends (the C++ core and the Python engine): the game states, "
        "the AEC API, the batch, the heuristic, clone/observation/mask costs and memory, side by side "
        "with PettingZoo and OpenSpiel reference games."
    )
    p.add_argument("--seconds", type=float, default=None,
                   help=f"wall time per item, split over the repeats (default {DEFAULT_SECONDS:g}; "
                   f"{QUICK_SECONDS:g} with --quick)")  # fmt: skip
    p.add_argument(
        "--repeats", type=int, default=None, help="repeats per item; the median is reported (default 3)"
    )
    p.add_argument(
        "--quick",
        action="store_true",
        help=f"tiny budgets (for tests): 1 repeat, 100 envs for memory, {QUICK_EVAL_GAMES} evaluation games",
    )
    p.add_argument(
        "--no-anchors", action="store_true", help="skip the PettingZoo / OpenSpiel reference games"
    )
    p.add_argument("--players", type=int, nargs="+", default=list(PLAYER_COUNTS), choices=PLAYER_COUNTS)
    p.add_argument(
        "--backends", nargs="+", default=None, choices=BACKENDS,
        help="the backends to measure (default: both; the core only where it is built)",
    )  # fmt: skip
    p.add_argument(
        "--memory-envs",
        type=int,
        default=None,
        help=f"environments for the memory figure (default {MEMORY_ENVS})",
    )
    p.add_argument(
        "--eval-games", type=int, default=None,
        help=f"games of the heuristic evaluation (default {EVAL_GAMES}; {QUICK_EVAL_GAMES} with --quick)",
    )  # fmt: skip
    p.add_argument(
        "--search-simulations", type=int, default=None,
        help=f"the search player's simulations per decision (default {SEARCH_SIMULATIONS}; "
        f"{QUICK_SEARCH_SIMULATIONS} with --quick)",
    )  # fmt: skip
    p.add_argument(
        "--search-decisions", type=int, default=None,
        help=f"decisions timed per network, torch and ONNX (default {SEARCH_DECISIONS}; "
        f"{QUICK_SEARCH_DECISIONS} with --quick)",
    )  # fmt: skip
    p.add_argument("--no-search", action="store_true", help="skip the search player (torch and ONNX)")
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--out", default=DEFAULT_OUT, help=f"JSON results file (default {DEFAULT_OUT})")
    p.add_argument(
        "--profile", type=int, nargs="?", const=3, default=None, metavar="PLAYERS",
        help="instead: cProfile AEC random play (default 3 players, the default backend) for --seconds, "
        "print the top 20",
    )  # fmt: skip


def _backends(chosen: Sequence[str] | None, log: Callable[[str], None]) -> list[str]:
    from island_fortress_env import core

    backends = [b for b in BACKENDS if b in (chosen or BACKENDS)]
    if "core" in backends and not core.available():
        if chosen:
            raise SystemExit(f"--backends core: the C++ core is not built ({core.build_error()})")
        log(f"the C++ core is not built ({core.build_error()}): measuring the Python engine only")
        backends.remove("core")
    return backends


def measure(args: argparse.Namespace, log: Callable[[str], None]) -> dict:
    from pettingzoo.utils import wrappers

    from island_fortress_env import island_fortress_v0
    from island_fortress_env.core import default_backend

    seconds = args.seconds if args.seconds is not None else (QUICK_SECONDS if args.quick else DEFAULT_SECONDS)
    repeats = args.repeats if args.repeats is not None else (1 if args.quick else DEFAULT_REPEATS)
    mem_envs = (
        args.memory_envs
        if args.memory_envs is not None
        else (QUICK_MEMORY_ENVS if args.quick else MEMORY_ENVS)
    )
    eval_games = (
        args.eval_games if args.eval_games is not None else (QUICK_EVAL_GAMES if args.quick else EVAL_GAMES)
    )
    simulations = (
        args.search_simulations
        if args.search_simulations is not None
        else (QUICK_SEARCH_SIMULATIONS if args.quick else SEARCH_SIMULATIONS)
    )
    decisions = (
        args.search_decisions
        if args.search_decisions is not None
        else (QUICK_SEARCH_DECISIONS if args.quick else SEARCH_DECISIONS)
    )
    if seconds <= 0 or repeats < 1 or mem_envs < 1 or eval_games < 1 or simulations < 1 or decisions < 1:
        raise SystemExit(
            "--seconds, --repeats, --memory-envs, --eval-games and the --search- options must be positive"
        )
    players = sorted(set(args.players))
    backends = _backends(args.backends, log)
    machine = machine_info()
    results: dict[str, Any] = {
        "date": _dt.datetime.now(_dt.timezone.utc).isoformat(timespec="seconds"),
        "machine": machine,
        "settings": {
            "seconds": seconds, "repeats": repeats, "quick": args.quick, "players": players,
            "backends": backends, "default_backend": default_backend(),
            "anchors": not args.no_anchors, "memory_envs": mem_envs, "seed": args.seed,
            "batch_games": BATCH_GAMES, "batch_threads": list(BATCH_THREADS), "eval_games": eval_games,
            "search": not args.no_search, "search_simulations": simulations, "search_decisions": decisions,
            "step": "one player decision (env.step(None) on finished agents is not counted)",
        },
        "engine": {}, "aec": {}, "aec_stock_wrapper": {}, "batch": {}, "heuristic": {}, "evaluation": {},
        "search": {}, "micro": {}, "memory": {}, "anchors": {},
    }  # fmt: skip
    plays: dict[str, Callable[[int], int]] = {}
    for backend in backends:
        for n in players:
            plays[f"engine {backend} {n}"] = engine_game_player(n, args.seed, backend)
    for backend in backends:
        for n in players:
            env = island_fortress_v0.env(num_players=n, backend=backend)
            plays[f"aec {backend} {n}"] = aec_game_player(env, args.seed)
    if 3 in players:  # for comparison: our env behind PettingZoo's own OrderEnforcingWrapper
        stock = wrappers.OrderEnforcingWrapper(island_fortress_v0.raw_env(num_players=3))
        plays["aec_stock_wrapper - 3"] = aec_game_player(stock, args.seed)
    if "core" in backends:
        for threads in BATCH_THREADS:
            plays[f"batch - {threads}"] = batch_player(threads, args.seed)
    for backend in backends:
        plays[f"heuristic {backend} -"] = heuristic_game_player(3, args.seed, backend)
    for name in ANCHORS:
        if args.no_anchors:
            results["anchors"][name] = {"status": "skipped (--no-anchors)"}
            continue
        status, play = load_anchor(name, args.seed)
        results["anchors"][name] = status
        if play is not None:
            plays[name] = play
    log("warm-up games ...")
    measured = measure_interleaved(plays, seconds, repeats, tolerant=ANCHORS, log=log)
    for key, fig in measured.items():
        if key in ANCHORS:
            results["anchors"][key].update(fig)
            continue
        section, backend, n = key.split()
        if section in ("engine", "aec"):
            results[section].setdefault(backend, {})[n] = fig
        elif section == "heuristic":
            results["heuristic"][backend] = fig
        else:  # the stock wrapper by table size, the batch by thread count
            results[section][n] = fig
    for backend in backends:
        log(f"evaluate, {eval_games} heuristic games, {backend} ...")
        results["evaluation"][backend] = measure_evaluation(backend, eval_games, args.seed)
    if args.no_search:
        results["search"] = {"status": "skipped (--no-search)"}
    else:
        log(f"search player, torch and ONNX, {decisions} decisions of {simulations} simulations ...")
        results["search"] = measure_search(simulations, decisions, args.seed, log)
    for backend in backends:
        for n in players:
            log(f"clone / encode / mask {backend} {n}p ...")
            results["micro"].setdefault(backend, {})[str(n)] = measure_micro(
                n, args.seed, seconds, repeats, args.quick, backend
            )
    for backend in backends:
        for n in players:
            log(f"memory {backend} {n}p ({mem_envs} envs, subprocess) ...")
            results["memory"].setdefault(backend, {})[str(n)] = measure_memory(
                f"island_fortress:{backend}", n, mem_envs
            )
    for name in PETTINGZOO_ANCHORS:
        if results["anchors"][name].get("status") == "ok":
            log(f"memory {name} ({mem_envs} envs, subprocess) ...")
            try:
                figure = measure_memory(name, 2, mem_envs)
            except Exception as err:  # reported, never fatal
                figure = {"status": f"error: {err}"}
            results["memory"].setdefault("anchors", {})[name] = figure
    if hasattr(os, "getloadavg"):
        machine["loadavg_at_end"] = list(os.getloadavg())
    results["ratios"] = compute_ratios(results)
    results["targets"] = evaluate_targets(results)
    return results


def profile(num_players: int, seconds: float, seed: int, top: int = 20) -> str:
    """cProfile of AEC random play (the default backend), the top ``top`` functions by own time."""
    import cProfile
    import io
    import pstats

    from island_fortress_env import island_fortress_v0

    env = island_fortress_v0.env(num_players=num_players)
    play = aec_game_player(env, seed)
    play(WARMUP_GAME)
    gc.collect()
    games = steps = 0
    profiler = cProfile.Profile()
    start = time.perf_counter()
    profiler.enable()
    while time.perf_counter() - start < seconds:
        steps += play(games)
        games += 1
    profiler.disable()
    elapsed = time.perf_counter() - start
    stream = io.StringIO()
    stream.write(
        f"cProfile, AEC {num_players}p random play ({env.unwrapped.backend} backend): {games} games, "
        f"{steps} steps in {elapsed:.1f} s (profiled; {steps / elapsed:,.0f} steps/s under the profiler)\n"
    )
    pstats.Stats(profiler, stream=stream).strip_dirs().sort_stats("tottime").print_stats(top)
    return stream.getvalue()


def run(args: argparse.Namespace) -> int:
    if args.profile is not None:
        seconds = (
            args.seconds if args.seconds is not None else (QUICK_SECONDS if args.quick else DEFAULT_SECONDS)
        )
        print(profile(args.profile, seconds, args.seed))
        return 0

    def log(msg: str) -> None:
        print(msg, file=sys.stderr, flush=True)

    results = measure(args, log)
    print(format_report(results))
    out = Path(args.out)
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(json.dumps(results, indent=2, ensure_ascii=False) + "\n", encoding="utf-8")
    print(f"results written to {out}")
    return 0
