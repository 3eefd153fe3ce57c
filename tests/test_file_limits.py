"""Favor decks and game records are read with limits, and their text cannot drive a terminal.

* reading: only regular files (a named pipe, a device or a directory is refused before it is
  read, never waited on), at most a size cap, JSON with bounded nesting and integer digits; each
  failure one ``DeckError``/``RecordError`` naming the file, one line and exit 2 on the command line;
* a record carries its deck's digest (and the deck itself, when small): it refuses to replay
  against another or a changed deck file, and replays from its own copy when the file is gone;
* favor card names (and every other text from a file) reach the terminal with control characters
  escaped, through ``replay``, ``play``, ``demo`` and the text view.

Whatever might hang or fill the memory on a broken reader runs in a subprocess with a timeout
and an address-space limit.
"""

from __future__ import annotations

import io
import json
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

from island_fortress_env.engine import DeckError, Game, favors, load_deck
from island_fortress_env.env import records
from island_fortress_env.env.records import GameRecord, RecordError

ROOT = Path(__file__).resolve().parents[1]
ESCAPES = "\x1b[2J\x1b]0;owned\x07\u202e\r"  # clear screen, window title, bidi override, CR
SHOWN_ESCAPES = r"\x1b[2J\x1b]0;owned\x07\u202e\r"
RAW = ("\x1b", "\x07", "\u202e", "\r")
MAX_DECK_BYTES = getattr(favors, "MAX_DECK_BYTES", 2**20)  # the cap on a deck file: 1 MB
TIMEOUT = 60  # seconds for a subprocess that must not hang
MEMORY = 2 * 2**30  # address space of a subprocess that must not fill the memory

needs_fifo = pytest.mark.skipif(not hasattr(os, "mkfifo"), reason="named pipes need a POSIX system")


def cards(k: int, name: str = "Stone") -> list[dict]:
    return [{"name": f"{name} {i}", "pattern": ["X"], "rewards": {"vp": 1 + i % 3}} for i in range(k)]


def write_deck(path: Path, name: str = "Stone", k: int = 12, **extra) -> Path:
    path.write_text(json.dumps({"name": "test deck", "cards": cards(k, name), **extra}), "utf-8")
    return path


def play(deck: Path, seed: int = 3, n: int = 2) -> GameRecord:
    from test_records import play as play_game

    return play_game(seed=seed, n=n, favor_deck=str(deck))[0]


def python(code: str, *args: str, timeout: float = TIMEOUT) -> subprocess.CompletedProcess[str]:
    """Run ``code`` in a fresh interpreter (address space capped at ``MEMORY``); a run that does
    not end within ``timeout`` seconds fails the test (it is killed)."""

    def limit() -> None:
        import resource

        resource.setrlimit(resource.RLIMIT_AS, (MEMORY, MEMORY))

    try:
        return subprocess.run(
            [sys.executable, "-c", code, *args],
            stdin=subprocess.DEVNULL,
            capture_output=True,
            text=True,
            timeout=timeout,
            cwd=ROOT,
            preexec_fn=limit if sys.platform != "win32" else None,
        )
    except subprocess.TimeoutExpired:
        pytest.fail(f"hung: still running after {timeout} s")


LOAD_DECK = """
import sys
from island_fortress_env.engine import DeckError, load_deck
try:
    load_deck(sys.argv[1])
except DeckError as exc:
    print("DeckError:", exc)
"""

LOAD_RECORD = """
import sys
from island_fortress_env.env.records import RecordError, load
try:
    load(sys.argv[1])
except RecordError as exc:
    print("RecordError:", exc)
"""

CLI = "import sys; from island_fortress_env.cli.app import main; sys.exit(main(sys.argv[1:]))"


def assert_one_line_error(run: subprocess.CompletedProcess[str], pattern: str) -> None:
    assert run.returncode == 2, (run.returncode, run.stderr[-2000:])
    assert run.stderr.count("\n") == 1 and run.stderr.endswith("\n"), f"not one line: {run.stderr!r}"
    assert "Traceback" not in run.stderr
    assert re.search(pattern, run.stderr), run.stderr


# --------------------------------------------------------------------------- hostile deck files


def test_dev_zero_as_a_deck_is_refused_without_reading_it(tmp_path):
    if not os.path.exists("/dev/zero"):
        pytest.skip("no /dev/zero here")
    run = python(LOAD_DECK, "/dev/zero")
    assert run.stdout.startswith("DeckError:"), run.stderr[-2000:]
    assert "/dev/zero" in run.stdout and "not a regular file" in run.stdout


def test_a_directory_as_a_deck_is_refused(tmp_path):
    with pytest.raises(DeckError, match=rf"{re.escape(str(tmp_path))}.*is a directory"):
        load_deck(tmp_path)


def test_an_oversized_deck_is_refused_before_it_is_read(tmp_path):
    """A 355 MB file (sparse: nothing is written) and a valid deck padded past the cap."""
    huge = tmp_path / "huge.json"
    with open(huge, "wb") as f:
        f.truncate(355 * 2**20)
    with pytest.raises(DeckError, match=r"huge\.json.*larger than 1 MB"):
        load_deck(huge)
    padded = tmp_path / "padded.json"
    padded.write_text(json.dumps({"cards": cards(12)}) + " " * MAX_DECK_BYTES, "utf-8")
    with pytest.raises(DeckError, match=r"padded\.json.*larger than 1 MB"):
        load_deck(padded)


def test_a_deeply_nested_deck_is_a_deck_error(tmp_path):
    path = tmp_path / "deep.json"
    path.write_text('{"cards": ' + "[" * 100_000 + "]" * 100_000 + "}", "utf-8")
    with pytest.raises(DeckError, match=r"deep\.json.*nested too deeply"):
        load_deck(path)


def test_a_five_thousand_digit_reward_is_a_deck_error(tmp_path):
    path = tmp_path / "digits.json"
    path.write_text(
        '{"cards": [{"name": "A", "pattern": ["X"], "rewards": {"vp": ' + "7" * 5000 + "}}]}", "utf-8"
    )
    with pytest.raises(DeckError, match=r"digits\.json.*an integer of 5000 digits"):
        load_deck(path)
    with pytest.raises(DeckError, match=r"digits\.json"):
        Game(num_players=2, favor_deck=str(path))


@pytest.mark.parametrize("text", ['{"cards": NaN}', '{"cards": [1e999999]}', '{"cards": -Infinity}'])
def test_numbers_json_does_not_have_are_refused(tmp_path, text):
    path = tmp_path / "nan.json"
    path.write_text(text, "utf-8")
    with pytest.raises(DeckError, match=r"nan\.json"):
        load_deck(path)


def test_the_cap_leaves_room_for_every_real_deck():
    """The largest deck the rules allow (36 cards, long names) is far under the cap."""
    big = {"name": "n" * 200, "cards": [{**c, "name": "n" * 200 + str(i)} for i, c in enumerate(cards(36))]}
    assert len(json.dumps(big, indent=4)) < MAX_DECK_BYTES / 20


# --------------------------------------------------------------------------- hostile record files


@needs_fifo
@pytest.mark.parametrize(("loader", "error"), [("deck", "DeckError"), ("record", "RecordError")])
def test_a_named_pipe_as_a_deck_or_record_is_refused_without_waiting(tmp_path, loader, error):
    fifo = tmp_path / "game.json"
    os.mkfifo(fifo)
    run = python(LOAD_DECK if loader == "deck" else LOAD_RECORD, str(fifo))
    assert run.stdout.startswith(f"{error}:"), run.stderr[-2000:]
    assert "game.json" in run.stdout and "not a regular file" in run.stdout
    if loader == "record":
        assert_one_line_error(python(CLI, "replay", str(fifo)), r"game\.json.*not a regular file")


def test_a_device_as_a_record_is_refused(tmp_path):
    if not os.path.exists("/dev/zero"):
        pytest.skip("no /dev/zero here")
    run = python(LOAD_RECORD, "/dev/zero")
    assert run.stdout.startswith("RecordError:") and "not a regular file" in run.stdout, run.stderr[-2000:]


# --------------------------------------------------------------------------- a record names its deck


@pytest.fixture
def deck_game(tmp_path) -> tuple[Path, Path, GameRecord]:
    """A deck file, a game played with it and saved: (deck, record file, record)."""
    deck = write_deck(tmp_path / "house.json")
    record = play(deck)
    return deck, records.save(record, tmp_path / "game.json"), record


def _replace_deck(deck: Path, make) -> None:
    deck.unlink()
    make(deck)


DIGITS_DECK = '{"cards": [{"name": "A", "pattern": ["X"], "rewards": {"vp": 1' + "0" * 4999 + "}}]}"
HOSTILE_DECKS = {
    "fifo": lambda p: os.mkfifo(p),
    "dev-zero": lambda p: p.symlink_to("/dev/zero"),
    "oversized": lambda p: p.write_text(json.dumps({"cards": cards(12)}) + " " * (2 * 2**20)),
    "nested": lambda p: p.write_text('{"cards": ' + "[" * 100_000 + "]" * 100_000 + "}"),
    "digits": lambda p: p.write_text(DIGITS_DECK),
}
HOSTILE_WHY = {
    "fifo": "not a regular file",
    "dev-zero": "not a regular file",
    "oversized": "larger than 1 MB",
    "nested": "nested too deeply",
    "digits": "an integer of 5000 digits",
}


@pytest.mark.parametrize("kind", sorted(HOSTILE_DECKS))
def test_replaying_against_a_hostile_deck_is_one_line_and_exit_2(deck_game, kind):
    if kind == "fifo" and not hasattr(os, "mkfifo"):
        pytest.skip("named pipes need a POSIX system")
    if kind == "dev-zero" and not os.path.exists("/dev/zero"):
        pytest.skip("no /dev/zero here")
    deck, path, _record = deck_game
    _replace_deck(deck, HOSTILE_DECKS[kind])
    run = python(CLI, "replay", str(path))
    assert_one_line_error(run, rf"game\.json.*house\.json.*{HOSTILE_WHY[kind]}")


@pytest.mark.parametrize("kind", ["fifo", "digits", "nested"])
def test_playing_with_a_hostile_deck_is_one_line_and_exit_2(tmp_path, kind):
    if kind == "fifo" and not hasattr(os, "mkfifo"):
        pytest.skip("named pipes need a POSIX system")
    deck = tmp_path / "house.json"
    HOSTILE_DECKS[kind](deck)
    save = str(tmp_path / "out.json")
    run = python(CLI, "play", "--agents", "random", "--save", save, "--rule", f"favor_deck={deck}")
    assert_one_line_error(run, rf"house\.json.*{HOSTILE_WHY[kind]}")


def test_a_record_carries_its_decks_digest_and_content(deck_game):
    from island_fortress_env.engine.favors import deck_digest

    deck, path, record = deck_game
    data = json.loads(path.read_text("utf-8"))
    stamp = data["deck"]
    assert stamp["sha256"] == deck_digest(load_deck(deck)) and re.fullmatch(r"[0-9a-f]{64}", stamp["sha256"])
    assert [c["name"] for c in stamp["content"]["cards"]] == [c["name"] for c in cards(12)]
    assert data["version"] == records.VERSION
    assert records.load(path) == record


def test_a_record_refuses_a_changed_deck(deck_game):
    """Only a card's name differs: the game would replay, but not with the deck it was played with."""
    deck, path, _record = deck_game
    changed = json.loads(deck.read_text("utf-8"))
    changed["cards"][4]["name"] = "Another Stone"
    deck.write_text(json.dumps(changed), "utf-8")
    with pytest.raises(RecordError) as info:
        records.load(path)
    pattern = r"game record .*game\.json.: favor deck .*house\.json. is not the deck the game was played .*"
    assert re.fullmatch(pattern, str(info.value)), str(info.value)


def test_a_record_refuses_another_deck_at_its_path(deck_game):
    deck, path, _record = deck_game
    write_deck(deck, name="Pebble")
    run = python(CLI, "replay", str(path))
    assert_one_line_error(run, r"game\.json.*house\.json.*not the deck the game was played with")


def test_the_same_deck_written_another_way_still_replays(deck_game):
    """The digest is of the deck's content, not of the file's bytes."""
    deck, path, record = deck_game
    data = json.loads(deck.read_text("utf-8"))
    deck.write_text(json.dumps({"note": "reformatted", **data}, indent=3), "utf-8")
    assert records.load(path) == record


def test_a_record_with_its_deck_replays_without_the_file(deck_game):
    deck, path, record = deck_game
    deck.unlink()
    loaded = records.load(path)
    assert loaded == record
    final = records.replay(loaded)
    assert [c.name for c in final.game.deck.cards] == [c["name"] for c in cards(12)]
    assert final.score == list(record.scores) or tuple(final.score) == record.scores


def test_a_record_without_the_decks_content_needs_the_file(deck_game):
    deck, path, _record = deck_game
    data = json.loads(path.read_text("utf-8"))
    del data["deck"]["content"]
    path.write_text(json.dumps(data), "utf-8")
    records.load(path)  # the file is the deck: it replays
    deck.unlink()
    with pytest.raises(RecordError, match=r"game\.json.*house\.json.*cannot be read"):
        records.load(path)


def test_a_record_whose_deck_content_does_not_match_its_digest_is_refused(deck_game):
    _deck, path, _record = deck_game
    data = json.loads(path.read_text("utf-8"))
    data["deck"]["content"]["cards"][0]["name"] = "Forged"
    path.write_text(json.dumps(data), "utf-8")
    with pytest.raises(RecordError, match=r"game\.json.*'deck'.*digest"):
        records.load(path)


@pytest.mark.parametrize(
    "stamp,pattern",
    [
        ("abc", r"'deck' must be an object"),
        ({"sha256": "xyz"}, r"'deck'.*sha256"),
        ({"sha256": "0" * 64, "content": [1]}, r"'deck'"),
        ({"sha256": "0" * 64, "extra": 1}, r"'deck'.*unknown"),
    ],
)
def test_a_malformed_deck_stamp_is_a_record_error(deck_game, stamp, pattern):
    _deck, path, _record = deck_game
    data = json.loads(path.read_text("utf-8"))
    data["deck"] = stamp
    path.write_text(json.dumps(data), "utf-8")
    with pytest.raises(RecordError, match=rf"game\.json.*{pattern}"):
        records.load(path)


def test_an_old_record_without_a_digest_still_replays(deck_game):
    """Records of format version 1 name the deck by its path only: they replay against the file."""
    _deck, path, record = deck_game
    data = json.loads(path.read_text("utf-8"))
    del data["deck"]
    data["version"] = 1
    path.write_text(json.dumps(data), "utf-8")
    loaded = records.load(path)
    assert (loaded.rules, loaded.actions, loaded.scores) == (record.rules, record.actions, record.scores)


def test_an_old_record_of_the_shipped_deck_still_replays(tmp_path):
    from test_records import play as play_game

    record = play_game(seed=5)[0]
    data = record.to_dict()
    assert "deck" not in data
    data["version"] = 1
    path = tmp_path / "old.json"
    path.write_text(json.dumps(data), "utf-8")
    assert records.load(path).actions == record.actions


# --------------------------------------------------------------------------- text to a terminal


@pytest.fixture
def evil_game(tmp_path) -> tuple[Path, GameRecord]:
    """A game with a deck whose card names (and name) hold escape sequences, saved."""
    deck = tmp_path / "evil.json"
    deck.write_text(json.dumps({"name": f"deck{ESCAPES}", "cards": cards(12, f"Stone{ESCAPES}")}), "utf-8")
    record = play(deck, seed=11)
    return records.save(record, tmp_path / "game.json"), record


def _clean(text: str) -> None:
    assert not any(c in text for c in RAW), repr(next(line for line in text.splitlines() if "\x1b" in line))


def _answers(keys: list[str]):
    answers = iter(keys)
    return lambda prompt: next(answers)


def test_favor_names_in_a_replay_are_escaped(evil_game):
    from island_fortress_env.cli.replay import run_replay

    path, _record = evil_game
    for interactive, keys in ((False, []), (True, ["n", "n", "e", "q"])):
        out = io.StringIO()
        run_replay(path, interactive=interactive, out=out, ask=_answers(keys))
        text = out.getvalue()
        _clean(text)
        if not interactive:
            assert f"Stone{SHOWN_ESCAPES}" in text


def test_favor_names_in_replays_cli_output_are_escaped(evil_game, capsys):
    from island_fortress_env.cli import app as cli

    path, _record = evil_game
    assert cli.main(["replay", str(path)]) == 0
    out, err = capsys.readouterr()
    _clean(out + err)
    assert f"Stone{SHOWN_ESCAPES}" in out


def test_favor_names_in_play_are_escaped(evil_game, tmp_path):
    pytest.importorskip("rich", reason="play needs the [render] extra (rich)")
    from rich.console import Console

    from island_fortress_env.cli.play import play_game

    deck = tmp_path / "evil.json"
    answers = iter(["board", "1", "1", "1", "1", "1", "1", "quit"])
    buffer = io.StringIO()
    play_game(
        ["random"],
        seed=2,
        save_path=tmp_path / "p.json",
        rules={"favor_deck": str(deck)},
        ask=lambda prompt: next(answers),
        console=Console(file=buffer, soft_wrap=True, highlight=False),
    )
    text = buffer.getvalue()
    _clean(text)
    assert f"Stone{SHOWN_ESCAPES}" in text


def test_play_cli_shows_favor_names_escaped(tmp_path):
    pytest.importorskip("rich", reason="play needs the [render] extra (rich)")
    deck = tmp_path / "evil.json"
    deck.write_text(json.dumps({"cards": cards(12, f"Stone{ESCAPES}")}), "utf-8")
    argv = ["play", "--agents", "random", "--seed", "2", "--rule", f"favor_deck={deck}"]
    run = subprocess.run(
        [sys.executable, "-c", CLI, *argv, "--save", str(tmp_path / "p.json")],
        input="board\nquit\n",
        capture_output=True,
        text=True,
        timeout=TIMEOUT,
        cwd=ROOT,
    )
    assert run.returncode == 0, run.stderr[-2000:]
    _clean(run.stdout + run.stderr)
    assert f"Stone{SHOWN_ESCAPES}" in run.stdout


def test_the_text_view_escapes_favor_names(evil_game):
    from island_fortress_env.views.text import render_text

    _path, record = evil_game
    for state in records.states(records.load(_path))[::7]:
        text = render_text(state, 50, record.agents)
        _clean(text)


def test_demo_escapes_agent_names(monkeypatch, capsys):
    """An agent's name can come from a file (a checkpoint's metadata)."""
    from island_fortress_env.cli import demo

    real = demo.make_agent

    def evil(spec, seed):
        agent = real(spec, seed)
        monkeypatch.setattr(agent, "name", f"bot{ESCAPES}", raising=False)
        return agent

    monkeypatch.setattr(demo, "make_agent", evil)
    demo.run_demo(players=2, seed=3, agents=["random", "random"])
    out = capsys.readouterr().out
    _clean(out)
    assert f"bot{SHOWN_ESCAPES}" in out
