"""The analysis as a chess site gives it: bands that include the playouts' model error, so a
curve that swings more than its rollouts explain is drawn as unsure as it is (``web.analysis``),
and mistake marks, each saying what was played, what the policy preferred and how far the
mover's chance fell (``web.mistakes``), for the viewer's own turns only."""

from __future__ import annotations

import itertools
import math
import time

import pytest

from island_fortress_env.env.aec import raw_env
from island_fortress_env.env.observation import action_mask
from island_fortress_env.env.records import GameRecord, save, states
from island_fortress_env.players import make_agent
from island_fortress_env.stats import Z95, wilson
from island_fortress_env.views.narrate import seat_name
from island_fortress_env.web import analysis
from island_fortress_env.web.analysis import Analyst, Job, band, model_error
from island_fortress_env.web.seatview import positions
from island_fortress_env.web.words import seat_names
from tests.web_client import client_for, heuristic_record, wait


def turn_starts(all_states) -> list[int]:
    pos = positions(all_states)
    return [
        i
        for i, p in enumerate(pos)
        if i in (0, len(pos) - 1) or p["mover"] != pos[i - 1]["mover"] or p["round"] != pos[i - 1]["round"]
    ]


def run(analyst: Analyst, *args, **kwargs):
    job = analyst.start(*args, **kwargs)
    for _ in range(6000):
        if job.done:
            return job.to_json()
        time.sleep(0.05)
    raise AssertionError("the analysis did not end")


def outside(points, players) -> float:
    """The share of consecutive estimates whose jump is wider than their two half-bands."""
    pairs = [
        abs(a["chances"][p] - b["chances"][p])
        > (a["high"][p] - a["low"][p]) / 2 + (b["high"][p] - b["low"][p]) / 2
        for a, b in itertools.pairwise(points)
        for p in range(players)
    ]
    return sum(pairs) / len(pairs)


# --------------------------------------------------------------------------- the band


def test_the_band_holds_the_between_playout_variance_and_the_model_error():
    for share, n, m in [(0.5, 64, 0.0), (0.5, 64, 0.2), (0.97, 64, 0.1), (0.02, 16, 0.3), (1.0, 64, 0.1)]:
        low, high = band(share, n, m)
        w_low, w_high = wilson(share, n)
        assert low <= w_low and high >= w_high  # never narrower than the sampling alone
        assert high >= min(1.0, share + Z95 * m) - 1e-12 and low <= max(0.0, share - Z95 * m) + 1e-12
        assert math.isclose(high - share, min(1 - share, math.hypot(w_high - share, Z95 * m)))
    assert band(1.0, 0, 0.3) == (1.0, 1.0)  # a finished game's result is exact


def test_the_model_error_is_what_the_jumps_hold_beyond_the_sampling():
    smooth = [([0.5 + 0.001 * i, 0.5 - 0.001 * i], 256) for i in range(20)]
    assert model_error(smooth, "heuristic") == 0.0  # the jumps are all sampling
    flips = [([float(i % 2), float(1 - i % 2)], 64) for i in range(20)]  # 0-100% every turn
    m = model_error(flips, "heuristic")
    assert m == pytest.approx(math.sqrt(0.5))  # mean square jump 1, halved, no sampling variance
    short = flips[:3]
    assert model_error(short, "heuristic") == analysis.PRIOR_MODEL_ERROR["heuristic"]
    assert model_error(short, "random") == analysis.PRIOR_MODEL_ERROR["random"]


def test_a_curve_swinging_0_to_100_inside_tight_rollout_bands_is_drawn_as_unsure_as_it_is():
    job = Job("j", "s", None, "heuristic", 64, tuple(range(24)))
    for i in range(24):  # near-deterministic playouts: all 64 agree, and flip with the position
        job.results[i] = ([0.98, 0.02] if i % 3 else [0.02, 0.98]), 64
    out = job.to_json()
    assert out["model_error"] > 0.4 and "model error" in out["method"]
    points = out["points"]
    assert outside(points, 2) <= 0.1
    # the sampling alone (the Wilson interval) would leave most swings outside their bands
    wilson_only = [
        {"chances": p["chances"], "low": [wilson(c, 64)[0] for c in p["chances"]],
         "high": [wilson(c, 64)[1] for c in p["chances"]]}
        for p in points
    ]  # fmt: skip
    assert outside(wilson_only, 2) > 0.5


def test_heuristic_playouts_over_a_games_first_third_stay_inside_their_bands():
    record = heuristic_record(3, 4)
    every = states(record)
    first = [s for s in turn_starts(every) if s <= len(record.actions) // 3]
    analyst = Analyst()
    try:
        out = run(analyst, "third", every, first, None, "heuristic", 16)
    finally:
        analyst.close()
    assert out["error"] is None and len(out["points"]) == len(first) >= 20
    assert outside(out["points"], 3) <= 0.1
    for point in out["points"]:
        for c, low, high in zip(point["chances"], point["low"], point["high"], strict=True):
            assert low <= c <= high and high - c >= min(1 - c, Z95 * out["model_error"]) - 1e-4


# --------------------------------------------------------------------------- marks


def lopsided(seed: int = 7) -> GameRecord:
    """A 2-player game of the heuristic (A) against random moves (B)."""
    env = raw_env(num_players=2)
    env.reset(seed=seed)
    state = env.game_state
    agents = [make_agent("heuristic", seed=1), make_agent("random", seed=2)]
    taken = []
    while not state.is_terminal():
        action = agents[state.current_player()].act(None, action_mask(state), state)
        taken.append(action)
        state.apply_action(action)
    return GameRecord.from_game({"num_players": 2}, seed, taken, ["heuristic", "random"], state)


@pytest.fixture(scope="module")
def marked(tmp_path_factory):
    games = tmp_path_factory.mktemp("games")
    record = lopsided()
    save(record, games / "lopsided.json")
    client = client_for(games)
    steps = turn_starts(states(record))
    body = {"steps": steps, "playout": "random", "rollouts": 64}
    out = wait(client, client.post("/api/records/lopsided.json/analysis", json=body).json())
    return client, record, steps, out


def test_a_turn_whose_chance_fell_beyond_the_bands_is_marked_with_what_the_policy_preferred(marked):
    _, record, steps, out = marked
    every = states(record)
    marks = out["marks"]
    assert marks, out["method"]
    by_step = {p["step"]: p for p in out["points"]}
    named = 0
    for mark in marks:
        s, t, seat = mark["step"], mark["to"], mark["seat"]
        assert steps.index(t) == steps.index(s) + 1 and every[s].current_player() == seat
        fall = by_step[s]["chances"][seat] - by_step[t]["chances"][seat]
        assert mark["fall"] == pytest.approx(fall, abs=1e-4) and fall >= 0.10
        assert mark["kind"] == ("blunder" if fall >= 0.25 else "mistake")
        points = round(100 * fall)
        assert f"chance to win fell {points} points" in mark["text"]
        if mark["at"] is not None:
            named += 1
            assert s <= mark["at"] < t and every[mark["at"]].current_player() == seat
            assert mark["played"] != mark["preferred"]
            assert mark["text"].startswith(
                f"{seat_name(seat_names(record.agents), seat)} played {mark['played']}; "
            )
            assert f"; the heuristic preferred {mark['preferred']}; " in mark["text"]
    assert named >= 1


def test_the_marks_repeat_exactly_and_a_seats_view_marks_that_seats_turns_only(marked):
    client, _, steps, out = marked
    body = {"steps": steps, "playout": "random", "rollouts": 64}
    again = wait(client, client.post("/api/records/lopsided.json/analysis", json=body).json())
    assert again["marks"] == out["marks"]
    for seat in (0, 1):
        mine = wait(
            client, client.post("/api/records/lopsided.json/analysis", json={**body, "seat": seat}).json()
        )
        assert mine["marks"] is not None and all(m["seat"] == seat for m in mine["marks"])


def test_a_persons_marks_name_them_you_and_cover_their_own_turns_only(tmp_path):
    from tests.web_client import play_through

    client = client_for(tmp_path / "games")
    last = play_through(client, 2, 1, seed=9)
    game = client.app.state.web.games._games[last["id"]]
    steps = turn_starts(game.history)
    body = {"token": game.token, "steps": steps, "playout": "random", "rollouts": 32}
    out = wait(client, client.post(f"/api/games/{game.id}/analysis", json=body).json())
    assert out["marks"] is not None
    assert all(m["seat"] == 1 for m in out["marks"])
    for mark in out["marks"]:
        assert mark["text"].startswith(("You played ", "You: the heuristic would have played the same"))
        assert "your chance to win fell" in mark["text"]
