"""Training throughput and a learning race: the native trainer's default against its previous
default and against the SB3 path, on the same game.

    island-fortress bench-training --seconds 150
    island-fortress bench-training --race 4 --games 96

**Throughput** (``--seconds``): three trainers learn the 3-player game from scratch by self-play,
without imitation or evaluation, each in its own process, one after the other, for ``--seconds``
of training: SB3 ``MaskablePPO`` (``configs/sb3.yaml``, its opponents snapshots of the learner,
the native default's network and learning rate), the native trainer with its previous default
(``PREVIOUS_DEFAULT``: the convolutional torso, two epochs) and with ``configs/default.yaml``.
Reported per trainer: **decisions learned from per second** (decisions that went into a finished
PPO update, over the time spent collecting and updating: SB3 counts the learner's steps of every
trained rollout, the native trainer every learning seat's decisions), CPU utilisation (CPU time
of the trainer's process tree, workers included, read from ``/proc`` / wall time of the whole
run / cores) and decisions per CPU-second; then the ratios of the default to the other two. A
fourth row (``busy``) is the default again beside one busy process (``python -c "while True:
pass"``, started a second before it), with the share of its speed alone that it keeps: the
default fits its threads to the CPUs idle when it starts (``train.fit_threads``,
``training/cpus.py``).

``--against DIR`` adds two rows for another version of this project, an installed checkout of it
in ``DIR`` (``git worktree add DIR COMMIT && make -C DIR install``): its own default trainer, as its
own benchmark ran it (its ``run_native``, in its own virtualenv ``DIR/.venv``), alone and beside
one busy process, with the ratios of this version to it: the figures compare like with like, one
run, one machine.

``--trainers`` measures some of them (``sb3``, ``previous``, ``default``, ``busy``), with the ratios among
those measured. ``--gpu`` (``make bench-gpu``) measures the default alone on a CUDA GPU (``GPU``: its forward
passes and update there, thousands of games stepped on every core between them).

**Learning race** (``--race MINUTES``): ``configs/default.yaml`` as ``make train`` runs it, and the
same with ``PREVIOUS_DEFAULT``, each for the same ``MINUTES`` of wall-clock training (imitation
included, the learning rate annealed over the minutes), one after the other; then each policy's
greedy evaluation against the heuristic at 2, 3 and 4 players on the same deals (``--games`` per
table, seats rotated). On a machine shared with other work the figures move with the load:
repeat with ``--repeat``.
"""

from __future__ import annotations

import contextlib
import json
import multiprocessing as mp
import os
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Callable, Iterator, Sequence
from pathlib import Path
from typing import Any

import numpy as np

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


# The native trainer's default before the dense torso: what its speed and strength are compared to.
PREVIOUS_DEFAULT = (
    "policy.cnn_channels=32",
    "policy.hidden=256",
    "ppo.n_epochs=2",
    "ppo.learning_rate=5e-5",
    "train.games_per_collector=32",
    "train.workers=2",  # two collecting processes, pipelined with the main process's update
    "train.pipelined=true",
    "train.torch_threads=1",
    "league.share=0.5",  # half the games in the league, half of those against the heuristic
    "league.snapshot=0.3",
    "league.heuristic=0.5",
    "league.random=0.2",
    "ppo.ent_coef=0.003",
)


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


CURVE_GAMES = 24  # games per table size of each point of a race's learning curves


def race_leg(
    minutes: float, workdir: str, overrides: Sequence[str], games: int, seed: int, curve_every: int = 0
) -> dict[str, Any]:
    """``configs/default.yaml`` (with ``overrides``) trained for ``minutes``, then its greedy
    evaluation against the heuristic at every table size. With ``curve_every`` the run keeps a
    checkpoint every ``curve_every`` decisions, each evaluated after the run (``CURVE_GAMES`` games
    per table against the heuristic, so the evaluations take none of the minutes), and the leg's
    ``curves`` are those points and the final one, against the decisions learned from (``eval/``)
    and the seconds the run had taken, imitation included (``eval_time/``)."""
    from island_fortress_env.agents.checkpoint import load_policy, read_metadata
    from island_fortress_env.players.seeds import Stream, stream_seed
    from island_fortress_env.training.config import NativeConfig, load_config
    from island_fortress_env.training.greedy_eval import greedy_evaluation
    from island_fortress_env.training.ppo import train_native
    from island_fortress_env.training.weights import network_kwargs

    cfg = load_config(
        ROOT / "configs" / "default.yaml",
        [
            f"seed={seed}",
            "eval.every=0",
            "eval.final_games=0",
            "logging.progress_bar=false",
            "train.total_decisions=1000000000",
            f"train.checkpoint_every={curve_every or 1000000000}",
            f"train.max_minutes={minutes}",
            "ppo.anneal_over=minutes",
            f"logging.runs_dir={workdir}/runs",
            f"logging.checkpoints_dir={workdir}/ckpt",
            "run_name=race",
            *overrides,
        ],
        schema=NativeConfig,
    )
    final = train_native(cfg)
    net, _ = load_policy(final)
    deals = stream_seed(cfg.seed, Stream.FINAL_EVALUATION)  # the trainer's final evaluation's deals
    result = greedy_evaluation(
        net, network_kwargs(cfg), games, deals, ["heuristic"], cfg.env.options, 1 + cfg.train.workers,
    )  # fmt: skip
    curves: dict[str, list[tuple[float, float]]] = {}
    points = sorted(Path(final).parent.glob("step_*.zip"), key=lambda p: int(p.stem.split("_")[1]))
    for path in [*points, Path(final)] if curve_every else []:
        meta = read_metadata(path)
        point, _ = load_policy(path)
        figures = greedy_evaluation(
            point,
            network_kwargs(cfg),
            CURVE_GAMES,
            deals,
            ["heuristic"],
            cfg.env.options,
        )
        for n in (2, 3, 4):
            rate = figures[f"win_rate_vs_heuristic_{n}p"]
            curves.setdefault(f"eval/win_rate_vs_heuristic_{n}p", []).append((meta["num_timesteps"], rate))
            curves.setdefault(f"eval_time/win_rate_vs_heuristic_{n}p", []).append(
                (meta["elapsed_seconds"], rate)
            )
    return {"decisions": read_metadata(final)["num_timesteps"], **result, "curves": curves}


RUNNERS: dict[str, Callable[..., dict[str, Any]]] = {"sb3": run_sb3, "native": run_native, "race": race_leg}


def _child(name: str, args: Sequence[Any], queue: Any) -> None:
    with tempfile.TemporaryDirectory() as workdir:
        queue.put(RUNNERS[name](args[0], workdir, *args[1:]))


def in_fresh_process(name: str, *args: Any) -> dict[str, Any]:
    """``RUNNERS[name](args[0], workdir, *args[1:])`` in a fresh process (a temporary workdir);
    a process that dies is a ``RuntimeError``, never a wait."""
    ctx = mp.get_context("spawn")
    queue = ctx.Queue()
    proc = ctx.Process(target=_child, args=(name, args, queue))
    proc.start()
    while True:
        try:
            result = queue.get(timeout=5)
            break
        except Exception:  # queue.Empty: is the process still there?
            if not proc.is_alive():
                raise RuntimeError(f"the {name} run died (exit code {proc.exitcode})") from None
    proc.join()
    return result


BUSY = "native, default, 1 busy"  # the default beside one busy process (``busy``)


@contextlib.contextmanager
def one_busy_process() -> Iterator[None]:
    """A process that keeps one CPU busy for as long as the block runs (a researcher's machine
    always runs something else: TensorBoard, a browser, an evaluation)."""
    busy = subprocess.Popen([sys.executable, "-c", "while True: pass"])
    try:
        time.sleep(1.0)  # running before the trainer starts, as a machine's other work is
        yield
    finally:
        busy.kill()
        busy.wait()


# What runs in another checkout's own Python (``--against``): its benchmark's native run, as JSON.
OTHER_RUN = """
import json, sys, tempfile
from island_fortress_env.training.bench_training import run_native
with tempfile.TemporaryDirectory() as workdir:
    print(json.dumps(run_native(float(sys.argv[1]), workdir, [])))
"""


class OtherCheckoutError(ValueError):
    """``--against DIR`` is not an installed checkout of this project."""


def other_checkout(path: str | Path) -> tuple[Path, str]:
    """The Python of the installed checkout at ``path`` and its commit (short), or one error saying
    what is missing."""
    root = Path(path).resolve()
    python = root / ".venv" / "bin" / "python"
    if not (root / "training" / "bench_training.py").is_file():
        raise OtherCheckoutError(
            f"--against {path}: not a checkout of this project (no training/bench_training.py)"
        )
    if not python.is_file():
        raise OtherCheckoutError(
            f"--against {path}: not installed (no .venv/bin/python: run make -C {path} install)"
        )
    done = subprocess.run(
        ["git", "-C", str(root), "rev-parse", "--short", "HEAD"], capture_output=True, text=True, check=False
    )
    return python, done.stdout.strip() if done.returncode == 0 else root.name


def run_other(checkout: str | Path, seconds: float) -> dict[str, Any]:
    """The default trainer of the checkout at ``checkout`` for ``seconds``, in its own Python and
    its own fresh process (``OTHER_RUN``); a run that fails is a ``RuntimeError`` naming it."""
    python, commit = other_checkout(checkout)
    done = subprocess.run(
        [str(python), "-c", OTHER_RUN, str(seconds)], cwd=Path(checkout).resolve(), capture_output=True,
        text=True, check=False,
    )  # fmt: skip
    lines = done.stdout.strip().splitlines()
    if done.returncode != 0 or not lines:
        said = (done.stderr.strip().splitlines() or ["no output"])[-1]
        raise RuntimeError(f"the trainer at {checkout} ({commit}) failed: {said}")
    return {**json.loads(lines[-1]), "commit": commit}


def measure(
    name: str,
    seconds: float,
    overrides: Sequence[str] = (),
    busy: bool = False,
    checkout: str | Path | None = None,
) -> dict[str, Any]:
    """One trainer in a fresh process (beside one busy process with ``busy``; with ``checkout``
    the default trainer of that other checkout, ``run_other``); its figures, with rate and
    utilisation added."""
    with one_busy_process() if busy else contextlib.nullcontext():
        if checkout is not None:
            result = run_other(checkout, seconds)
        else:
            result = in_fresh_process(name, seconds, list(overrides))
    cores = os.cpu_count() or 1
    result["decisions_per_second"] = result["decisions"] / result["wall_s"]
    result["cpu_utilisation"] = result["cpu_s"] / result["run_s"] / cores
    result["decisions_per_cpu_second"] = result["decisions"] / max(result["cpu_s"], 1e-9)
    result["cores"] = cores
    return result


THROUGHPUT = {  # --trainers key: (name, runner, overrides)
    "sb3": ("sb3", "sb3", ()),
    "previous": ("native, previous default", "native", PREVIOUS_DEFAULT),
    "default": ("native, default", "native", ()),
    "busy": (BUSY, "native", ()),
}

# On a GPU (``make bench-gpu``): the default in one process, its forward passes and update on the
# GPU, 4,096 games stepped by 16 threads of the core between them (docs/NATIVE-TRAINER.md).
GPU = (
    "train.device=cuda",
    "train.workers=0",
    "train.games_per_collector=4096",
    "train.core_threads=16",
    "train.rollout_decisions=131072",
    "ppo.minibatch_size=8192",
)


def throughput(
    trainers: Sequence[str],
    seconds: float,
    repeat: int = 1,
    sb3: Sequence[str] = (),
    native: Sequence[str] = (),
    quiet: bool = False,
    against: str | Path | None = None,
) -> dict[str, Any]:
    """Each of ``trainers`` (keys of ``THROUGHPUT``) for ``seconds`` of training, ``repeat`` times,
    and with ``against`` the default of that other checkout alone and beside one busy process
    (module doc); each run printed unless ``quiet``, then the ratios."""
    chosen: list[tuple[str, str, Sequence[str], str | Path | None]] = [
        (*trainer, None) for key, trainer in THROUGHPUT.items() if key in trainers
    ]
    default, busy_rows = "native, default", {BUSY: "native, default"}  # beside 1 busy: its row alone
    other = None
    if against is not None:
        other = f"native, default at {other_checkout(against)[1]}"
        busy_rows[f"{other}, 1 busy"] = other
        chosen += [(other, "native", (), against), (f"{other}, 1 busy", "native", (), against)]
    results = []
    for _ in range(repeat):
        for name, runner, overrides, checkout in chosen:
            extra = sb3 if runner == "sb3" else native
            busy = name in busy_rows
            r = {"name": name, **measure(runner, seconds, [*overrides, *extra], busy, checkout)}
            results.append(r)
            if not quiet:
                print(
                    f"{name:<36} {r['trainer']:<48} {r['decisions']:>9} decisions in {r['wall_s']:6.1f} s = "
                    f"{r['decisions_per_second']:7.0f} decisions/s, CPU {100 * r['cpu_utilisation']:5.1f}% "
                    f"of {r['cores']} cores, {r['decisions_per_cpu_second']:6.0f} per CPU-second",
                    flush=True,
                )
    rate = {
        name: float(np.mean([r["decisions_per_second"] for r in results if r["name"] == name]))
        for name, *_ in chosen
    }
    ratios = {  # of the default to each other trainer measured, each alone (or each beside 1 busy)
        f"default / {name.removeprefix('native, ')}": rate[default] / rate[name]
        for name in rate
        if default in rate and name != default and name not in busy_rows
    }
    if other is not None and BUSY in rate and f"{other}, 1 busy" in rate:
        ratios[f"default / {other.removeprefix('native, ')}, each beside 1 busy process"] = (
            rate[BUSY] / rate[f"{other}, 1 busy"]
        )
    for row, alone in busy_rows.items():  # the share of its speed a trainer keeps when not alone
        if row in rate and alone in rate:
            who = alone.removeprefix("native, ")
            ratios[f"{who} beside 1 busy process / alone"] = rate[row] / rate[alone]
    if not quiet:
        for key, value in ratios.items():
            shown = f"{100 * value:.0f}%" if " / alone" in key else f"{value:.1f}x"
            print(f"decisions learned from per second, {key}: {shown}")
    return {"results": results, "ratios": ratios}


def race(
    minutes: float,
    games: int,
    repeat: int = 1,
    native: Sequence[str] = (),
    curves: str | None = None,
    curve_every: int = 250_000,
    quiet: bool = False,
) -> dict[str, Any]:
    """The learning race: the default and ``PREVIOUS_DEFAULT`` for ``minutes`` each, ``repeat``
    times, evaluated on ``games`` games a table size; the curves drawn to ``curves`` if given."""
    legs = []
    for seed in range(repeat):
        for name, overrides in (("previous default", PREVIOUS_DEFAULT), ("default", ())):
            every = curve_every if curves else 0
            leg = in_fresh_process("race", minutes, [*overrides, *native], games, seed, every)
            legs.append({"name": name, "seed": seed, **leg})
            if not quiet:
                rates = " / ".join(f"{100 * leg[f'win_rate_vs_heuristic_{n}p']:.1f}%" for n in (2, 3, 4))
                print(
                    f"{name:<17} seed {seed}: {leg['decisions']:>9} decisions in {minutes} min, "
                    f"against the heuristic at 2 / 3 / 4 players {rates}",
                    flush=True,
                )
    if curves:
        from island_fortress_env.training.plot_curves import plot_race

        print(f"learning curves: {plot_race(legs, curves)}", flush=True)
    return {"race": legs}
