"""Shared test configuration: the Hypothesis profiles.

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

from hypothesis import HealthCheck, settings

_COMMON = {
    "deadline": None,
    "print_blob": True,
    "suppress_health_check": [HealthCheck.too_slow, HealthCheck.data_too_large],
}
settings.register_profile("ci", max_examples=40, derandomize=True, database=None, **_COMMON)
settings.register_profile("dev", max_examples=150, **_COMMON)
settings.register_profile("thorough", max_examples=1000, **_COMMON)
settings.load_profile(os.environ.get("HYPOTHESIS_PROFILE", "ci"))
