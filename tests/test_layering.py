"""The rules engine stands alone: its modules import only the standard library and each
other (no RL library, no module of the package above the engine)."""

from __future__ import annotations

import ast
import sys
from pathlib import Path

import pytest

ENGINE = Path(__file__).resolve().parent.parent / "island_fortress_env" / "engine"


@pytest.mark.parametrize("path", sorted(ENGINE.rglob("*.py")), ids=lambda p: p.name)
def test_engine_module_imports_only_the_standard_library_and_the_engine(path):
    tree = ast.parse(path.read_text("utf-8"))
    depth = len(path.relative_to(ENGINE).parts)  # 1 for engine/x.py, 2 for engine/pkg/x.py
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom):
            if node.level:
                assert node.level <= depth, f"{path.name} imports from above the engine: {ast.unparse(node)}"
            else:
                top = (node.module or "").split(".")[0]
                assert top in sys.stdlib_module_names or top == "__future__", ast.unparse(node)
        elif isinstance(node, ast.Import):
            for alias in node.names:
                assert alias.name.split(".")[0] in sys.stdlib_module_names, ast.unparse(node)
