"""The memory item of ``island-fortress bench``: the resident memory that ``count`` made-and-reset
environments add, measured in a fresh interpreter (``memory_child`` there prints it as JSON), so
that nothing the benchmark loaded before counts."""

from __future__ import annotations

import gc
import importlib
import json
import os
import subprocess
import sys
import warnings
from pathlib import Path
from typing import Any


def rss_bytes() -> int:
    """Resident set size now (from /proc/self/statm); the peak from getrusage elsewhere."""
    try:
        with open("/proc/self/statm") as f:
            return int(f.read().split()[1]) * os.sysconf("SC_PAGE_SIZE")
    except (OSError, ValueError, IndexError):
        import resource

        peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
        return peak if sys.platform == "darwin" else peak * 1024


def _make_env(kind: str, num_players: int) -> Any:
    """``island_fortress:<backend>`` or a PettingZoo classic module name."""
    if kind.startswith("island_fortress"):
        from island_fortress_env import island_fortress_v0

        backend = kind.partition(":")[2] or None
        return island_fortress_v0.env(num_players=num_players, backend=backend)
    module = importlib.import_module(f"pettingzoo.classic.{kind}")
    return module.env()


def memory_child(kind: str, num_players: int, count: int) -> dict:
    """Runs in a fresh interpreter: RSS growth from ``count`` made-and-reset environments."""
    os.environ.setdefault("PYGAME_HIDE_SUPPORT_PROMPT", "1")
    warnings.simplefilter("ignore")
    warm = _make_env(kind, num_players)  # imports, tables and caches are loaded first
    warm.reset(seed=0)
    gc.collect()
    before = rss_bytes()
    envs = []
    for i in range(count):
        env = _make_env(kind, num_players)
        env.reset(seed=i)
        envs.append(env)
    gc.collect()
    delta = rss_bytes() - before
    return {
        "envs": count,
        "rss_delta_mb": delta / 2**20,
        "kb_per_env": delta / 1024 / count,
        "mb_per_1000_envs": delta / 2**20 * 1000 / count,
    }


# The fresh interpreter's program: KIND PLAYERS COUNT in, one JSON object out.
CHILD = (
    "import json, sys; from island_fortress_env.cli.bench_memory import memory_child; "
    "print(json.dumps(memory_child(sys.argv[1], int(sys.argv[2]), int(sys.argv[3]))))"
)


def measure_memory(kind: str, num_players: int, count: int) -> dict:
    package_root = str(Path(__file__).resolve().parents[2])
    env = dict(os.environ)
    env["PYTHONPATH"] = package_root + (os.pathsep + env["PYTHONPATH"] if env.get("PYTHONPATH") else "")
    env["PYGAME_HIDE_SUPPORT_PROMPT"] = "1"
    cmd = [sys.executable, "-c", CHILD, kind, str(num_players), str(count)]
    proc = subprocess.run(cmd, capture_output=True, text=True, env=env, timeout=600)
    if proc.returncode != 0:
        raise RuntimeError(f"memory subprocess failed: {proc.stderr.strip().splitlines()[-1:]}")
    return json.loads(proc.stdout.strip().splitlines()[-1])
