"""Training throughput: the SB3 path and the native trainer on the same game for the same wall time.

    python -m training.bench_training --seconds 180

Both learn the 3-player game from scratch with the same network, PPO epochs and learning rate
(those of ``configs/default.yaml``), without imitation or evaluation; each runs in its own process,
one after the other, for ``--seconds`` of training. Reported per trainer:
**decisions learned from per second** (decisions that went into a finished PPO update, over the
time spent collecting and updating: SB3 counts the learner's steps of every trained rollout, the
native trainer every learning seat's decisions) and CPU utilisation (CPU time of the trainer's
process tree, workers included, read from ``/proc`` / wall time of the whole run / cores). The SB3
path is ``configs/sb3.yaml`` with its opponents set to snapshots of the learner; the native one is
``configs/default.yaml`` with every table at 3 players and every seat learning. On a machine shared
with other work the figures move with the load: repeat with ``--repeat``.
"""

from __future__ import annotations

import argparse
import json
import multiprocessing as mp
import os
import sys
import tempfile
import threading
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
TICKS = os.sysconf("SC_CLK_TCK")


class TreeCPU:
    """CPU seconds used by this process and all its descendants (forkserver workers included),
    read from ``/proc`` (Linux) by a thread every ``interval`` s; a process that ends loses at most
    its last interval."""

    def __init__(self, interval: float = 0.5) -> None:
        self.interval = interval
        self.seen: dict[int, float] = {}
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, daemon=True)

    @staticmethod
    def _stat(pid: str) -> tuple[int, float] | None:
        try:
            fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
        except OSError:
            return None
        return int(fields[1]), (int(fields[11]) + int(fields[12])) / TICKS  # ppid, utime + stime

    def sample(self) -> None:
        stats = {int(p): s for p in os.listdir("/proc") if p.isdigit() and (s := self._stat(p)) is not None}
        tree, frontier = set(), {os.getpid()}
        while frontier:
            tree |= frontier
            frontier = {pid for pid, (ppid, _) in stats.items() if ppid in frontier} - tree
        for pid in tree:
            if pid in stats:
                self.seen[pid] = max(self.seen.get(pid, 0.0), stats[pid][1])

    def _run(self) -> None:
        while not self._stop.wait(self.interval):
            self.sample()

    def __enter__(self) -> TreeCPU:
        self.sample()
        self.start = sum(self.seen.values())
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._stop.set()
        self._thread.join()
        self.sample()

    @property
    def seconds(self) -> float:
        return sum(self.seen.values()) - self.start


def run_sb3(seconds: float, workdir: str, overrides: Sequence[str]) -> dict[str, Any]:
    from stable_baselines3.common.callbacks import BaseCallback

    from island_fortress_env.training.config import NativeConfig, load_config
    from island_fortress_env.training.train import train

    native = load_config(ROOT / "configs" / "default.yaml", schema=NativeConfig)
    same = [
        f"policy.cnn_channels={native.policy.cnn_channels}",
        f"policy.hidden={native.policy.hidden}",
        f"ppo.n_epochs={native.ppo.n_epochs}",
        f"ppo.learning_rate={native.ppo.learning_rate}",
    ]
    cfg = load_config(
        ROOT / "configs" / "sb3.yaml",
        [
            *same,
            "pretrain.games=0",
            "eval.games=0",
            "logging.progress_bar=false",
            "opponents.snapshot=1.0",
            "opponents.random=0.0",
            "opponents.heuristic=0.0",
            "train.total_timesteps=100000000",
            "train.checkpoint_every=100000000",
            f"logging.runs_dir={workdir}/runs",
            f"logging.checkpoints_dir={workdir}/ckpt",
            "run_name=bench-sb3",
            *overrides,
        ],
    )

    class TimeLimit(BaseCallback):
        """Stops at the first step of the first rollout that starts after ``seconds``."""

        def __init__(self) -> None:
            super().__init__()
            self.start = self.end = 0.0
            self.rollouts = -1  # rollouts whose update has finished
            self.stop = False

        def _on_training_start(self) -> None:
            self.start = time.monotonic()

        def _on_rollout_start(self) -> None:
            self.rollouts += 1
            if time.monotonic() - self.start >= seconds:
                self.stop, self.end = True, time.monotonic()

        def _on_step(self) -> bool:
            return not self.stop

    limit = TimeLimit()
    with TreeCPU() as cpu:
        start = time.monotonic()
        train(cfg, extra_callbacks=[limit])
        total = time.monotonic() - start
    learned = limit.rollouts * cfg.ppo.n_steps * cfg.train.n_envs
    wall = limit.end - limit.start
    return {
        "trainer": f"sb3 MaskablePPO ({cfg.train.n_envs} env processes)",
        "decisions": learned,
        "wall_s": wall,
        "cpu_s": cpu.seconds,
        "run_s": total,
    }


def native_config(seconds: float, workdir: str, overrides: Sequence[str] = ()) -> Any:
    """``configs/default.yaml`` as the benchmark runs it: self-play at 3 players, no imitation,
    no evaluation, stopped by the clock."""
    from island_fortress_env.training.config import NativeConfig, load_config

    return load_config(
        ROOT / "configs" / "default.yaml",
        [
            "pretrain.games=0",
            "eval.every=0",
            "eval.keep_best=false",
            "eval.final_games=0",
            "logging.progress_bar=false",
            "league.share=0.0",
            "tables.two=0",
            "tables.four=0",
            "train.total_decisions=1000000000",
            "train.checkpoint_every=1000000000",
            f"train.max_minutes={seconds / 60}",
            f"logging.runs_dir={workdir}/runs",
            f"logging.checkpoints_dir={workdir}/ckpt",
            "run_name=bench-native",
            *overrides,
        ],
        schema=NativeConfig,
    )


def run_native(seconds: float, workdir: str, overrides: Sequence[str]) -> dict[str, Any]:
    from island_fortress_env.agents.checkpoint import read_metadata
    from island_fortress_env.training.ppo import train_native

    cfg = native_config(seconds, workdir, overrides)
    with TreeCPU() as cpu:
        start = time.monotonic()
        final = train_native(cfg)
        total = time.monotonic() - start
    meta = read_metadata(final)
    t = cfg.train
    return {
        "trainer": f"native PPO ({t.workers} worker processes, pipelined={t.pipelined})",
        "decisions": meta["num_timesteps"],
        "wall_s": meta["training_seconds"],
        "cpu_s": cpu.seconds,
        "run_s": total,
    }


RUNNERS = {"sb3": run_sb3, "native": run_native}


def _child(name: str, seconds: float, overrides: Sequence[str], queue: Any) -> None:
    with tempfile.TemporaryDirectory() as workdir:
        queue.put(RUNNERS[name](seconds, workdir, overrides))


def measure(name: str, seconds: float, overrides: Sequence[str] = ()) -> dict[str, Any]:
    """One trainer in a fresh process; its figures, with rate and utilisation added."""
    ctx = mp.get_context("spawn")
    queue = ctx.Queue()
    proc = ctx.Process(target=_child, args=(name, seconds, list(overrides), queue))
    proc.start()
    result = queue.get()
    proc.join()
    cores = os.cpu_count() or 1
    result["decisions_per_second"] = result["decisions"] / result["wall_s"]
    result["cpu_utilisation"] = result["cpu_s"] / result["run_s"] / cores
    result["cores"] = cores
    return result


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="python -m training.bench_training", description=__doc__.split("\n")[0]
    )
    parser.add_argument("--seconds", type=float, default=180.0, help="training wall time per trainer")
    parser.add_argument("--repeat", type=int, default=1, help="measure each trainer this many times")
    parser.add_argument("--sb3", nargs="*", default=[], metavar="KEY=VALUE", help="SB3 config overrides")
    parser.add_argument(
        "--native", nargs="*", default=[], metavar="KEY=VALUE", help="native config overrides"
    )
    parser.add_argument("--json", action="store_true", help="print one JSON object")
    args = parser.parse_args(argv)
    if args.seconds <= 0 or args.repeat < 1:
        parser.error("--seconds must be > 0 and --repeat >= 1")
    results = []
    for _ in range(args.repeat):
        for name, overrides in (("sb3", args.sb3), ("native", args.native)):
            results.append({"name": name, **measure(name, args.seconds, overrides)})
            if not args.json:
                r = results[-1]
                print(
                    f"{r['trainer']:<48} {r['decisions']:>9} decisions in {r['wall_s']:6.1f} s = "
                    f"{r['decisions_per_second']:7.0f} decisions/s, CPU {100 * r['cpu_utilisation']:5.1f}% "
                    f"of {r['cores']} cores",
                    flush=True,
                )
    rate = {n: [r["decisions_per_second"] for r in results if r["name"] == n] for n in RUNNERS}
    speedup = (sum(rate["native"]) / len(rate["native"])) / (sum(rate["sb3"]) / len(rate["sb3"]))
    if args.json:
        print(json.dumps({"results": results, "speedup": speedup}))
    else:
        print(f"native / sb3 decisions learned from per second: {speedup:.1f}x")
    return 0


if __name__ == "__main__":
    sys.exit(main())
