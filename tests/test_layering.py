"""The package's folders are its layers, and imports run one way.

Lowest first: ``engine`` (the rules, standard library only) <- ``core`` (the same rules in C++)
<- ``baseline`` (the rule-based heuristic player) <- ``views`` (read a state) <- ``env``
(PettingZoo) <- ``vector`` (many games per call, on either backend) <- ``agents`` <- ``adapters``
(other libraries' routes) <- ``players`` (agent specs, search players) <- ``web`` <- ``training``
<- ``research`` (the workflows that drive the trainer) <- ``cli`` (the command line). A module may
import its own layer and the layers below it, never one above; nothing imports the CLI but its
``__main__``; and no two
modules import each other, directly or around a loop, not even from inside a function or for type
annotations only (``if TYPE_CHECKING:``). Every import counts in both checks, wherever it stands.
"""

from __future__ import annotations

import ast
import itertools
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
PACKAGE = "island_fortress_env"
LAYERS = (
    "engine", "core", "baseline", "views", "env", "vector", "agents", "adapters", "players", "web",
    "training", "research", "cli",
)  # fmt: skip
# Modules at the package's top: the versioned entry sits with the env it re-exports; the
# statistics (standard library only, openskill when rating) sit lowest, for every layer to use.
TOP_MODULES = {"__init__": "engine", "island_fortress_v0": "env", "stats": "engine"}
CLI = f"{PACKAGE}.cli.app"  # the table of commands and main: run by cli/__main__ and the console script
CLI_ENTRY = f"{PACKAGE}.cli.__main__"


def _modules() -> dict[str, Path]:
    """Every module of the package by dotted name (``training/`` is installed as a subpackage)."""
    found = {}
    for path in sorted((ROOT / PACKAGE).rglob("*.py")):
        rel = path.relative_to(ROOT / PACKAGE)
        if rel.parts[0] == "training":
            continue  # the link to the top-level training/ folder, read below
        found[_dotted(PACKAGE, rel)] = path
    for path in sorted((ROOT / "training").rglob("*.py")):
        found[_dotted(f"{PACKAGE}.training", path.relative_to(ROOT / "training"))] = path
    return found


def _dotted(prefix: str, rel: Path) -> str:
    parts = [*rel.with_suffix("").parts]
    if parts[-1] == "__init__":
        parts.pop()
    return ".".join([prefix, *parts])


MODULES = _modules()


def _layer(module: str) -> str:
    rest = module.split(".")[1:]
    if not rest:
        return TOP_MODULES["__init__"]
    if rest[0] in TOP_MODULES:
        return TOP_MODULES[rest[0]]
    assert rest[0] in LAYERS, f"{module} is in no layer: put it in one of {LAYERS}"
    return rest[0]


def _type_only_lines(tree: ast.Module) -> set[int]:
    """The lines of ``if TYPE_CHECKING:`` blocks: imports for annotations, never run."""
    lines: set[int] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.If) and "TYPE_CHECKING" in ast.unparse(node.test):
            for inner in node.body:
                lines.update(range(inner.lineno, (inner.end_lineno or inner.lineno) + 1))
    return lines


def _imports(module: str, path: Path) -> list[tuple[str, int, bool]]:
    """The package modules that ``module`` imports (anywhere in the file): each with its line and
    whether it is for type annotations only."""
    is_package = path.name == "__init__.py"
    here = module.split(".") if is_package else module.split(".")[:-1]
    tree = ast.parse(path.read_text("utf-8"))
    type_only = _type_only_lines(tree)
    found = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            names = [alias.name for alias in node.names]
        elif isinstance(node, ast.ImportFrom):
            base = ".".join(here[: len(here) - node.level + 1]) if node.level else ""
            target = ".".join(p for p in (base, node.module or "") if p)
            names = [f"{target}.{alias.name}" for alias in node.names]  # a module, or a name in one
        else:
            continue
        for name in names:
            if name.split(".")[0] == PACKAGE:
                # the deepest package module the name refers to (a name may be a function)
                while name not in MODULES and "." in name:
                    name = name.rsplit(".", 1)[0]
                if name in MODULES and name != module:
                    found.append((name, node.lineno, node.lineno in type_only))
    return found


GRAPH = {module: _imports(module, path) for module, path in MODULES.items()}


def test_every_module_is_in_a_layer():
    for module in MODULES:
        _layer(module)


@pytest.mark.parametrize("module", sorted(MODULES))
def test_imports_run_down_the_layers(module):
    mine = LAYERS.index(_layer(module))
    for target, line, _ in GRAPH[module]:
        theirs = LAYERS.index(_layer(target))
        assert theirs <= mine, (
            f"{module} (layer {LAYERS[mine]}) imports {target} (layer {LAYERS[theirs]}) at line {line}"
        )


def test_nothing_imports_the_cli():
    importers = sorted({m for m, targets in GRAPH.items() for t, _, _ in targets if t == CLI} - {CLI_ENTRY})
    assert importers == [], f"{importers} import the command line"


def _cycle_text(cycle: list[str]) -> str:
    """``a -> b -> a``, each import made for type annotations only marked so."""
    text = cycle[0]
    for here, there in itertools.pairwise(cycle):
        type_only = all(only for target, _, only in GRAPH[here] if target == there)
        text += (" -(type only)-> " if type_only else " -> ") + there
    return text


def test_no_import_cycles():
    """Every import counts: those inside functions too, so no cycle is dodged by a late import,
    and those for type annotations only (``if TYPE_CHECKING:``), so none is dodged by a type
    checker's view either. A submodule may import its own package."""
    done: set[str] = set()
    path: list[str] = []

    def visit(module: str) -> None:
        if module in path:
            cycle = [*path[path.index(module) :], module]
            raise AssertionError("import cycle: " + _cycle_text(cycle))
        if module in done:
            return
        path.append(module)
        for target, _, _ in GRAPH[module]:
            if target != module.rsplit(".", 1)[0]:  # a submodule may import its package
                visit(target)
        path.pop()
        done.add(module)

    for module in sorted(GRAPH):
        visit(module)


ENGINE = ROOT / PACKAGE / "engine"


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
