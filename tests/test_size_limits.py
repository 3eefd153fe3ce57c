"""The limits the project holds itself to: no source file over 600 lines, the README at most 250.

A file past the limit is split where its parts mean different things (a module per part, as
``players/runner.py`` and ``players/seat_policies.py``); the README keeps the commands and one table
of the shipped agent, and links the pages that hold the rest.
"""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
MAX_SOURCE_LINES = 600
MAX_README_LINES = 250
SOURCE_SUFFIXES = (".py", ".cpp", ".h", ".js", ".css", ".html", ".toml", ".yaml")


def _sources() -> list[Path]:
    try:
        listed = subprocess.run(
            ["git", "ls-files", "--cached", "--others", "--exclude-standard"],
            cwd=ROOT, capture_output=True, text=True, check=True,
        ).stdout.split()  # fmt: skip
    except (OSError, subprocess.CalledProcessError):
        pytest.skip("not a git checkout: the source files cannot be listed")
    return [ROOT / name for name in listed if name.endswith(SOURCE_SUFFIXES) and (ROOT / name).is_file()]


def test_no_source_file_is_over_600_lines() -> None:
    sources = _sources()
    assert len(sources) > 100
    long = {
        str(p.relative_to(ROOT)): n
        for p in sources
        if (n := len(p.read_bytes().splitlines())) > MAX_SOURCE_LINES
    }
    assert long == {}, f"over {MAX_SOURCE_LINES} lines: split them"


def test_the_readme_is_at_most_250_lines() -> None:
    lines = len((ROOT / "README.md").read_text("utf-8").splitlines())
    assert lines <= MAX_README_LINES, f"README.md has {lines} lines: move detail to docs/ and link it"
