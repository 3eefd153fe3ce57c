"""Fuzzing what people and files feed the tools: whatever is typed at ``play``'s prompt or in the
replay viewer, and whatever a game record file holds, the answer is a choice, an explanation or
a ``RecordError``, never another exception."""

from __future__ import annotations

import io
import json
import string
import tempfile
from pathlib import Path

import pytest
from hypothesis import example, given
from hypothesis import strategies as st

from island_fortress_env.engine.actions import NUM_ACTIONS
from island_fortress_env.env import records
from island_fortress_env.env.records import GameRecord, RecordError

TRICKY = [
    *("²", "½", "Ⅻ", "五", "٣", "１", "𝟙", "+1", "-1", "0", "1_0", "1__0", "_1", "9" * 5000, "-" + "9" * 50),
    *("[/bold]", "[bold]", "\x1b[2J", "\u202e", "\x00", "\n", "\t", " ", "", "board", "help", "?"),
]
entries = st.one_of(
    st.sampled_from(TRICKY), st.text(max_size=30), st.from_regex(r"[+-]?[0-9_]{1,25}", fullmatch=True)
)


@pytest.fixture(scope="module")
def game() -> GameRecord:
    from test_records import play

    return play(seed=21)[0]


# --------------------------------------------------------------------------- play's prompt


@given(entry=entries)
@example(entry="²")
@example(entry="9" * 5000)
@example(entry="[/bold]")
def test_any_entry_is_a_legal_choice_or_an_explanation(entry):
    pytest.importorskip("rich", reason="play needs the [render] extra (rich)")
    from island_fortress_env.cli.play import parse_choice

    legal, labels = [5, 9, 11, 40], ["bid 0 Jade", "bid 1 Jade", "bid 10 Jade", "pass"]
    choice = parse_choice(entry, legal, labels)
    assert (choice.action in legal) != bool(choice.message)
    assert choice.message.isprintable() and len(choice.message) < 400


@given(typed=st.lists(entries, max_size=6))
@example(typed=["²", "9" * 5000, "[/bold]"])
def test_a_game_survives_any_entries(typed):
    """Whatever is typed, the game goes on (explaining) until the person quits."""
    pytest.importorskip("rich", reason="play needs the [render] extra (rich)")
    from rich.console import Console

    from island_fortress_env.cli.play import play_game

    answers = iter([*typed, "quit"])
    out = io.StringIO()
    with tempfile.TemporaryDirectory() as folder:
        result = play_game(
            ["random"],
            seed=4,
            save_path=Path(folder) / "g.json",
            ask=lambda prompt: next(answers),
            console=Console(file=out, soft_wrap=True),
        )
    assert result is None or isinstance(result, GameRecord)
    assert "\x1b" not in out.getvalue()


# --------------------------------------------------------------------------- the replay viewer


@given(keys=st.lists(entries, max_size=8))
@example(keys=["²", "9" * 5000, "٣", "-1"])
def test_the_replay_viewer_survives_any_keys(game, keys):
    from island_fortress_env.cli.replay import next_step

    total = len(game.actions)
    i = 1
    for key in keys:
        move = next_step(key, i, total)
        if move.step is None:
            return
        assert 1 <= move.step <= total + 1 and move.message.isprintable()
        assert move.step == i or not move.message
        i = move.step


@given(key=entries)
def test_numbers_read_by_the_viewer_are_the_numbers_int_reads(key):
    from island_fortress_env.cli.entries import read_number

    number = read_number(key, 1, 500, "step")
    if number is None or number.value is None:
        return
    assert number.value == int(key) and 1 <= number.value <= 500


@given(n=st.integers(-(10**15), 10**15))
def test_every_integer_in_range_is_read_and_every_other_explained(n):
    from island_fortress_env.cli.entries import read_number

    number = read_number(str(n), 1, 380, "action")
    assert number is not None
    if 1 <= n <= 380:
        assert number.value == n
    else:
        assert number.value is None and number.message


# --------------------------------------------------------------------------- record files

json_values = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False) | st.text(max_size=12),
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=8), inner, max_size=4),
    max_leaves=12,
)
FIELDS = ["format", "version", "action_table", "rules", "seed", "agents", "actions", "scores", "winners"]


def _read(text: str) -> None:
    """Reading ``text`` as a record either gives a record or raises RecordError."""
    try:
        record = records.loads(text, "fuzzed")
    except RecordError as exc:
        assert str(exc).startswith("fuzzed")
        return
    assert isinstance(record, GameRecord)


@given(text=st.text(max_size=200))
@example(text="[" * 50_000)
@example(text="1" * 5000)
@example(text='{"format": "island-fortress-game-record", "version": 1e999}')
def test_any_text_is_a_record_or_a_record_error(text):
    _read(text)


@given(value=json_values)
def test_any_json_value_is_a_record_or_a_record_error(value):
    _read(json.dumps(value))


@given(field=st.sampled_from(FIELDS), value=json_values)
def test_a_record_with_any_field_replaced_is_a_record_or_a_record_error(game, field, value):
    changed = game.to_dict()
    changed[field] = value
    _read(json.dumps(changed))


@given(
    seat=st.integers(0, 1),
    step=st.integers(0, 200),
    action=st.integers(-5, NUM_ACTIONS + 5) | st.integers(),
)
def test_a_record_with_any_action_replaced_is_a_record_or_a_record_error(game, seat, step, action):
    changed = game.to_dict()
    changed["actions"][step % len(changed["actions"])] = action
    changed["scores"][seat] += step % 3 - 1
    _read(json.dumps(changed))


@given(rules=st.dictionaries(st.sampled_from([*records.RULES_OPTIONS, "render_mode", "reward"]), json_values))
def test_a_record_with_any_rules_is_a_record_or_a_record_error(game, rules, monkeypatch_session):
    changed = game.to_dict()
    changed["rules"] = rules
    _read(json.dumps(changed))


@pytest.fixture(scope="module")
def monkeypatch_session():
    """No window may open, whatever a fuzzed record asks for."""
    mp = pytest.MonkeyPatch()
    mp.setenv("SDL_VIDEODRIVER", "dummy")
    yield mp
    mp.undo()


@given(raw=st.binary(max_size=64))
def test_any_bytes_in_a_file_are_a_record_or_a_record_error(raw):
    with tempfile.TemporaryDirectory() as folder:
        path = Path(folder) / "r.json"
        path.write_bytes(raw)
        try:
            records.load(path)
        except RecordError as exc:
            assert "r.json" in str(exc)


def test_the_fuzzing_alphabet_reaches_the_numeric_path():
    """The strategies above include numeric entries (not only letters)."""
    from island_fortress_env.cli.entries import looks_numeric

    assert sum(looks_numeric(t) for t in TRICKY) >= 10
    assert not any(looks_numeric(c) for c in string.ascii_letters)
