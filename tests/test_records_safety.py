"""Game records are never lost or torn, every output path is checked before any work starts,
and a record (or any file) cannot crash the reader or drive the terminal.

* writing: unique names per run, atomic writes, exclusive names (two processes saving into one
  directory at once keep every record), the fallbacks of ``play`` at the end of a game;
* paths: ``evaluate --save-games``, ``play --save`` and ``replay --video`` refuse an empty,
  misplaced or unwritable path with one line and exit 2, before the first game or frame;
* reading: nesting, integer size, file size, field types and ranges, only the game's rules
  options; text from a record printed with its control characters escaped.
"""

from __future__ import annotations

import io
import json
import multiprocessing
import os
import re
import subprocess
import sys
import tempfile
from pathlib import Path

import pytest

from island_fortress_env.cli import app as cli
from island_fortress_env.env import records
from island_fortress_env.env.records import GameRecord, RecordError
from island_fortress_env.players.seeds import Stream, stream_seed
from island_fortress_env.training.evaluate import evaluate

ROOT = Path(__file__).resolve().parents[1]


@pytest.fixture(scope="module")
def game() -> GameRecord:
    from test_records import play

    return play(seed=21)[0]


@pytest.fixture
def unwritable(tmp_path) -> Path:
    """A directory that cannot be written, even by root: a read-only one where permissions bind,
    else /sys (sysfs refuses new files to everyone)."""
    folder = tmp_path / "read-only"
    folder.mkdir()
    folder.chmod(0o555)
    try:
        (folder / "probe").touch()
    except PermissionError:
        return folder
    (folder / "probe").unlink()
    try:
        tempfile.TemporaryFile(dir="/sys").close()
    except OSError:
        return Path("/sys")
    pytest.skip("no directory here refuses writes")


def run_cli(argv: list[str], capsys) -> tuple[int, str, str]:
    try:
        code = cli.main(argv)
    except SystemExit as exit_:
        code = int(exit_.code or 0)
    out, err = capsys.readouterr()
    return code, out, err


def assert_one_line_error(code: int, err: str, pattern: str) -> None:
    assert code == 2, err
    assert err.endswith("\n") and err.count("\n") == 1, f"not one line: {err!r}"
    assert "Traceback" not in err
    assert re.search(pattern, err), err


# --------------------------------------------------------------------------- writing


def _evaluate_into(folder: str, seed: int) -> None:
    evaluate(["random", "random"], games=6, seed=seed, save_games=folder)


def test_two_runs_saving_into_one_directory_at_once_keep_every_record(tmp_path):
    """Two processes save 6 games each into one directory at the same time: 12 records, each
    whole (it loads and replays) and each game present once."""
    folder = tmp_path / "games"
    ctx = multiprocessing.get_context("spawn")
    runs = [ctx.Process(target=_evaluate_into, args=(str(folder), seed)) for seed in (100, 200)]
    for run in runs:
        run.start()
    for run in runs:
        run.join(timeout=300)
        assert run.exitcode == 0
    files = sorted(folder.glob("*.json"))
    assert len(files) == 12, [f.name for f in files]
    seeds = sorted(records.load(f).seed for f in files)  # each replays exactly, or raises
    assert seeds == sorted(stream_seed(s, Stream.EVALUATION, g) for s in (100, 200) for g in range(6))
    assert not [p for p in folder.iterdir() if p.suffix != ".json"], "temporary files left behind"


def test_a_later_run_into_the_same_directory_keeps_the_earlier_records(tmp_path):
    first = evaluate(["random", "random"], games=2, seed=5, save_games=tmp_path)["saved_games"]
    before = {p: Path(p).read_bytes() for p in first}
    second = evaluate(["random", "random"], games=2, seed=5, save_games=tmp_path)["saved_games"]
    assert len(set(first) | set(second)) == 4 and len(list(tmp_path.glob("*.json"))) == 4
    assert all(Path(p).read_bytes() == data for p, data in before.items())


def test_save_never_writes_over_a_file(game, tmp_path):
    path = tmp_path / "game.json"
    path.write_text("an earlier record")
    with pytest.raises(RecordError, match=r"game\.json.*already exists"):
        records.save(game, path)
    assert path.read_text() == "an earlier record"
    assert records.save_unique(game, path) == tmp_path / "game-2.json"
    assert records.save_unique(game, path) == tmp_path / "game-3.json"
    assert records.load(tmp_path / "game-3.json") == game


def _save_many(path: str, count: int) -> None:
    from test_records import play

    record = play(seed=3)[0]
    for _ in range(count):
        records.save_unique(record, path)


def test_processes_saving_one_name_at_once_never_overwrite(tmp_path):
    """Four processes each save a record 10 times under one name: 40 files, all whole."""
    ctx = multiprocessing.get_context("spawn")
    runs = [ctx.Process(target=_save_many, args=(str(tmp_path / "g.json"), 10)) for _ in range(4)]
    for run in runs:
        run.start()
    for run in runs:
        run.join(timeout=300)
        assert run.exitcode == 0
    files = list(tmp_path.iterdir())
    assert len(files) == 40 and all(f.suffix == ".json" for f in files)
    for f in files:
        records.load(f)


def test_a_failed_write_leaves_neither_a_record_nor_a_temporary_file(game, tmp_path, monkeypatch):
    def disk_full(fd: int) -> None:
        raise OSError(28, "No space left on device")

    monkeypatch.setattr(os, "fsync", disk_full)
    with pytest.raises(RecordError, match=r"cannot be written \(No space left on device\)"):
        records.save(game, tmp_path / "game.json")
    assert list(tmp_path.iterdir()) == []


def test_a_file_system_without_hard_links_still_gets_whole_records(game, tmp_path, monkeypatch):
    def no_links(src, dst):
        raise OSError(1, "Operation not permitted")

    monkeypatch.setattr(os, "link", no_links)
    path = records.save(game, tmp_path / "game.json")
    assert records.load(path) == game
    with pytest.raises(RecordError, match="already exists"):
        records.save(game, path)
    assert [p.name for p in tmp_path.iterdir()] == ["game.json"]


def test_records_are_written_with_the_usual_permissions(game, tmp_path):
    old = os.umask(0o022)
    try:
        path = records.save(game, tmp_path / "game.json")
    finally:
        os.umask(old)
    assert path.stat().st_mode & 0o777 == 0o644


# --------------------------------------------------------------------------- evaluate --save-games


def _no_games(monkeypatch) -> list[int]:
    from island_fortress_env.training import evaluate as ev

    played: list[int] = []
    real = ev.play_table  # every game evaluate plays, in the C++ core or the Python engine
    monkeypatch.setattr(ev, "play_table", lambda *a, **k: played.append(1) or real(*a, **k))
    return played


@pytest.mark.parametrize(
    "target,pattern",
    [
        ("", r"--save-games.*empty"),
        ("{file}", r"is a file, not a directory"),
        ("{file}/games", r"cannot be created .*is a file"),
        ("{unwritable}", r"cannot be written"),
        ("{unwritable}/games", r"cannot be written"),
    ],
)
def test_save_games_is_checked_before_the_first_game(
    target, pattern, tmp_path, unwritable, monkeypatch, capsys
):
    (tmp_path / "file").write_text("x")
    target = target.format(file=tmp_path / "file", unwritable=unwritable)
    played = _no_games(monkeypatch)
    monkeypatch.chdir(tmp_path)
    code, _out, err = run_cli(
        ["evaluate", "random", "random", "--games", "2", "--save-games", target], capsys
    )
    assert_one_line_error(code, err, pattern)
    assert played == [] and sorted(p.name for p in tmp_path.iterdir()) == ["file", "read-only"]


def test_the_library_call_refuses_an_empty_directory_name_too(monkeypatch, tmp_path):
    monkeypatch.chdir(tmp_path)
    with pytest.raises(RecordError, match="empty"):
        evaluate(["random", "random"], games=1, seed=0, save_games="")
    assert list(tmp_path.iterdir()) == []


def test_save_games_reports_where_the_records_went(tmp_path, capsys):
    code, out, err = run_cli(
        [
            "evaluate",
            "random",
            "random",
            "--games",
            "2",
            "--no-progress",
            "--save-games",
            str(tmp_path / "g"),
        ],
        capsys,
    )
    assert code == 0 and "2 players, 2 games" in out
    assert re.search(r"2 game records saved: .*seed0-p\d+-game-00000\.json \.\.\. .*-game-00001\.json", err)


# --------------------------------------------------------------------------- play --save


def _console():
    from rich.console import Console

    buffer = io.StringIO()
    return Console(file=buffer, soft_wrap=True, width=200), buffer


def test_play_refuses_an_unwritable_save_path_before_the_first_decision(tmp_path, unwritable):
    pytest.importorskip("rich", reason="play needs the [render] extra (rich)")
    from island_fortress_env.cli.play import play_game

    asked: list[str] = []
    (tmp_path / "taken.json").write_text("{}")
    for path, pattern in (
        (unwritable / "game.json", "cannot be written"),
        (tmp_path / "taken.json", "already exists"),
        (tmp_path, "is a directory"),
        (tmp_path / "taken.json" / "game.json", "cannot be created"),
        ("", "empty"),
    ):
        console, _ = _console()
        with pytest.raises(RecordError, match=pattern):
            play_game(["random"], seed=3, save_path=path, ask=asked.append, console=console)
    assert asked == [] and (tmp_path / "taken.json").read_text() == "{}"


@pytest.mark.parametrize("option", [["--save", "{unwritable}/g.json"], ["--save", ""]])
def test_play_save_errors_are_one_line(option, unwritable, capsys):
    pytest.importorskip("rich", reason="play needs the [render] extra (rich)")
    argv = ["play", "--agents", "random", "--seed", "3", *(o.format(unwritable=unwritable) for o in option)]
    code, out, err = run_cli(argv, capsys)
    assert_one_line_error(code, err, r"--save|game record")
    assert "Round" not in out


def _folder_goes_away(folder):
    """A person answering each prompt with its first listed choice who, at the first prompt,
    removes the save folder and puts a file in its place (the folder cannot come back)."""
    from terminal_person import Person

    class FolderGoesAway(Person):
        def __call__(self, prompt: str) -> str:
            if folder.is_dir():
                folder.rmdir()
                folder.write_text("now a file")
            return super().__call__(prompt)

    return FolderGoesAway()


def test_a_finished_game_is_never_lost_when_its_folder_goes_away(tmp_path, monkeypatch):
    """The save folder is removed during the game: the record goes to the temporary directory."""
    pytest.importorskip("rich", reason="play needs the [render] extra (rich)")
    from island_fortress_env.cli.play import play_game

    folder = tmp_path / "mine"
    folder.mkdir()
    spare = tmp_path / "tmp"
    spare.mkdir()
    monkeypatch.setattr(tempfile, "tempdir", str(spare))

    person = _folder_goes_away(folder)
    record = play_game(["random"], seed=3, save_path=folder / "g.json", ask=person, console=person.console)
    assert record is not None
    text = person.out.getvalue()
    assert "saving it in the temporary directory instead" in text
    (saved,) = spare.glob("*.json")
    assert records.load(saved) == record and f"Game saved as {saved}" in text


def test_when_no_folder_can_take_the_record_it_is_printed(tmp_path, monkeypatch, unwritable):
    pytest.importorskip("rich", reason="play needs the [render] extra (rich)")
    from island_fortress_env.cli import play as play_module

    folder = tmp_path / "mine"
    folder.mkdir()
    monkeypatch.setattr(tempfile, "tempdir", str(unwritable))

    person = _folder_goes_away(folder)
    with pytest.raises(RecordError, match="cannot be written"):
        play_module.play_game(
            ["random"], seed=3, save_path=folder / "g.json", ask=person, console=person.console
        )
    printed = person.out.getvalue().split("keep it as a .json file:")[1]
    assert records.loads(printed.strip().replace("\n", "")).seed == 3


# --------------------------------------------------------------------------- replay --video


def test_video_into_an_unwritable_folder_is_refused_before_any_frame(
    game, tmp_path, unwritable, monkeypatch, capsys
):
    from island_fortress_env.cli import replay

    path = records.save(game, tmp_path / "game.json")
    drawn: list[int] = []
    monkeypatch.setattr(replay, "frame_states", lambda *a: drawn.append(1) or [])
    for video, pattern in (
        (unwritable / "game.mp4", "video .*cannot be written"),
        (tmp_path, "is a directory"),
        (tmp_path / "game.json" / "v.gif", "cannot be created"),
        ("", "empty"),
        (tmp_path / "game.avi", "must end in one of"),
    ):
        code, _out, err = run_cli(["replay", str(path), "--video", str(video)], capsys)
        assert_one_line_error(code, err, pattern)
    assert drawn == []


def test_a_video_that_fails_midway_leaves_no_partial_file(game, tmp_path, monkeypatch):
    pytest.importorskip("PIL", reason="videos need the [render] extra (Pillow)")
    from PIL import Image

    from island_fortress_env.cli.replay import write_video

    def fail_midway(self, fp, *args, **kwargs):
        Path(fp).write_bytes(b"GIF89a half a video")
        raise OSError(28, "No space left on device")

    monkeypatch.setattr(Image.Image, "save", fail_midway)
    with pytest.raises(RecordError, match=r"game\.gif.*cannot be written \(No space left on device\)"):
        write_video(game, tmp_path / "game.gif", per="turn", scale=0.1)
    assert list(tmp_path.iterdir()) == []


def test_a_video_replaces_an_earlier_one_whole(game, tmp_path):
    pytest.importorskip("PIL", reason="videos need the [render] extra (Pillow)")
    from island_fortress_env.cli.replay import write_video

    out = tmp_path / "game.gif"
    out.write_bytes(b"old")
    frames = write_video(game, out, per="turn", scale=0.1)
    assert frames > 2 and out.read_bytes()[:6] == b"GIF89a"
    assert [p.name for p in tmp_path.iterdir()] == ["game.gif"]


# --------------------------------------------------------------------------- reading


def _write(tmp_path: Path, text: str | bytes, name: str = "bad.json") -> Path:
    path = tmp_path / name
    if isinstance(text, str):
        path.write_text(text, encoding="utf-8")
    else:
        path.write_bytes(text)
    return path


@pytest.mark.parametrize(
    "text,pattern",
    [
        ("[" * 100_000 + "]" * 100_000, "nested too deeply"),
        ('{"format": ' + "7" * 5000 + "}", "an integer of 5000 digits"),
        ('{"seed": -' + "7" * 5000 + "}", "an integer of 5000 digits"),
        ('{"seed": NaN}', "NaN is not a JSON number"),
        ('{"seed": Infinity}', "Infinity is not a JSON number"),
    ],
    ids=["deep", "long-int", "long-negative-int", "nan", "infinity"],
)
def test_hostile_json_is_a_record_error(text, pattern, tmp_path):
    with pytest.raises(RecordError, match=rf"bad\.json.*{pattern}"):
        records.load(_write(tmp_path, text))


def test_a_huge_file_is_refused_without_reading_it_all(tmp_path):
    path = tmp_path / "huge.json"
    with open(path, "wb") as f:
        f.truncate(records.MAX_RECORD_BYTES + 10)
    with pytest.raises(RecordError, match="larger than 8 MB"):
        records.load(path)


def _changed(game: GameRecord, change) -> dict:
    data = game.to_dict()
    change(data)
    return data


BAD_FIELDS = [
    (lambda d: d["rules"].__setitem__("render_mode", "human"), r"'rules'.*unknown rules option.*render_mode"),
    (lambda d: d["rules"].__setitem__("reward", "vp_delta"), r"'rules'.*unknown rules option.*reward"),
    (lambda d: d["rules"].__setitem__("render_seat", 0), r"'rules'.*unknown rules option.*render_seat"),
    (lambda d: d["rules"].__setitem__("extra_jade", [1]), r"'rules': extra_jade must be"),
    (lambda d: d["rules"].__setitem__("extra_jade", 2**63), r"'rules': extra_jade=.* out of range"),
    (lambda d: d["rules"].__setitem__("favor_deck", "x" * 5000), r"'rules': favor_deck is a text of 5000"),
    (lambda d: d["rules"].__setitem__("num_players", "3"), r"'rules': num_players must be an integer 2-4"),
    (lambda d: d["rules"].pop("num_players"), r"'rules': num_players must be an integer 2-4"),
    (lambda d: d.__setitem__("version", True), r"version True is not supported"),
    (lambda d: d.__setitem__("version", 1.0), r"version 1\.0 is not supported"),
    (lambda d: d.__setitem__("seed", 2**64), r"'seed' must be an integer in \[0, 2\*\*64\)"),
    (lambda d: d.__setitem__("seed", True), r"'seed' must be an integer in \[0, 2\*\*64\)"),
    (lambda d: d.__setitem__("seed", 3.0), r"'seed' must be an integer in \[0, 2\*\*64\)"),
    (lambda d: d.__setitem__("seed", "3"), r"'seed' must be an integer in \[0, 2\*\*64\)"),
    (lambda d: d["actions"].__setitem__(3, 10**6), r"'actions': 1000000 is outside \[0, 380\)"),
    (lambda d: d["actions"].__setitem__(3, -1), r"'actions': -1 is outside \[0, 380\)"),
    (lambda d: d["actions"].__setitem__(3, True), r"'actions' must be a list of integers"),
    (lambda d: d.__setitem__("actions", [0] * 100_001), r"'actions' holds 100001 entries"),
    (lambda d: d.__setitem__("agents", ["a"] * 5), r"'agents' names 5 players"),
    (lambda d: d["agents"].__setitem__(0, "n" * 300), r"'agents': a name of 300 characters"),
    (lambda d: d.__setitem__("agents", "random"), r"'agents' must be a list of names"),
    (lambda d: d.__setitem__("winners", [0, 0]), r"'winners' names a seat twice"),
    (lambda d: d.__setitem__("winners", [7]), r"'winners': 7 is outside \[0, 4\)"),
    (lambda d: d.__setitem__("scores", [1, 2, 3]), r"3 scores for 2 players"),
    (lambda d: d.__setitem__("comment", "hi"), r"unknown field\(s\) \['comment'\]"),
    (lambda d: d.__setitem__("rules", [3]), r"'rules' must be an object"),
]


@pytest.mark.parametrize("change,pattern", BAD_FIELDS, ids=[p for _c, p in BAD_FIELDS])
def test_every_field_is_checked_and_named(game, tmp_path, change, pattern, monkeypatch):
    monkeypatch.setenv("SDL_VIDEODRIVER", "dummy")  # a record that opened a window would do so unseen
    path = _write(tmp_path, json.dumps(_changed(game, change)))
    with pytest.raises(RecordError, match=rf"bad\.json.*{pattern}"):
        records.load(path)


def test_a_record_never_reaches_the_env_with_render_options(game, monkeypatch):
    """Replaying builds the game from rules options only, whatever ``rules`` holds."""
    from island_fortress_env.env import aec

    built: list[dict] = []
    real = aec.raw_env.__init__

    def spy(self, *args, **kwargs):
        built.append(kwargs)
        real(self, *args, **kwargs)

    monkeypatch.setattr(aec.raw_env, "__init__", spy)
    bad = GameRecord(**{**vars(game), "rules": {**game.rules, "render_mode": "human"}})
    with pytest.raises(RecordError, match="render_mode"):
        records.replay(bad)
    records.replay(game)
    assert built == [game.rules]


def test_records_of_the_largest_seeds_load(tmp_path):
    from test_records import play

    record = play(seed=2**64 - 1)[0]
    assert records.load(records.save(record, tmp_path / "g.json")).seed == 2**64 - 1


# --------------------------------------------------------------------------- text to a terminal

ESCAPES = "\x1b[2J\x1b]0;owned\x07\u202e\r"


def _keys(keys: list[str]):
    """A replay ``ask`` that answers ``keys`` in order."""
    answers = iter(keys)
    return lambda prompt: next(answers)


def test_agent_names_from_a_record_cannot_drive_the_terminal(game, tmp_path):
    from island_fortress_env.cli.replay import run_replay

    data = game.to_dict()
    data["agents"] = [f"evil{ESCAPES}", "random"]
    path = _write(tmp_path, json.dumps(data), name=f"g{ESCAPES[:4]}.json")
    for interactive, keys in ((False, []), (True, ["e", "q"])):
        out = io.StringIO()
        run_replay(path, interactive=interactive, out=out, ask=_keys(keys))
        text = out.getvalue()
        assert not any(c in text for c in "\x1b\x07\u202e\r"), repr(text[:200])
        assert r"evil\x1b[2J\x1b]0;owned\x07\u202e\r" in text


def test_error_lines_escape_control_characters(tmp_path, capsys):
    missing = tmp_path / f"gone{ESCAPES}.json"
    code, _out, err = run_cli(["replay", str(missing)], capsys)
    assert_one_line_error(code, err, r"gone\\x1b\[2J.*cannot be read")
    assert "\x1b" not in err and "\u202e" not in err
    assert cli.one_line(ValueError(f"deck {ESCAPES}x")) == r"deck \x1b[2J\x1b]0;owned\x07\u202e x"


def test_play_shows_agent_names_and_entries_as_text_not_markup(tmp_path):
    """An entry or a checkpoint name with rich markup or escape codes is shown as typed."""
    pytest.importorskip("rich", reason="play needs the [render] extra (rich)")
    from island_fortress_env.cli.play import play_game

    entries = iter(["[/bold]", "[red]x", f"z{ESCAPES}", "quit"])
    console, buffer = _console()
    play_game(["random"], seed=1, save_path=tmp_path / "x.json", ask=lambda p: next(entries), console=console)
    text = buffer.getvalue()
    assert "No legal action starts with '[/bold]'" in text and "starts with '[red]x'" in text
    assert r"starts with 'z\x1b[2J\x1b]0;owned\...'" in text and "\x1b" not in text


# --------------------------------------------------------------------------- numbers typed


@pytest.mark.parametrize(
    "entry,reply",
    [
        ("²", "'²' is not a number in decimal digits: choose 1-"),
        ("½", "'½' is not a number in decimal digits: choose 1-"),
        ("9" * 5000, "'999999999999999999999...' is too long for a action number: choose 1-"),
        ("-2", "There is no action -2: choose 1-"),
        ("0", "There is no action 0: choose 1-"),
    ],
)
def test_play_explains_numbers_it_cannot_use(entry, reply, tmp_path):
    pytest.importorskip("rich", reason="play needs the [render] extra (rich)")
    from island_fortress_env.cli.play import play_game

    entries = iter([entry, "quit"])
    console, buffer = _console()
    assert play_game(["random"], seed=1, ask=lambda p: next(entries), console=console) is None
    assert reply in buffer.getvalue()


@pytest.mark.parametrize("entry", ["١", "１", "+1", "0_1", " 1 "])
def test_play_reads_every_integer_int_reads(entry):
    pytest.importorskip("rich", reason="play needs the [render] extra (rich)")
    from island_fortress_env.cli.play import parse_choice

    assert parse_choice(entry, [5, 9], ["bid 0 Jade", "bid 1 Jade"]).action == 5


def test_a_unicode_digit_typed_at_the_real_prompt_is_explained(tmp_path):
    pytest.importorskip("rich", reason="play needs the [render] extra (rich)")
    env = dict(os.environ, PYTHONPATH=str(ROOT), OMP_NUM_THREADS="1")
    done = subprocess.run(
        [sys.executable, "-m", "island_fortress_env.cli", "play", "--agents", "random", "random",
         "--seed", "3", "--save", str(tmp_path / "g.json")],
        input="²\n" + "9" * 5000 + "\nquit\n", capture_output=True, text=True, env=env, timeout=120,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    assert "Traceback" not in done.stderr
    assert "'²' is not a number in decimal digits" in done.stdout and "too long" in done.stdout
    assert "Game stopped; nothing saved." in done.stdout


def test_the_replay_viewer_explains_numbers_it_cannot_use(game, tmp_path):
    from island_fortress_env.cli.replay import run_replay

    path = records.save(game, tmp_path / "g.json")
    keys = iter(["²", "9" * 5000, "99999", "-1", "٣", "q"])
    prompts: list[str] = []

    def ask(prompt: str) -> str:
        prompts.append(prompt)
        return next(keys)

    out = io.StringIO()
    run_replay(path, interactive=True, out=out, ask=ask)
    text = out.getvalue()
    total = len(game.actions)
    assert f"'²' is not a number in decimal digits: choose 1-{total}." in text
    assert "too long for a step number" in text
    assert f"There is no step 99999: choose 1-{total}." in text and "There is no step -1" in text
    assert [p.split("]")[0] for p in prompts] == [f"[{i}/{total}" for i in (1, 1, 1, 1, 1, 3)]
