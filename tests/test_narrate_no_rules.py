"""The narrator holds no rule of its own: its numbers and names come from the engine.

The narrate modules (``views/narrate*.py``) are read as syntax trees: no number but 0 and 1 in
their code (a board size, a cost or a count would be a copy of a rule: they ask the engine's
tables and functions), no number but 1 in their text, no private name of the engine (``_x``)
and none of the wall's bit layout (cell names are ``engine.describe.cell_label``). And an
action is put into words by ``action_words`` everywhere, not by a label taken off a choice.

The text face for language models (``views/prompt.py``) is read the same way: its one number is a
layout constant it names (``TEXT_BUDGET``, how long a seat's text may grow), no rule.

So are the web app's words for the table (``web/words.py``, ``web/recap.py``, ``web/seatview.py``,
``web/moves.py``): what the petition gives and why Build 2 blocks is not offered are the engine's
answers (``petition_prize``, ``double_build_refusal``), worded. Every other web module holds the
server's own numbers (statuses, limits, sizes), so it is read for the rest: no private name of
the engine and none of the wall's bit layout.
"""

from __future__ import annotations

import ast
import re
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
PACKAGE = ROOT / "island_fortress_env"
NARRATE = sorted((PACKAGE / "views").glob("narrate*.py"))
TEXT_FACE = PACKAGE / "views" / "prompt.py"
WEB = sorted((PACKAGE / "web").glob("*.py"))
WEB_WORDS = [PACKAGE / "web" / name for name in ("words.py", "recap.py", "seatview.py", "moves.py")]
# The module-level constants of a module that are layout (a size), not rules, by name.
LAYOUT_CONSTANTS = {
    "prompt.py": frozenset({"TEXT_BUDGET"}),
    # the warnings' redeal seed and how many forced moves they follow: how they look, no rule
    "words.py": frozenset({"_REDEAL_SEED", "_FORCED_FOLLOWED"}),
}
ALLOWED_NUMBERS = {0, 1}  # nothing, one, and the step from an index to its 1-based name
WALL_LAYOUT = {"STRIDE", "COLUMNS_PER_REGION", "CELLS_PER_REGION", "bit_of", "iter_bits"}


def _format_specs(tree: ast.AST) -> set[int]:
    """The ids of the nodes inside f-string format specs (``:4d``, ``:<6``): layout, not rules."""
    inside: set[int] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.FormattedValue) and node.format_spec is not None:
            inside.update(id(n) for n in ast.walk(node.format_spec))
    return inside


def _layout_constants(tree: ast.Module, names: frozenset[str]) -> set[int]:
    """The ids of the values of the module-level constants named in ``names`` (``TEXT_BUDGET =
    3990``): a number given a name of its own at the top of the module, read as layout."""
    inside: set[int] = set()
    for node in tree.body:
        if not isinstance(node, (ast.Assign, ast.AnnAssign)) or node.value is None:
            continue
        targets = node.targets if isinstance(node, ast.Assign) else [node.target]
        if all(isinstance(t, ast.Name) and t.id in names for t in targets):
            inside.update(id(n) for n in ast.walk(node.value))
    return inside


def rule_copies(source: str, layout_names: frozenset[str] = frozenset()) -> list[str]:
    """What in ``source`` looks like a rule of its own: each finding with its line. The
    module-level constants named in ``layout_names`` are layout, not rules."""
    tree = ast.parse(source)
    layout = _format_specs(tree) | _layout_constants(tree, layout_names)
    found = []
    for node in ast.walk(tree):
        line = getattr(node, "lineno", 0)
        if isinstance(node, ast.Constant) and id(node) not in layout:
            value = node.value
            if isinstance(value, int) and not isinstance(value, bool) and value not in ALLOWED_NUMBERS:
                found.append(f"line {line}: the number {value}")
            elif isinstance(value, str) and node is not _docstring_of(tree, node):
                numbers = [n for n in re.findall(r"\d+", value) if n != "1"]
                if numbers:
                    found.append(f"line {line}: the number {numbers[0]} in {value!r}")
        elif isinstance(node, ast.Attribute) and _private(node.attr) and not _own(node):
            found.append(f"line {line}: the private {node.attr}")
        elif isinstance(node, ast.ImportFrom):
            for alias in node.names:
                if alias.name.startswith("_"):
                    found.append(f"line {line}: imports the private {alias.name}")
                if alias.name in WALL_LAYOUT:
                    found.append(f"line {line}: imports the wall's layout ({alias.name})")
    return found


def _private(name: str) -> bool:
    """``_x``, not a dunder such as ``__name__`` (Python's, not the engine's)."""
    return name.startswith("_") and not (name.startswith("__") and name.endswith("__"))


def _own(node: ast.Attribute) -> bool:
    """``self._x``: the narrator's own helpers, not the engine's."""
    return isinstance(node.value, ast.Name) and node.value.id == "self"


def _docstring_of(tree: ast.AST, node: ast.Constant) -> ast.Constant | None:
    """``node`` itself when it is a docstring (prose may give an example such as "R2-L3-C4")."""
    for owner in ast.walk(tree):
        if isinstance(owner, (ast.Module, ast.FunctionDef, ast.ClassDef)) and owner.body:
            first = owner.body[0]
            if isinstance(first, ast.Expr) and first.value is node:
                return node
    return None


def test_the_narrator_is_in_modules_of_one_concern_each():
    names = {path.stem for path in NARRATE}
    assert {"narrate", "narrate_words", "narrate_events", "narrate_choices", "narrate_refusals"} <= names
    for path in NARRATE:
        assert len(path.read_text("utf-8").splitlines()) < 600, path.name


@pytest.mark.parametrize("path", NARRATE, ids=lambda p: p.name)
def test_a_narrate_module_copies_no_rule(path):
    assert rule_copies(path.read_text("utf-8")) == []


@pytest.mark.parametrize(
    ("source", "finding"),
    [
        ("region, k = divmod(cell, 17)", "the number 17"),  # the old cell names
        ("dead = (laborers + 1) // 2", "the number 2"),
        ("text = 'sends 2 Convicts'", "the number 2 in 'sends 2 Convicts'"),
        ("ok = state._workers(p)", "the private _workers"),
        ("log = self.state._log", "the private _log"),
        ("from island_fortress_env.engine.wall import STRIDE", "the wall's layout (STRIDE)"),
        ("from island_fortress_env.engine.phases.action import _REPEAT_COST", "the private _REPEAT_COST"),
    ],
)
def test_the_check_finds_a_copied_rule(source, finding):
    assert any(finding in line for line in rule_copies(source)), rule_copies(source)


def test_the_text_face_copies_no_rule():
    """``views/prompt.py`` (a seat's text for a language model) takes every number and word from
    the engine and the narrator, like the narrate modules."""
    source = TEXT_FACE.read_text("utf-8")
    assert rule_copies(source, LAYOUT_CONSTANTS[TEXT_FACE.name]) == []
    assert len(source.splitlines()) < 600


def test_only_a_named_layout_constant_may_hold_a_number():
    source = "TEXT_BUDGET = 3990\nOTHER = 17\nx = TEXT_BUDGET - 2\n"
    found = rule_copies(source, frozenset({"TEXT_BUDGET"}))
    assert [line.split(": ", 1)[1] for line in found] == ["the number 17", "the number 2"]
    assert any("3990" in line for line in rule_copies(source))


def test_formatting_and_docstrings_are_not_rules():
    source = '"""R2-L3-C4."""\nline = f"{name:<6} {score:4d}"\nlabel = "Trade in a card for 1 Jade"\n'
    assert rule_copies(source) == []


def test_every_action_is_put_into_words_by_action_words():
    """No module but the one defining ``action_words`` takes ``describe_choice(...).label`` for
    an action's words: ``action_words`` says an action the same way for the command line, the
    terminal, the web app, a bot and the docs."""
    pattern = re.compile(r"describe_choice\([^()]*\)\.label")
    users = [
        path.relative_to(ROOT).as_posix()
        for path in sorted(PACKAGE.rglob("*.py"))
        if path.name != "narrate_choices.py" and pattern.search(path.read_text("utf-8"))
    ]
    assert users == []


@pytest.mark.parametrize("path", WEB_WORDS, ids=lambda p: p.name)
def test_the_web_apps_words_for_the_table_copy_no_rule(path):
    assert rule_copies(path.read_text("utf-8"), LAYOUT_CONSTANTS.get(path.name, frozenset())) == []


@pytest.mark.parametrize("path", WEB, ids=lambda p: p.name)
def test_no_web_module_reads_the_engines_private_names_or_wall_layout(path):
    found = [f for f in rule_copies(path.read_text("utf-8")) if "the number" not in f]
    assert found == []


def test_a_dunder_is_no_private_name_of_the_engine():
    assert rule_copies("name = type(err).__name__\nx = state.__class__") == []
    assert rule_copies("x = state._log") == ["line 1: the private _log"]
