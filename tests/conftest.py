"""Shared test configuration: the backend fixture and the Hypothesis profiles.

The ``backend`` fixture: a test that takes ``backend`` runs once per backend of the game, the C++
core (``"core"``, skipped where it is not built) and the Python engine (``"python"``), and passes
it to ``island_fortress_v0.env(..., backend=backend)`` or ``core.Game(..., backend=backend)``.
``--backend core`` (or ``python``) runs those tests on one backend only.

Hypothesis profiles (pick one with ``HYPOTHESIS_PROFILE=<name>``; ``ci`` is the default):

* ``ci``: a modest number of examples, no deadline (CI machines are slow and shared) and
  derandomized, so every run tries the same examples: fast and never flaky.
* ``dev``: more, freshly random examples (failures are saved in ``.hypothesis/`` and replayed
  first next time), for a local run before a change to the engine.
* ``thorough``: many random examples, for a nightly or a hunt after a reported bug.

Example: ``HYPOTHESIS_PROFILE=thorough .venv/bin/python -m pytest -q tests/test_properties.py``.
"""

from __future__ import annotations

import os

import pytest
from hypothesis import HealthCheck, settings

from island_fortress_env import core


def pytest_addoption(parser: pytest.Parser) -> None:
    parser.addoption(
        "--backend",
        action="append",
        choices=core.BACKENDS,
        help="run the tests that take the `backend` fixture on this backend only (repeatable; "
        "default: every backend)",
    )


def pytest_generate_tests(metafunc: pytest.Metafunc) -> None:
    if "backend" in metafunc.fixturenames:
        chosen = metafunc.config.getoption("backend") or core.BACKENDS
        not_built = pytest.mark.skipif(
            not core.available(), reason=f"the C++ core is not built ({core.build_error()})"
        )
        metafunc.parametrize(
            "backend",
            [pytest.param(b, marks=[not_built] if b == "core" else []) for b in core.BACKENDS if b in chosen],
        )


_COMMON = {
    "deadline": None,
    "print_blob": True,
    "suppress_health_check": [HealthCheck.too_slow, HealthCheck.data_too_large],
}
settings.register_profile("ci", max_examples=40, derandomize=True, database=None, **_COMMON)
settings.register_profile("dev", max_examples=150, **_COMMON)
settings.register_profile("thorough", max_examples=1000, **_COMMON)
settings.load_profile(os.environ.get("HYPOTHESIS_PROFILE", "ci"))


@pytest.fixture
def client(tmp_path):
    """The web app (``random`` and ``heuristic`` offered) on a games directory of the test's own,
    through Starlette's test client (skipped without the [web] extra)."""
    from tests.web_client import client_for

    with client_for(tmp_path / "games") as c:
        yield c


@pytest.fixture(scope="module")
def tiny_native(tmp_path_factory):
    """A tiny native run of 1,200 decisions (long enough for games to end), once per module:
    its folder, its config and its final checkpoint."""
    from native_runs import tiny_config

    from island_fortress_env.training.ppo import train_native

    base = tmp_path_factory.mktemp("native")
    cfg = tiny_config(base, "tiny", "train.total_decisions=1200")
    return base, cfg, train_native(cfg)
