"""Game records: round trip, exact replay, refusal of records that do not replay (naming the
step), ``evaluate --save-games``, and the ``replay`` command (terminal and video). A game gives
the same record on either backend (the C++ core and the Python engine), and a record replays on
the default one."""

from __future__ import annotations

import io
import json
import os
import re

import numpy as np
import pytest

from island_fortress_env import core, island_fortress_v0
from island_fortress_env.cli.replay import frame_states, run_replay
from island_fortress_env.env import records
from island_fortress_env.env.records import GameRecord, RecordError
from island_fortress_env.players import make_agent
from island_fortress_env.players.seeds import Stream, stream_seed
from island_fortress_env.training.evaluate import evaluate
from island_fortress_env.views import narrate


def play(seed: int, n: int = 2, backend: str | None = None, **rules) -> tuple[GameRecord, object]:
    """A random game through the env (on ``backend``, default the env's), recorded."""
    env = island_fortress_v0.env(num_players=n, backend=backend, **rules)
    env.reset(seed=seed)
    raw = env.unwrapped
    agents = [make_agent("random", seed=seed + p) for p in range(n)]
    taken = []
    for name in env.agent_iter():
        obs, _r, term, trunc, _i = env.last()
        if term or trunc:
            env.step(None)
            continue
        action = agents[raw.agent_name_mapping[name]].act(obs["observation"], obs["action_mask"])
        taken.append(action)
        env.step(action)
    rules = {"num_players": n, **raw.game.config.variants}
    return GameRecord.from_game(rules, seed, taken, ["random"] * n, raw.game_state), raw.game_state


@pytest.fixture(scope="module")
def game():
    return play(seed=21)


def test_round_trip_and_replay(game, tmp_path):
    record, final = game
    path = records.save(record, tmp_path / "game.json")
    assert path.stat().st_size < 4000, "a record should be small"
    loaded = records.load(path)
    assert loaded == record
    replayed = records.replay(loaded)
    assert replayed.score == final.score and replayed.winners == final.winners
    data = json.loads(path.read_text())
    assert data["format"] == records.FORMAT and data["version"] == records.VERSION
    assert set(data) >= {"rules", "seed", "actions", "agents", "scores", "winners", "action_table"}


def test_variants_replay(tmp_path, backend):
    record, final = play(
        seed=5, n=3, backend=backend, no_replace=True, extra_jade=3, first_round_incentive="treasure"
    )
    assert record.rules == {
        "num_players": 3,
        "no_replace": True,
        "extra_jade": 3,
        "first_round_incentive": "treasure",
    }
    loaded = records.load(records.save(record, tmp_path / "v.json"))
    assert records.replay(loaded).score == final.score


@pytest.mark.skipif(not core.available(), reason=f"the C++ core is not built ({core.build_error()})")
@pytest.mark.parametrize("n", [2, 3, 4])
def test_a_game_gives_the_same_record_on_either_backend(n):
    """The same seed and agents give byte for byte the same record file on the core and on the
    Python engine, and it replays to the same final state on both."""
    rules = {"favor_trade_in": True, "first_round_incentive": "buyback_chip"}
    (core_record, core_final), (py_record, py_final) = (
        play(seed=40 + n, n=n, backend=backend, **rules) for backend in ("core", "python")
    )
    assert type(core_final).__name__ == "CoreState" and type(py_final).__name__ == "State"
    assert records.dumps(core_record) == records.dumps(py_record)
    assert core_final.log == py_final.log
    replayed = records.replay(records.loads(records.dumps(py_record)))
    assert replayed.score == py_final.score and replayed.log == py_final.log


def test_states_are_every_step(game):
    record, final = game
    all_states = records.states(record)
    assert len(all_states) == len(record.actions) + 1
    assert not all_states[0].round and all_states[-1].is_terminal()
    assert all_states[-1].score == final.score
    per_turn = frame_states(all_states, "turn")
    assert 2 < len(per_turn) < len(all_states) and per_turn[-1].is_terminal()


def _write(tmp_path, data) -> str:
    path = tmp_path / "bad.json"
    path.write_text(json.dumps(data))
    return str(path)


def test_an_illegal_step_is_named(game, tmp_path):
    record, _ = game
    data = record.to_dict()
    state = records.states(record)[40]
    illegal = next(a for a in range(380) if a not in state.legal_actions())
    data["actions"][40] = illegal
    with pytest.raises(RecordError, match=r"bad\.json.*step 41 of \d+ does not replay: illegal action"):
        records.load(_write(tmp_path, data))


@pytest.mark.parametrize(
    "change,match",
    [
        (lambda d: d["actions"].pop(), "end before the game is over"),
        (lambda d: d["actions"].append(1), "already over"),
        (lambda d: d["scores"].__setitem__(0, d["scores"][0] + 1), "the record says"),
        (lambda d: d.__setitem__("seed", d["seed"] + 1), "step|scores"),
        (lambda d: d.__setitem__("format", "chess"), "not an Island Fortress game record"),
        (lambda d: d.__setitem__("version", 99), "version 99"),
        (lambda d: d.__setitem__("action_table", "0123"), "another action table"),
        (lambda d: d.pop("actions"), r"missing field\(s\) \['actions'\]"),
        (lambda d: d.__setitem__("actions", ["7"]), "'actions' must be a list of integers"),
        (lambda d: d.__setitem__("seed", -1), r"'seed' must be an integer in \[0, 2\*\*64\)"),
        (lambda d: d["rules"].__setitem__("num_players", 9), "rules"),
        (lambda d: d["agents"].pop(), "agent names for 2 players"),
        (lambda d: d["rules"].__setitem__("render_mode", "bogus"), "rules .*render_mode"),
    ],
)
def test_bad_records_are_refused(game, tmp_path, change, match):
    record, _ = game
    data = record.to_dict()
    change(data)
    with pytest.raises(RecordError, match=match):
        records.load(_write(tmp_path, data))


def test_unreadable_files(tmp_path):
    with pytest.raises(RecordError, match="cannot be read"):
        records.load(tmp_path / "missing.json")
    (tmp_path / "bin.json").write_bytes(b"\x89PNG\xff\x00")
    with pytest.raises(RecordError, match="not a text"):
        records.load(tmp_path / "bin.json")
    (tmp_path / "half.json").write_text('{"format": ')
    with pytest.raises(RecordError, match="not valid JSON"):
        records.load(tmp_path / "half.json")


def test_an_unfinished_game_is_not_recorded():
    state = island_fortress_v0.raw_env(num_players=2)
    state.reset(seed=0)
    with pytest.raises(RecordError, match="not over"):
        GameRecord.from_game({"num_players": 2}, 0, [], ["a", "b"], state.game_state)


def test_evaluate_saves_every_game(tmp_path):
    out = tmp_path / "games"
    result = evaluate(["heuristic", "random"], games=3, seed=7, save_games=out)
    files = sorted(out.glob("*.json"))
    assert [str(f) for f in files] == result["saved_games"]
    for g, f in enumerate(files):  # named by the run (start time, seed, process id) and the game
        assert re.fullmatch(rf"\d{{8}}-\d{{6}}-seed7-p{os.getpid()}-game-0000{g}\.json", f.name), f.name
    wins = {"heuristic": 0.0, "random": 0.0}
    score = {"heuristic": 0, "random": 0}
    for g, path in enumerate(files):
        record = records.load(path)  # replays exactly, or raises
        assert record.seed == stream_seed(7, Stream.EVALUATION, g)  # game g's deal of seed 7
        assert sorted(record.agents) == ["heuristic", "random"]
        for seat, name in enumerate(record.agents):
            score[name] += record.scores[seat]
            if seat in record.winners:
                wins[name] += 1 / len(record.winners)
    for entry in result["agents"]:
        assert entry["mean_score"] * 3 == pytest.approx(score[entry["name"]])
        assert entry["wins"] == pytest.approx(wins[entry["name"]])


# --------------------------------------------------------------------------- replay command


def test_replay_prints_the_whole_game_without_a_terminal(game, tmp_path):
    record, final = game
    path = records.save(record, tmp_path / "game.json")
    out = io.StringIO()
    run_replay(path, interactive=False, out=out)
    text = out.getvalue()
    assert text.count("chooses:") == len(record.actions)
    assert f"step {len(record.actions)}/{len(record.actions)}" in text
    assert text.splitlines().count("Final scores:") == 1
    # The text ends with the final scores: a heading, then one line per seat in seat order,
    # each with where its points came from.
    tail = text.rstrip().splitlines()[-(final.n + 1) :]
    assert tail[0] == "Final scores:"
    breakdown = narrate.score_breakdown(final.log, final.n)
    for p, line in enumerate(tail[1:]):
        won = ["winner"] if p in final.winners else []
        table, parts = line.split(" = ")
        assert table.split() == ["AB"[p], "(random)", str(final.score[p]), *won]
        said = " + ".join(f"{label} {pts}" for label, pts in breakdown[p].items() if pts)
        assert parts == (said or "nothing")
        assert sum(breakdown[p].values()) == final.score[p]


def test_replay_keys_step_forward_and_back(game, tmp_path):
    record, _ = game
    path = records.save(record, tmp_path / "game.json")
    keys = iter(["", "n", "b", "x", "12", "e", ""])
    prompts = []

    def ask(prompt: str) -> str:
        prompts.append(prompt)
        return next(keys)

    out = io.StringIO()
    run_replay(path, interactive=True, out=out, ask=ask)
    total = len(record.actions)
    assert [p.split("]")[0] for p in prompts] == [f"[{i}/{total}" for i in (1, 2, 3, 2, 2, 12, total)]
    assert "'x' is not a key here" in out.getvalue()
    assert "Final scores:" in out.getvalue()


@pytest.mark.parametrize("suffix", [".gif", ".mp4"])
def test_replay_writes_a_video(game, tmp_path, suffix):
    iio = pytest.importorskip("imageio.v3", reason="videos need the [render] extra (imageio)")
    if suffix == ".mp4":
        pytest.importorskip("imageio_ffmpeg", reason="mp4 needs the [render] extra (imageio-ffmpeg)")
    from island_fortress_env.cli.replay import write_video

    record, _ = game
    out = tmp_path / f"game{suffix}"
    frames = write_video(record, out, per="turn", scale=0.25)
    assert frames == len(frame_states(records.states(record), "turn"))
    if suffix == ".gif":
        video = iio.imread(out)
        assert video.shape == (frames, 192, 320, 3) and video.dtype == np.uint8
    else:
        _assert_mp4_shows_the_states(iio.imread(out, plugin="FFMPEG"), record)


def _assert_mp4_shows_the_states(video: np.ndarray, record: GameRecord) -> None:
    """The decoded H.264 video (lossy, so compared by mean difference) against the spectator's
    picture of each state it shows: one frame per state, each within about 1% of its own
    picture, and the first and last frames nearer their own picture than any other state's."""
    from PIL import Image

    from island_fortress_env.views.picture import render_image

    shown = frame_states(records.states(record), "turn")
    assert video.shape == (len(shown), 192, 320, 3) and video.dtype == np.uint8
    pictures = [
        np.asarray(render_image(state, None, record.agents).resize((320, 192), Image.Resampling.LANCZOS))
        for state in shown
    ]

    def difference(frame: np.ndarray, picture: np.ndarray) -> float:
        return float(np.abs(frame.astype(np.int16) - picture.astype(np.int16)).mean())

    own = [difference(frame, picture) for frame, picture in zip(video, pictures, strict=True)]
    assert max(own) < 3.0, f"frame {int(np.argmax(own))} differs from its state's picture by {max(own):.2f}"
    for k in (0, len(shown) - 1):
        nearest = min(range(len(shown)), key=lambda j: difference(video[k], pictures[j]))
        assert nearest == k, f"frame {k} looks most like the picture of state {nearest}"


def test_saved_rules_are_the_games_options_only(tmp_path):
    """Env-only options (the reward) are not rules: the record holds the game's options."""
    options = {"reward": "vp_delta", "no_replace": True}
    result = evaluate(["random", "random"], games=1, seed=3, env_options=options, save_games=tmp_path)
    record = records.load(result["saved_games"][0])
    assert record.rules == {"num_players": 2, "no_replace": True}
