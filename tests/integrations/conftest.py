"""Helpers for the integration tests: load an example script as a module."""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path
from types import ModuleType

import pytest

EXAMPLES = Path(__file__).resolve().parents[2] / "examples"


def load_example(name: str) -> ModuleType:
    """``examples/<name>.py`` imported as a module (its ``main()`` is not run)."""
    spec = importlib.util.spec_from_file_location(f"examples_{name}", EXAMPLES / f"{name}.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module
    spec.loader.exec_module(module)
    return module


class StopBeforeWork(Exception):
    """Raised in place of an example's first heavy call (``torch_threads_at_start``)."""


def torch_threads_at_start(
    monkeypatch: pytest.MonkeyPatch, example: ModuleType, first_call: str, argv: list[str]
) -> list[int]:
    """Run ``example.main()`` with ``argv`` up to its first heavy call (``first_call``, a function
    of the example, replaced by one that stops the run) and return the thread counts it gave
    ``torch.set_num_threads`` before that."""
    calls: list[int] = []
    monkeypatch.setattr(example.torch, "set_num_threads", calls.append)

    def stop(*args: object, **kwargs: object) -> None:
        raise StopBeforeWork

    monkeypatch.setattr(example, first_call, stop)
    monkeypatch.setattr(sys, "argv", [f"{example.__name__}.py", *argv])
    with pytest.raises(StopBeforeWork):
        example.main()
    return calls
