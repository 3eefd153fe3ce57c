"""How many threads a run should use: the CPUs it may run on and how many of them are idle.

With ``train.fit_threads`` the native trainer reads ``measure()`` once, when a run starts, and
uses at most ``CpuBudget.threads`` torch threads and core threads (``train.torch_threads`` and
``train.core_threads`` are then upper bounds); the run's configuration keeps the numbers used, with
``fit_threads`` false, so that a checkpoint's config reruns them. A run's threads work in lockstep
(torch's two update threads wait for each other at every layer, and the forward passes wait for
the core's stepping threads), so one thread the operating system has descheduled for another
process holds up the rest: beside one busy process on two cores, two torch threads learn from a
few thousand decisions a second where one learns from tens of thousands. ``measure`` therefore
counts the CPUs the process may use (its affinity, and the cgroup's CPU quota: a container's
share) and how many of those are idle right now (``/proc/stat`` over a short interval).

The thread counts change a run's numbers (torch's sums are split differently), so a run that must
be reproduced on a machine whose load varies fixes them (``train.fit_threads=false``).
"""

from __future__ import annotations

import math
import os
import time
from dataclasses import dataclass
from pathlib import Path

SAMPLE_SECONDS = 0.25  # how long the idle CPUs are watched
CGROUP_V2 = Path("/sys/fs/cgroup/cpu.max")
CGROUP_V1 = (Path("/sys/fs/cgroup/cpu/cpu.cfs_quota_us"), Path("/sys/fs/cgroup/cpu/cpu.cfs_period_us"))
PROC_STAT = Path("/proc/stat")
MAX_PROC_LINE = 4096  # the first line of /proc/stat is well under this


@dataclass(frozen=True)
class CpuBudget:
    """The CPUs this process may use (``available``) and how many of them were idle when
    measured (``idle``, fractional; ``available`` where it cannot be measured)."""

    available: int
    idle: float

    @property
    def threads(self) -> int:
        """Threads that will not wait on each other for a CPU: the idle CPUs, at least one."""
        return max(1, min(self.available, math.floor(self.idle + 0.5)))


def _quota(text: str) -> float | None:
    """CPUs allowed by a cgroup v2 ``cpu.max`` line (``"max 100000"``: no limit)."""
    parts = text.split()
    if len(parts) != 2 or parts[0] == "max":
        return None
    quota, period = float(parts[0]), float(parts[1])
    return quota / period if quota > 0 and period > 0 else None


def available_cpus() -> int:
    """The CPUs this process may run on: its affinity, capped by the cgroup's CPU quota."""
    try:
        count = len(os.sched_getaffinity(0))
    except (AttributeError, OSError):
        count = os.cpu_count() or 1
    quota = None
    try:
        if CGROUP_V2.is_file():
            quota = _quota(CGROUP_V2.read_text()[:MAX_PROC_LINE])
        elif CGROUP_V1[0].is_file():
            q, p = (float(f.read_text()[:MAX_PROC_LINE]) for f in CGROUP_V1)
            quota = q / p if q > 0 and p > 0 else None
    except (OSError, ValueError):
        quota = None
    if quota is not None:
        count = min(count, max(1, math.ceil(quota - 1e-9)))
    return max(1, count)


def _cpu_ticks() -> tuple[int, int] | None:
    """(idle, total) jiffies of all CPUs from ``/proc/stat``; None where there is none."""
    try:
        with PROC_STAT.open() as f:
            line = f.readline(MAX_PROC_LINE)
    except OSError:
        return None
    fields = line.split()
    if len(fields) < 5 or fields[0] != "cpu":
        return None
    values = [int(v) for v in fields[1:9] if v.isdigit()]
    idle = values[3] + (values[4] if len(values) > 4 else 0)  # idle + iowait
    return idle, sum(values)


def measure(seconds: float = SAMPLE_SECONDS) -> CpuBudget:
    """The CPUs available and how many of them are idle over ``seconds``."""
    available = available_cpus()
    first = _cpu_ticks()
    if first is None:
        return CpuBudget(available, float(available))
    time.sleep(seconds)
    second = _cpu_ticks()
    if second is None or second[1] <= first[1]:
        return CpuBudget(available, float(available))
    share = (second[0] - first[0]) / (second[1] - first[1])  # of every CPU of the machine
    machine = os.cpu_count() or available
    return CpuBudget(available, min(float(available), share * machine))
