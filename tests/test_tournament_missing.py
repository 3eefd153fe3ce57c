"""``island-fortress tournament`` where openskill cannot be imported, in a process whose
sitecustomize makes it so (``sys.modules[name] = None``: an import of it raises ImportError): one
line naming what is missing and the extra that installs it, exit status 2, no game played."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent


@pytest.mark.parametrize(
    ("hidden", "named"),
    [
        (["openskill", "openskill.models"], "openskill"),  # not installed
        (["openskill.models"], "openskill.models"),  # installed, its ratings' module broken
    ],
)
def test_tournament_without_openskill_is_one_line_and_exit_2(tmp_path, hidden, named):
    (tmp_path / "sitecustomize.py").write_text(
        "import sys\n" + "".join(f"sys.modules[{name!r}] = None\n" for name in hidden), "utf-8"
    )
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(tmp_path), str(ROOT)])}
    done = subprocess.run(
        [sys.executable, "-m", "island_fortress_env.cli", "tournament", "random", "heuristic",
         "--games", "1", "--no-progress"],
        capture_output=True, text=True, env=env, timeout=120, cwd=tmp_path, stdin=subprocess.DEVNULL,
    )  # fmt: skip
    assert done.returncode == 2, done.stderr
    assert done.stderr.splitlines() == [
        f"island-fortress tournament: error: {named} is missing: pip install 'island-fortress-env[train]'"
    ]
    assert done.stdout == ""
