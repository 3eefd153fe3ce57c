"""The command line as a person uses it: ``play`` driven end to end in a pseudo-terminal, ``replay``
without a terminal, and every user error as one line on stderr with exit status 2."""

from __future__ import annotations

import io
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

from island_fortress_env.cli import app as cli
from island_fortress_env.env import records

ROOT = Path(__file__).resolve().parents[1]


def _env() -> dict[str, str]:
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join([str(ROOT), env.get("PYTHONPATH", "")])
    env["OMP_NUM_THREADS"] = "1"
    return env


# --------------------------------------------------------------------------- play


def test_play_a_whole_game_in_a_terminal(tmp_path):
    """A person plays seat A against a random player through a pseudo-terminal: bad entries
    are explained and change nothing, actions are chosen by number and by typed prefix, the
    other player's kept cards and bids stay hidden, and the game is saved and replays."""
    pexpect = pytest.importorskip("pexpect", reason="the terminal test needs pexpect")
    pytest.importorskip("rich", reason="play needs the [render] extra (rich)")
    from island_fortress_env.cli.play import PROMPT

    out = tmp_path / "game.json"
    child = pexpect.spawn(
        sys.executable,
        [
            "-m",
            "island_fortress_env.cli",
            "play",
            "--agents",
            "random",
            "--seed",
            "3",
            "--save",
            str(out),
        ],
        env=_env(),
        encoding="utf-8",
        timeout=60,
        dimensions=(60, 160),
    )
    log = io.StringIO()
    child.logfile_read = log
    child.expect("You are A")
    child.expect_exact(PROMPT)
    first_menu = child.before
    assert "keep setup favors" in first_menu and "Your favor hand" in first_menu
    for entry, reply in (
        ("zzz", "No legal action starts with 'zzz'"),
        ("99", "There is no action 99"),
        ("keep", r"'keep' fits 5 actions"),
        ("", "Nothing entered"),
    ):
        child.sendline(entry)
        child.expect(reply)
        child.expect_exact(PROMPT)
    child.sendline("board")  # shows the table again, still the same decision
    child.expect("Region 1")
    child.expect("keep setup favors")
    child.expect_exact(PROMPT)
    decisions = prefixed = 0
    while True:
        menu = child.before or ""
        if "to decide: petition bid" in menu:
            child.sendline("bid 0")  # a typed prefix: "bid 0 Jade" is the only match
            prefixed += 1
        else:  # the first choice listed (a count is listed by itself: "2. 2 Laborers and ...")
            listed = re.search(r"^ +(\d+)\. ", menu[menu.rfind("to decide: ") :], re.MULTILINE)
            child.sendline(listed.group(1) if listed else "1")
        decisions += 1
        if child.expect_exact([PROMPT, "Game saved as"]) == 1:
            break
    child.expect(pexpect.EOF)
    child.close()
    assert child.exitstatus == 0
    text = log.getvalue()
    assert decisions > 60 and prefixed >= 5
    assert "Final scores:" in text
    assert "B (random): keeps a favor card" in text and "B (random) seals a petition bid" in text
    secret = r"B \(random\):? ([Kk]eep favor|Keep [A-Z]|keeps the|[Bb]ids? \d)"
    assert not re.search(secret, text), "the other seat's secrets were shown"
    assert "Bids revealed:" in text and "B (random) takes" in text  # the petition and income told
    record = records.load(out)  # replays exactly, or raises
    assert record.agents == ("human", "random") and record.seed == 3
    assert len(record.actions) > decisions


def test_play_quit_saves_nothing(tmp_path):
    pytest.importorskip("rich", reason="play needs the [render] extra (rich)")
    from island_fortress_env.cli.play import play_game

    entries = iter(["2", "quit"])
    console_out = io.StringIO()
    from rich.console import Console

    result = play_game(
        ["random"],
        seed=1,
        save_path=tmp_path / "x.json",
        ask=lambda prompt: next(entries),
        console=Console(file=console_out, soft_wrap=True),
    )
    assert result is None and not (tmp_path / "x.json").exists()
    assert "Game stopped; nothing saved." in console_out.getvalue()


def test_parse_choice():
    pytest.importorskip("rich", reason="play needs the [render] extra (rich)")
    from island_fortress_env.cli.play import parse_choice

    legal, labels = [5, 9, 11], ["bid 0 Jade", "bid 1 Jade", "bid 10 Jade"]
    assert parse_choice("2", legal, labels).action == 9
    assert parse_choice("BID 0", legal, labels).action == 5
    assert parse_choice("bid 1 jade", legal, labels).action == 9  # exact beats the longer match
    ambiguous = parse_choice("bid 1", legal, labels)
    assert ambiguous.action is None and "fits 2 actions" in ambiguous.message
    assert parse_choice("4", legal, labels).action is None
    assert parse_choice("0", legal, labels).action is None


def test_play_with_the_window(tmp_path, monkeypatch):
    """``--window`` shows the person's view of the table in a pygame window."""
    pytest.importorskip("pygame", reason="the window needs the [render] extra (pygame-ce)")
    pytest.importorskip("rich", reason="play needs the [render] extra (rich)")
    monkeypatch.setenv("SDL_VIDEODRIVER", "dummy")
    from rich.console import Console

    from island_fortress_env.cli.play import play_game
    from island_fortress_env.views import picture

    shown = []
    real_show = picture.TableWindow.show
    monkeypatch.setattr(
        picture.TableWindow,
        "show",
        lambda self, frame, fps=None: shown.append(frame) or real_show(self, frame),
    )
    entries = iter(["1", "1", "quit"])
    play_game(
        ["random", "random"],
        seat=1,
        seed=2,
        window=True,
        ask=lambda prompt: next(entries),
        console=Console(file=io.StringIO()),
    )
    assert len(shown) == 3 and shown[0].shape == (picture.HEIGHT, picture.WIDTH, 3)


def test_replay_steps_in_a_terminal(tmp_path):
    """Single key presses step through a record: n / right arrow forward, left arrow back, a
    number and Enter jumps, Enter steps, e goes to the end and its scores, q quits."""
    pexpect = pytest.importorskip("pexpect", reason="the terminal test needs pexpect")
    pytest.importorskip("prompt_toolkit", reason="key presses need the [render] extra (prompt_toolkit)")
    from test_records import play

    record, _final = play(seed=6)
    path = records.save(record, tmp_path / "g.json")
    total = len(record.actions)
    env = dict(_env(), PROMPT_TOOLKIT_NO_CPR="1")  # pexpect does not answer cursor-position queries
    child = pexpect.spawn(
        sys.executable,
        ["-m", "island_fortress_env.cli", "replay", str(path)],
        env=env,
        encoding="utf-8",
        timeout=60,
    )

    def at(step: int) -> None:
        child.expect_exact(f"[{step}/{total}] >")

    at(1)
    child.send("n")
    child.expect_exact(f"step 2/{total}")
    at(2)
    child.send("\x1b[C")  # right arrow
    at(3)
    child.send("\x1b[D")  # left arrow
    at(2)
    child.send("12\r")
    at(12)
    child.send("\r")
    at(13)
    child.send("e")
    child.expect_exact("Final scores:")
    at(total)
    child.send("q")
    child.expect(pexpect.EOF)
    child.close()
    assert child.exitstatus == 0


# --------------------------------------------------------------------------- replay


def test_replay_without_a_terminal_prints_the_game(tmp_path):
    from test_records import play

    record, _final = play(seed=4)
    path = records.save(record, tmp_path / "g.json")
    done = subprocess.run(
        [sys.executable, "-m", "island_fortress_env.cli", "replay", str(path)],
        stdin=subprocess.DEVNULL,
        capture_output=True,
        text=True,
        env=_env(),
        timeout=120,
    )
    assert done.returncode == 0, done.stderr
    assert done.stdout.count("chooses:") == len(record.actions)
    assert "Final scores:" in done.stdout


# --------------------------------------------------------------------------- user errors


@pytest.fixture(scope="module")
def bad_files(tmp_path_factory):
    d = tmp_path_factory.mktemp("bad")
    (d / "text.zip").write_text("not a zip")
    (d / "binary.yaml").write_bytes(b"\x89PNG\r\n\x1a\n\x00\xff\xfe")
    (d / "record.json").write_text('{"format": "island-fortress-game-record", "version": 1}')
    return d


ERRORS = [
    (
        ["evaluate", "random", "random", "--rule", "num_players=4"],
        "num_players is set by the number of agents",
    ),
    (["evaluate", "random", "random", "--rule", "bogus=1"], "unknown option"),
    (["evaluate", "random", "random", "--games", "0"], "--games: must be an integer >= 1, got 0"),
    (["evaluate", "random", "random", "--games", "-1"], "--games: must be an integer >= 1, got -1"),
    (["evaluate", "random", "random", "--seed", "-5"], "--seed: must be an integer >= 0"),
    (["evaluate", "random"], "give 2-4 AGENTs"),
    (["evaluate", "random", "foo"], "unknown agent 'foo'"),
    (["demo", "--agents", "foo", "foo", "foo"], "unknown agent 'foo'"),
    (["demo", "--agents", "random", "random"], "one agent per seat"),
    (["demo", "--seed", "-5"], "--seed: must be an integer >= 0, got -5"),
    (["demo", "--agents", "{bad}/text.zip", "random", "random"], "not a zip file"),
    (["demo", "--players", "5"], "invalid choice"),
    (["train", "--config", "{bad}/binary.yaml"], "binary.yaml': not a text"),
    (["train", "--config", "{bad}/missing.yaml"], "missing.yaml': no such file"),
    (["replay", "{bad}/missing.json"], "cannot be read"),
    (["replay", "{bad}/binary.yaml"], "not a text"),
    (["replay", "{bad}/record.json"], "missing field"),
    (["replay", "{bad}/record.json", "--video", "x.avi"], r"video .x\.avi.: the name must end in one of"),
    (["play", "--agents", "random", "--seat", "2"], "--seat must be 0..1"),
    (
        ["play", "--agents", "random", "random", "random", "random"],
        "invalid choice|1-3 --agents|a 2-4 player",
    ),
    (["play", "--players", "3", "--agents", "random"], "names the 2 other players"),
    (["play", "--rule", "first_round_incentive=gold", "--seed", "1"], "first_round_incentive"),
    (["snapshot", "{bad}/out.png", "--round", "99"], "--round 99: the game ended in round"),
    (["nonsense"], "invalid choice"),
]


@pytest.mark.parametrize("argv,message", ERRORS, ids=[" ".join(a) for a, _ in ERRORS])
def test_user_errors_are_one_line_and_exit_2(argv, message, bad_files, capsys):
    argv = [a.replace("{bad}", str(bad_files)) for a in argv]
    try:
        code = cli.main(argv)  # the console script is sys.exit(main())
    except SystemExit as exit_:
        code = exit_.code
    assert code == 2
    err = capsys.readouterr().err
    assert err.endswith("\n") and err.count("\n") == 1, f"not one line: {err!r}"
    assert "Traceback" not in err and err.startswith("island-fortress")
    assert re.search(message, err), err


def test_snapshot_stops_at_the_rounds_first_build_cell_choice(tmp_path, capsys):
    out = tmp_path / "table.png"
    assert cli.main(["snapshot", str(out), "--players", "2", "--seed", "5", "--round", "3"]) == 0
    assert out.read_bytes().startswith(b"\x89PNG")
    said = re.fullmatch(rf"{re.escape(str(out))}: round (\d+), build where\n", capsys.readouterr().out)
    assert said is not None and int(said.group(1)) >= 3


def test_user_error_as_a_real_process(bad_files):
    done = subprocess.run(
        [
            sys.executable,
            "-m",
            "island_fortress_env.cli",
            "train",
            "--config",
            str(bad_files / "binary.yaml"),
        ],
        capture_output=True,
        text=True,
        env=_env(),
        timeout=120,
    )
    assert done.returncode == 2
    assert done.stderr.count("\n") == 1 and "Traceback" not in done.stderr
    assert "not a text" in done.stderr


# A process in which the packages named by its first argument are not installed (an import of
# them raises ModuleNotFoundError, as where they are absent), running the rest as the command line.
WITHOUT = """
import sys
class NotInstalled:
    def find_spec(self, name, path, target=None):
        if name.split(".")[0] in sys.argv[1].split(","):
            raise ModuleNotFoundError(f"No module named {name!r}", name=name)
sys.meta_path.insert(0, NotInstalled())
from island_fortress_env.cli import app as cli
sys.exit(cli.main(sys.argv[2:]))
"""


@pytest.mark.parametrize(
    ("missing", "argv", "extra"),
    [
        ("starlette", ["serve", "--no-browser"], "web"),
        ("rich,prompt_toolkit", ["play"], "render"),
        ("openskill", ["tournament", "random", "heuristic"], "train"),
        ("scipy", ["tournament", "random", "heuristic"], "train"),
        ("matplotlib", ["tournament", "random", "heuristic", "--plot", "ladder.png"], "train"),
        ("starlette", ["bench-web"], "web"),
        ("fastapi,openenv", ["openenv-serve"], "openenv"),
        ("ray", ["rllib-convert", "rllib-dir", "out.zip"], "rllib"),
    ],
)
def test_a_missing_optional_library_is_one_line_naming_it_and_its_extra(tmp_path, missing, argv, extra):
    done = subprocess.run(
        [sys.executable, "-c", WITHOUT, missing, *argv],
        capture_output=True, text=True, env=_env(), timeout=120, cwd=tmp_path, stdin=subprocess.DEVNULL,
    )  # fmt: skip
    first = missing.split(",")[0]
    line = f"island-fortress {argv[0]}: error: {first} is missing: pip install 'island-fortress-env[{extra}]'"
    assert done.returncode == 2, done.stderr
    assert done.stderr.splitlines() == [line] and done.stdout == ""


@pytest.mark.parametrize("name", sorted(cli.COMMANDS))
def test_every_command_of_the_table_reads_its_arguments_with_its_own_parser(name, capsys):
    """Each row of ``COMMANDS`` is a module with ``add_arguments`` and ``run``: its ``--help``
    names it (or, without its extra, one line says what to install)."""
    try:
        parser, module = cli.command_parser(name)
    except SystemExit as exc:  # an adapter's command without its library
        assert exc.code == 2 and "is missing: pip install" in capsys.readouterr().err
        return
    assert parser.prog == f"island-fortress {name}" and callable(module.run)
    with pytest.raises(SystemExit) as exc:
        parser.parse_args(["--help"])
    assert exc.value.code == 0 and f"usage: island-fortress {name}" in capsys.readouterr().out
