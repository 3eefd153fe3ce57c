"""Every seed a run or a game derives is a named stream of its seed (``players.seeds``).

* No numeric seed offset is left in the package or in ``training/``: no arithmetic between a seed
  and a number or a module constant (``seed + 50_000``, ``seed + STRIDE * t + g``), and no
  ``SeedSequence`` of a seed beside a literal (``SeedSequence([seed, 999])``). The one salt left
  is the random chooser's ``CHOOSER_SALT``, part of the game's definition (the C++ core's too).
* The same seed gives the same streams; different purposes, keys and seeds give different ones;
  every stream seed is a deal seed the engines take.
* ``evaluate`` twice with one seed plays the same games, dealt from its ``evaluation`` stream.
"""

from __future__ import annotations

import ast
import re
from pathlib import Path

import numpy as np
import pytest

from island_fortress_env.engine.rng import CHOOSER_SALT, DEAL_SEED_BITS
from island_fortress_env.engine.state import Game
from island_fortress_env.env.records import load
from island_fortress_env.players.seeds import Stream, agent_seed, generator, stream_key, stream_seed
from island_fortress_env.training import evaluate as ev

ROOT = Path(__file__).resolve().parent.parent
SCANNED = (ROOT / "island_fortress_env", ROOT / "training")
SEED_NAME = re.compile(r"(^|_)seed$", re.IGNORECASE)  # seed, cfg.seed, batch_seed; not seeds
CONSTANT_NAME = re.compile(r"^_?[A-Z][A-Z0-9_]*$")
GAME_SALTS = {"CHOOSER_SALT"}  # the game's own rule (engine.rng), not a stream of a run
ARITHMETIC = (ast.Add, ast.Sub, ast.Mult, ast.BitXor, ast.BitOr, ast.Mod, ast.LShift)


def _name(node: ast.AST) -> str | None:
    if isinstance(node, ast.Name):
        return node.id
    if isinstance(node, ast.Attribute):
        return node.attr
    return None


def _leaves(node: ast.AST) -> list[ast.AST]:
    """The operands of a chain of arithmetic (``a + b * c - 1``: a, b, c, 1)."""
    if isinstance(node, ast.BinOp) and isinstance(node.op, ARITHMETIC):
        return _leaves(node.left) + _leaves(node.right)
    return [node]


def _is_number(node: ast.AST) -> bool:
    return isinstance(node, ast.Constant) and type(node.value) in (int, float)


def _is_offset(node: ast.AST) -> bool:
    """A number or a module constant (but a game salt) beside a seed."""
    if _is_number(node):
        return True
    name = _name(node)
    return name is not None and bool(CONSTANT_NAME.match(name)) and name not in GAME_SALTS


def offsets(source: str) -> list[str]:
    """The numeric seed offsets of ``source``, as text."""
    found = []
    tree = ast.parse(source)
    parents = {child: node for node in ast.walk(tree) for child in ast.iter_child_nodes(node)}
    for node in ast.walk(tree):
        if isinstance(node, ast.BinOp) and isinstance(node.op, ARITHMETIC):
            if isinstance(parents.get(node), ast.BinOp) and isinstance(parents[node].op, ARITHMETIC):
                continue  # the whole chain is read once, from its top
            leaves = _leaves(node)
            seeded = any(SEED_NAME.search(_name(leaf) or "") for leaf in leaves)
            if seeded and any(_is_offset(leaf) for leaf in leaves):
                found.append(ast.unparse(node))
        elif isinstance(node, ast.Call) and _name(node.func) == "SeedSequence":
            given = [*node.args[:1], *(k.value for k in node.keywords if k.arg in ("entropy", "spawn_key"))]
            for value in given:
                if isinstance(value, ast.List | ast.Tuple) and any(_is_number(e) for e in value.elts):
                    found.append(ast.unparse(node))
    return found


def test_the_scan_finds_the_offsets_it_is_for_and_nothing_else():
    old = """
seed = cfg.seed * 100_003 + 50_000 + 1000 * n
game_seed = seed + TABLE_SEED_STRIDE * t + g
result = run(cfg.seed + FINAL_EVAL_SEED)
draw = random.Random(seed * 1_000_003 + i)
rng = np.random.default_rng(np.random.SeedSequence([cfg.seed, 999]))
rng = np.random.SeedSequence(seed, spawn_key=(KEY, 1))
"""
    assert len(offsets(old)) == 6
    fine = """
chooser = seed ^ CHOOSER_SALT
pick = rng.seed_state(seed ^ rng.CHOOSER_SALT)
runs = [seed + k for k in range(seeds)]
bound = 2**64 - 1
sequence = np.random.SeedSequence(seed, spawn_key=(stream_key(name), game, index))
"""
    assert offsets(fine) == []
    assert offsets("last = seed + seeds - 1") == ["seed + seeds - 1"]  # a seed beside a number


def test_no_numeric_seed_offset_is_left_in_the_package_or_the_trainers():
    found = {}
    for folder in SCANNED:
        for path in sorted(folder.rglob("*.py")):
            hits = offsets(path.read_text("utf-8"))
            if hits:
                found[str(path.relative_to(ROOT))] = hits
    assert found == {}, "derive these from the seed by name (players.seeds.stream_seed)"


def test_the_chooser_salt_is_the_one_the_core_uses():
    source = (ROOT / "island_fortress_env" / "core" / "src" / "batch.cpp").read_text("utf-8")
    assert re.search(rf"kChooserSalt = 0x{CHOOSER_SALT:X};", source)


def test_the_same_seed_gives_the_same_streams():
    for stream in Stream:
        assert stream_seed(7, stream, 3) == stream_seed(7, stream, 3)
        draws = [generator(7, stream, 3).integers(2**63, size=8).tolist() for _ in range(2)]
        assert draws[0] == draws[1]
    assert agent_seed(5, 2, 1) == stream_seed(5, Stream.AGENTS, 2, 1)


def test_purposes_keys_and_seeds_give_different_streams():
    assert len({stream.value for stream in Stream}) == len(Stream)
    assert len({stream_key(stream.value) for stream in Stream}) == len(Stream)
    for seed in (0, 1, 2**64 - 1):
        assert len({stream_seed(seed, stream) for stream in Stream}) == len(Stream)
    deals = {stream_seed(s, Stream.EVALUATION, g) for s in range(4) for g in range(4)}
    assert len(deals) == 16  # seed s + 1 does not deal game g + 1 of seed s (as seed + g did)
    tables = {stream_seed(0, Stream.TOURNAMENT, t, g) for t in range(3) for g in range(3)}
    assert len(tables) == 9
    first = generator(0, Stream.MINIBATCHES, 0).permutation(64)
    assert first.tolist() != generator(0, Stream.MINIBATCHES, 1).permutation(64).tolist()


def test_a_stream_seed_is_a_deal_seed_the_engines_take():
    for stream in Stream:
        seed = stream_seed(2**64 - 1, stream, 9)
        assert isinstance(seed, int) and 0 <= seed < 2**DEAL_SEED_BITS
        Game(num_players=2).new_initial_state(seed)
    assert stream_seed(0, Stream.EVALUATION, 0) != np.random.SeedSequence(0).generate_state(1, np.uint64)[0]


def test_evaluation_games_of_one_seed_are_the_same_games(tmp_path):
    runs = []
    for k in range(2):
        result = ev.evaluate(["random", "heuristic"], games=2, seed=4, save_games=tmp_path / str(k))
        records = [load(path) for path in result["saved_games"]]
        runs.append(([(r.seed, list(r.actions)) for r in records], result["agents"]))
    assert runs[0] == runs[1]
    deals = [seed for seed, _actions in runs[0][0]]
    assert deals == [stream_seed(4, Stream.EVALUATION, g) for g in range(2)]
    agents = {agent_seed(4, g, i) for g in range(2) for i in range(2)}
    assert agents.isdisjoint(deals + [ev.env_game_seed(d) for d in deals])  # no agent is told a deal


@pytest.mark.parametrize("seed", [0, 3])
def test_another_evaluation_seed_deals_other_games(seed):
    dealt = [stream_seed(seed, Stream.EVALUATION, g) for g in range(3)]
    other = [stream_seed(seed + 1, Stream.EVALUATION, g) for g in range(3)]
    assert set(dealt).isdisjoint(other)
