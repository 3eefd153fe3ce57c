"""docs/SPACES.md's action and observation tables are generated from the code; keep them equal."""

from pathlib import Path

from island_fortress_env.cli.doc_tables import action_table, observation_table

ROOT = Path(__file__).resolve().parent.parent


def test_action_table_matches_code():
    assert action_table() in (ROOT / "docs" / "SPACES.md").read_text("utf-8")


def test_observation_table_matches_code():
    assert observation_table() in (ROOT / "docs" / "SPACES.md").read_text("utf-8")


def test_rules_document_states_the_binding_rulings():
    text = (ROOT / "docs" / "RULES.md").read_text("utf-8")
    for ruling in [f"**C{i}**" for i in range(1, 18)]:
        assert ruling in text


def test_readme_names_every_key_of_evaluate_json_and_no_other(monkeypatch):
    """The README's ``--json`` sentence against a rated evaluation's output (three distinct
    agents; the checkpoint's seat is played at random here, its file is only checked)."""
    import re

    from island_fortress_env.agents import RandomAgent
    from island_fortress_env.players import make_agent
    from island_fortress_env.training import evaluate as ev

    checkpoint = str(ROOT / "checkpoints" / "policy-2-4p.zip")
    monkeypatch.setattr(
        ev,
        "make_agent",
        lambda spec, seed=None: RandomAgent(seed=seed) if spec == checkpoint else make_agent(spec, seed),
    )
    result = ev.evaluate(["heuristic", "random", checkpoint], games=3, seed=0)
    produced = set(result) | {key for agent in result["agents"] for key in (*agent, *agent["rating"])}
    text = (ROOT / "README.md").read_text("utf-8")
    start = text.index("`--json` prints")
    sentence = text[start : text.index("\n\n", start)]
    assert set(re.findall(r'"(\w+)"', sentence)) == produced


def test_examples_install_the_way_the_readme_does():
    """Each example's docstring installs by the README's pip route: torch pinned first where
    its extras pull torch in, then the package editable with extras the package has."""
    import ast
    import importlib.metadata
    import re

    readme = (ROOT / "README.md").read_text("utf-8")
    assert 'pip install torch==2.13.0\npip install -e ".[train]"' in readme
    needs = importlib.metadata.requires("island-fortress-env") or []
    extras = {m.group(1) for m in (re.search(r'extra == "(\w+)"', r) for r in needs) if m}
    torch_extras = {e for e in extras if f'torch==2.13.0; extra == "{e}"' in needs}
    assert {"train", "tianshou", "torchrl", "rllib"} <= torch_extras and "openspiel" in extras
    examples = sorted((ROOT / "examples").glob("*.py"))
    assert len(examples) >= 5
    for path in examples:
        doc = ast.get_docstring(ast.parse(path.read_text("utf-8"))) or ""
        lines = [line.strip() for line in doc.splitlines() if line.strip().startswith("pip install")]
        assert len(lines) == 1, f"{path.name}: one install line"
        found = re.match(r'(pip install torch==2\.13\.0 && )?pip install -e "\.\[([\w,]+)\]"', lines[0])
        assert found, f"{path.name}: {lines[0]!r} is not the README's route"
        wanted = set(found.group(2).split(","))
        assert wanted <= extras, f"{path.name}: no such extra {wanted - extras}"
        assert bool(found.group(1)) == bool(wanted & torch_extras), f"{path.name}: torch first iff needed"
