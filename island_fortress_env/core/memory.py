"""The memory a process may still take, and a check before a batch of games is made.

``available_memory`` is the least of the memory the system has available, what the process's
cgroup limit leaves and what its address-space limit leaves (None where none can be read);
``check_memory`` raises one ``MemoryError`` naming the batch before an allocation that would not
fit, rather than letting the C++ core fail halfway (``vector.VectorEnv``, ``vector.make_gym``).
"""

from __future__ import annotations

import os

__all__ = ["available_memory", "check_memory"]


def _read_int(path: str) -> int | None:
    try:
        with open(path) as f:
            text = f.read().strip()
    except OSError:
        return None
    return int(text) if text.isdigit() else None


def _proc_field(path: str, field: str) -> int | None:
    """A ``Name:   123 kB`` field of a /proc file, in bytes."""
    try:
        with open(path) as f:
            for line in f:
                if line.startswith(field + ":"):
                    return int(line.split()[1]) * 1024
    except (OSError, ValueError, IndexError):
        return None
    return None


def available_memory() -> int | None:
    """The bytes of memory this process may still take: the least of the memory the system has
    available, what its cgroup's limit leaves, and what its address-space limit leaves; None
    where none of these can be read."""
    found: list[int] = []
    available = _proc_field("/proc/meminfo", "MemAvailable")
    if available is None:
        try:
            available = os.sysconf("SC_AVPHYS_PAGES") * os.sysconf("SC_PAGE_SIZE")
        except (ValueError, OSError, AttributeError):
            available = None
    if available is not None:
        found.append(available)
    for limit_path, usage_path in (
        ("/sys/fs/cgroup/memory.max", "/sys/fs/cgroup/memory.current"),  # cgroup v2
        ("/sys/fs/cgroup/memory/memory.limit_in_bytes", "/sys/fs/cgroup/memory/memory.usage_in_bytes"),
    ):
        limit, usage = _read_int(limit_path), _read_int(usage_path)
        if limit is not None and usage is not None and limit < 2**60:
            found.append(max(limit - usage, 0))
    try:
        import resource
    except ImportError:  # not a POSIX system: no address-space limit to read
        resource = None  # type: ignore[assignment]
    if resource is not None:
        soft, _ = resource.getrlimit(resource.RLIMIT_AS)
        size = _proc_field("/proc/self/status", "VmSize")
        if soft != resource.RLIM_INFINITY and size is not None:
            found.append(max(soft - size, 0))
    return min(found) if found else None


def check_memory(num_games: int, per_game: int, what: str) -> None:
    """``MemoryError`` when ``num_games`` x ``per_game`` bytes exceed the memory available."""
    available = available_memory()
    needed = num_games * per_game
    if available is not None and needed > available:
        raise MemoryError(
            f"{what} for {num_games:,} games need about {needed:,} bytes ({per_game:,} a game), but "
            f"{available:,} bytes of memory are available: make fewer games"
        )
