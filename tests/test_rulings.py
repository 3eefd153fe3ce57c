"""Every ruling of docs/RULES.md (C1-C17, E1-E27) is cited where it is implemented and tested.

The Python engine (the readable reference) cites each ruling in the function that implements
it, the C++ core cites it beside its twin, and at least one test cites it beside the test that
checks it. A ruling added to docs/RULES.md fails here until all three cite it.
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
RULES = ROOT / "docs" / "RULES.md"
PYTHON_ENGINE = sorted((ROOT / "island_fortress_env" / "engine").rglob("*.py"))
CPP_CORE = sorted((ROOT / "island_fortress_env" / "core" / "src").glob("*.[ch]*"))
TESTS = sorted(p for p in (ROOT / "tests").rglob("*.py") if p.name != Path(__file__).name)


def ruling_ids() -> list[str]:
    """The ids docs/RULES.md rules on, in its order (each a bullet "- **C1** ...")."""
    return re.findall(r"^- \*\*([CE]\d+)\*\*", RULES.read_text("utf-8"), re.M)


def cited_in(paths: list[Path]) -> set[str]:
    """The ruling ids cited anywhere in ``paths`` ("C8", never part of "C80" or "0xC8")."""
    text = "\n".join(p.read_text("utf-8") for p in paths)
    return set(re.findall(r"(?<![A-Za-z0-9])([CE]\d+)(?![0-9])", text))


RULINGS = ruling_ids()


def test_docs_rules_lists_the_binding_rulings_and_the_engines_own() -> None:
    assert [f"C{i}" for i in range(1, 18)] + [f"E{i}" for i in range(1, 28)] == RULINGS


def test_cited_in_finds_whole_ids_only(tmp_path) -> None:
    sample = tmp_path / "sample.py"
    sample.write_text("x = 0xC8  # C80\n# docs/RULES.md E4, E27.\n")
    assert cited_in([sample]) == {"C80", "E4", "E27"}  # not C8 (in 0xC8, C80) nor E2 (in E27)


@pytest.mark.parametrize(
    ("where", "paths"),
    [("the Python engine", PYTHON_ENGINE), ("the C++ core", CPP_CORE), ("a test", TESTS)],
)
def test_every_ruling_is_cited(where: str, paths: list[Path]) -> None:
    missing = [r for r in RULINGS if r not in cited_in(paths)]
    assert not missing, f"rulings cited by no file of {where}: {missing}"
