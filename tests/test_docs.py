"""The README's action and observation tables are generated from the code; keep them equal."""

from pathlib import Path

from island_fortress_env.tools.doc_tables import action_table, observation_table

ROOT = Path(__file__).resolve().parent.parent


def test_readme_action_table_matches_code():
    assert action_table() in (ROOT / "README.md").read_text("utf-8")


def test_readme_observation_table_matches_code():
    assert observation_table() in (ROOT / "README.md").read_text("utf-8")


def test_rules_document_states_the_binding_rulings():
    text = (ROOT / "docs" / "RULES.md").read_text("utf-8")
    for ruling in [f"**C{i}**" for i in range(1, 18)]:
        assert ruling in text
