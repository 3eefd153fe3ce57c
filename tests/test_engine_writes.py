"""Only the engine changes an engine state: no module above it writes a state's fields.

Every module of the package outside ``engine/`` (and the examples) is read with ``ast``; a
write is an assignment, augmented assignment or ``del`` whose target is a field of an engine
state (``StateFields``) or an item of one (``state.bids[p] = ...``), an in-place list method
called on a field (``state.deck.reverse()``), or ``setattr`` on a state. An expression is
taken for an engine state when it is a name annotated with ``State`` (``state: State``,
``engine: EngineState``), a name bound to ``x.clone()``, ``x.new_initial_state(...)``,
``x.game_state`` or ``x.engine``, or such an attribute itself (``env.unwrapped.game_state``).
Tests may build scenarios by writing fields (``tests/scenario.py``); the package and its
examples go through the engine's API (``apply_action``, ``engine.visibility.redeal_unseen``,
``with_block``).
"""

from __future__ import annotations

import ast
import re
from collections.abc import Iterator
from pathlib import Path

import pytest

from island_fortress_env.engine.fields import StateFields

ROOT = Path(__file__).resolve().parent.parent
PACKAGE = ROOT / "island_fortress_env"

_STATE_ANNOTATION = re.compile(r"\b(State|EngineState)\b")
_STATE_ATTRIBUTES = ("game_state", "engine")  # env.unwrapped.game_state, a pyspiel state's .engine
_STATE_MAKERS = ("clone", "new_initial_state", "redeal_unseen", "with_block")
_FIELDS = frozenset(StateFields.__slots__)
_LIST_METHODS = frozenset(("append", "extend", "insert", "pop", "remove", "clear", "sort", "reverse"))


def _modules() -> list[Path]:
    """The package's modules outside the engine (training/ through its link), and the examples."""
    found = {
        p.resolve()
        for folder in (PACKAGE, ROOT / "training", ROOT / "examples")
        for p in folder.rglob("*.py")
        if "engine" not in p.relative_to(folder).parts[:1]
    }
    return sorted(found)


def _makes_state(value: ast.expr) -> bool:
    if isinstance(value, ast.Attribute):
        return value.attr in _STATE_ATTRIBUTES
    if isinstance(value, ast.Call):
        func = value.func
        name = func.attr if isinstance(func, ast.Attribute) else func.id if isinstance(func, ast.Name) else ""
        return name in _STATE_MAKERS
    return False


def _state_names(scope: ast.AST) -> set[str]:
    """Names in ``scope`` that hold an engine state (annotated, or bound to one)."""
    names = set()
    for node in ast.walk(scope):
        if isinstance(node, ast.arg) and node.annotation is not None:
            if _STATE_ANNOTATION.search(ast.unparse(node.annotation)):
                names.add(node.arg)
        elif isinstance(node, ast.AnnAssign) and isinstance(node.target, ast.Name):
            if _STATE_ANNOTATION.search(ast.unparse(node.annotation)):
                names.add(node.target.id)
        elif isinstance(node, ast.Assign) and _makes_state(node.value):
            names.update(t.id for t in node.targets if isinstance(t, ast.Name))
    return names


def _is_state(expr: ast.expr, names: set[str]) -> bool:
    if isinstance(expr, ast.Name):
        return expr.id in names
    return isinstance(expr, ast.Attribute) and expr.attr in _STATE_ATTRIBUTES


def _written_field(target: ast.expr, names: set[str]) -> Iterator[ast.expr]:
    if isinstance(target, (ast.Tuple, ast.List)):
        for element in target.elts:
            yield from _written_field(element, names)
        return
    if isinstance(target, ast.Starred):
        yield from _written_field(target.value, names)
        return
    while isinstance(target, ast.Subscript):
        target = target.value
    if isinstance(target, ast.Attribute) and target.attr in _FIELDS and _is_state(target.value, names):
        yield target


def engine_writes(source: str) -> list[str]:
    """The writes to engine-state fields in ``source`` (a module's text), as source lines."""
    tree = ast.parse(source)
    scopes = [tree, *(n for n in ast.walk(tree) if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef)))]
    found: dict[tuple[int, int], str] = {}
    for scope in scopes:
        names = _state_names(scope)
        for node in ast.walk(scope):
            targets: list[ast.expr] = []
            if isinstance(node, (ast.Assign, ast.Delete)):
                targets = list(node.targets)
            elif isinstance(node, (ast.AugAssign, ast.AnnAssign, ast.For)):
                targets = [node.target]
            for target in targets:
                for hit in _written_field(target, names):
                    found[(hit.lineno, hit.col_offset)] = ast.unparse(node).splitlines()[0]
            if isinstance(node, ast.Call):
                func = node.func
                if (
                    isinstance(func, ast.Attribute)
                    and func.attr in _LIST_METHODS
                    and isinstance(func.value, ast.Attribute)
                    and func.value.attr in _FIELDS
                    and _is_state(func.value.value, names)
                ):
                    found[(node.lineno, node.col_offset)] = ast.unparse(node)
                if (
                    isinstance(func, (ast.Name, ast.Attribute))
                    and ast.unparse(func) in ("setattr", "object.__setattr__")
                    and node.args
                    and _is_state(node.args[0], names)
                ):
                    found[(node.lineno, node.col_offset)] = ast.unparse(node)
    return [f"line {line}: {text}" for (line, _), text in sorted(found.items())]


@pytest.mark.parametrize("path", _modules(), ids=lambda p: str(p.relative_to(ROOT.resolve())))
def test_no_module_outside_the_engine_writes_an_engine_state(path):
    assert engine_writes(path.read_text("utf-8")) == [], f"{path.name} writes engine fields"


def test_the_modules_are_found():
    modules = _modules()
    names = {p.name for p in modules}
    assert {"observation.py", "picture.py", "openspiel.py", "play.py", "evaluate.py"} <= names
    engine = (PACKAGE / "engine").resolve()
    assert not [p for p in modules if p.is_relative_to(engine)], "the engine's own modules are not scanned"


# The scanner itself: what it must catch, and what it must leave alone.
CAUGHT = [
    "def f(state: State):\n    state.bids[0] = 1",
    "def f(engine: EngineState, p):\n    engine.favor_hand[p] |= 2",
    "def f(engine: 'State'):\n    engine.deck = []",
    "def f(s):\n    other = s.clone()\n    other.rng = 5",
    "def f(env):\n    env.unwrapped.game_state.score[0] += 1",
    "def f(self):\n    self.engine._legal = None",
    "def f(game):\n    st = game.new_initial_state(1)\n    st.deck.reverse()",
    "def f(state: State):\n    setattr(state, 'rng', 1)",
    "def f(state: State):\n    state.jade[0], state.jade[1] = 1, 2",
    "def f(state: State | None):\n    del state.order[0]",
]
LEFT_ALONE = [
    "def f(t):\n    t.score += 1",  # a tally, not a state
    "def f(self):\n    self.rng = 3",  # an object's own field
    "def f(state: State):\n    x = state.bids[0]\n    x += 1",
    "def f(state: State):\n    bids = list(state.bids)\n    bids.append(1)",
    "def f(self, game):\n    self._deal = Deal(game, redeal_unseen(self.engine, 0, 1))",
    "def f(game):\n    state = game.new_initial_state()\n    state._deal = None",  # a pyspiel state's own
]


@pytest.mark.parametrize("source", CAUGHT)
def test_the_scan_catches_a_write(source):
    assert engine_writes(source) != []


@pytest.mark.parametrize("source", LEFT_ALONE)
def test_the_scan_leaves_other_objects_alone(source):
    assert engine_writes(source) == []
