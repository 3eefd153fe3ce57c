"""Run a check in a forked child process, so a crash or a hang fails the test instead of ending
the test run; and compare what two calls return or raise."""

from __future__ import annotations

import gc
import os
import signal
import time
import traceback
from collections.abc import Callable
from typing import Any


def isolated(fn: Callable[[], None], timeout: float = 60.0) -> str | None:
    """Runs ``fn()`` in a forked child process; None when it returned, else why not (its
    traceback, the signal that ended it, or that it hung past ``timeout`` seconds)."""
    if not hasattr(os, "fork"):  # pragma: no cover - every platform the core builds on forks
        fn()
        return None
    read, write = os.pipe()
    gc.freeze()  # the child's collections skip the parent's objects: no copying of their pages
    pid = os.fork()
    if pid:
        gc.unfreeze()
    else:  # the child: report and leave without running the parent's exit handlers
        os.close(read)
        status = 0
        try:
            fn()
        except BaseException:
            os.write(write, traceback.format_exc()[-8000:].encode())
            status = 1
        os._exit(status)
    os.close(write)
    deadline = time.monotonic() + timeout
    while True:
        done, status = os.waitpid(pid, os.WNOHANG)
        if done:
            break
        if time.monotonic() > deadline:
            os.kill(pid, signal.SIGKILL)
            os.waitpid(pid, 0)
            os.close(read)
            return f"hung for more than {timeout:.0f} s"
        time.sleep(0.002)
    with os.fdopen(read, "rb") as pipe:
        report = pipe.read().decode(errors="replace")
    if os.WIFSIGNALED(status):
        return f"crashed: {signal.Signals(os.WTERMSIG(status)).name}"
    if os.WEXITSTATUS(status):
        return report or f"exited with status {os.WEXITSTATUS(status)}"
    return None


def check_isolated(fn: Callable[[], None], timeout: float = 60.0) -> None:
    failure = isolated(fn, timeout)
    assert failure is None, failure


def outcome(fn: Callable[[], Any]) -> Any:
    """``fn()``'s result, or the type of the exception it raised."""
    try:
        return fn()
    except Exception as exc:
        return type(exc)


def raised(result: Any) -> bool:
    return isinstance(result, type) and issubclass(result, BaseException)
