"""training/evaluate.py: seat rotation, shared wins, Wilson intervals, ratings and the CLI."""

from __future__ import annotations

import json

import numpy as np
import pytest

from island_fortress_env import core
from island_fortress_env.agents import RandomAgent
from island_fortress_env.cli import app as cli
from island_fortress_env.core import game as core_game
from island_fortress_env.engine import Game, scoring
from island_fortress_env.engine.results import game_result
from island_fortress_env.engine.state import play_random_game
from island_fortress_env.players import AgentSpecError, make_agent
from island_fortress_env.stats import wilson
from island_fortress_env.training import evaluate as ev


class SeatRecorder:
    """Plays uniformly at random and records, per game, the seats it was asked to move for (it is
    made for its first game, and reset for each one after)."""

    def __init__(self, spec: str, seed: int | None = None) -> None:
        self.name = spec
        self.spec = spec
        self.rng = np.random.default_rng(seed)
        self.games: list[set[int]] = [set()]
        self.seeds: list[int | None] = [seed]

    def reset(self, seed: int | None = None) -> None:
        self.rng = np.random.default_rng(seed)
        self.seeds.append(seed)
        self.games.append(set())

    def act(self, observation, action_mask, state=None) -> int:
        assert state is not None, "evaluate passes the engine state to every agent"
        self.games[-1].add(state.current_player())
        legal = np.flatnonzero(action_mask)
        return int(legal[self.rng.integers(len(legal))])


@pytest.fixture
def recorders(monkeypatch):
    made: list[SeatRecorder] = []

    def factory(spec, seed=None):
        agent = SeatRecorder(spec, seed)
        made.append(agent)
        return agent

    monkeypatch.setattr(ev, "make_agent", factory)  # the agents of every seat of every game
    return made


# ---------------------------------------------------------------------------- seats


@pytest.mark.parametrize("k", [2, 3, 4])
def test_every_agent_sits_in_every_seat_equally(recorders, k, tmp_path):
    from island_fortress_env.env.records import load

    games = 2 * k
    specs = ["random", "heuristic", "random#", "heuristic#"][:k]
    specs = [spec.rstrip("#") for spec in specs]
    result = ev.evaluate(specs, games=games, seed=5, save_games=tmp_path)
    names = ev.entry_names(specs)
    for g, path in enumerate(result["saved_games"]):
        # game g puts agent i in seat (i + g) % k: seat s holds agent (s - g) % k
        assert list(load(path).agents) == [names[(s - g) % k] for s in range(k)]
    for i in range(k):
        assert result["agents"][i]["seat_games"] == [2] * k
        assert result["agents"][i]["games"] == games
    # Each agent only ever moves for the seat it sits in, one agent a seat per game.
    assert all(len(seats) <= 1 for agent in recorders for seats in agent.games)
    # Each game seeds every agent, differently per agent and per game.
    all_seeds = sorted(s for agent in recorders for s in agent.seeds)
    assert all_seeds == sorted(ev.agent_seed(5, g, i) for g in range(games) for i in range(k))


def test_runs_are_reproducible():
    a = ev.evaluate(["random", "random", "random"], games=6, seed=11)
    b = ev.evaluate(["random", "random", "random"], games=6, seed=11)
    c = ev.evaluate(["random", "random", "random"], games=6, seed=12)
    assert a == b
    assert [x["mean_score"] for x in a["agents"]] != [x["mean_score"] for x in c["agents"]]


# ---------------------------------------------------------------------------- wins


def test_a_tie_of_every_player_counts_one_kth(monkeypatch):
    # Every game ends with all seats tied: each agent wins 1/k of every game (in the Python
    # engine, whose scoring can be replaced).
    monkeypatch.setattr(core, "available", lambda: False)
    monkeypatch.setattr(scoring, "winners", lambda scores, *rest: list(range(len(scores))))
    monkeypatch.setattr(core_game, "default_backend", lambda: "python")
    result = ev.evaluate(["random", "random", "random"], games=6, seed=2)
    for entry in result["agents"]:
        assert entry["wins"] == pytest.approx(2.0)
        assert entry["win_rate"] == pytest.approx(1 / 3)
    assert sum(e["wins"] for e in result["agents"]) == pytest.approx(6.0)


def test_a_two_way_tie_gives_half_a_win_to_each_tied_seat():
    state = play_random_game(Game(num_players=3), seed=4)
    assert state.is_terminal()
    state.winners = [0, 2]
    totals = [ev.AgentTotals(seats=[0, 0, 0]) for _ in range(3)]
    seat_of = [1, 2, 0]  # agent 0 in seat 1, agent 1 in seat 2, agent 2 in seat 0
    ev.record_game(totals, seat_of, game_result(state, seed=4, length=0))
    assert [t.wins for t in totals] == [0.0, 0.5, 0.5]
    assert [t.score for t in totals] == [state.score[1], state.score[2], state.score[0]]
    assert [t.seats for t in totals] == [[0, 1, 0], [0, 0, 1], [1, 0, 0]]


def test_wins_always_add_up_to_the_number_of_games():
    result = ev.evaluate(["random", "random"], games=8, seed=3)
    assert sum(e["wins"] for e in result["agents"]) == pytest.approx(8.0)


def test_final_ranks_follow_the_rulebook_tie_breaks():
    state = play_random_game(Game(num_players=4), seed=9)
    state.score = [30, 30, 20, 30]
    state.own = [0b111, 0b111, 0b1, 0b1]  # seats 0 and 1: more blocks than seat 3
    state.jade = [5, 5, 0, 9]
    state.treasure = [1, 1, 0, 0]
    assert game_result(state, seed=9, length=0).rank == (1, 1, 4, 3)


# ---------------------------------------------------------------------------- Wilson


@pytest.mark.parametrize(
    ("wins", "games", "lo", "hi"),
    [
        (8, 10, 0.4902, 0.9433),  # the textbook example
        (0, 10, 0.0, 0.2775),
        (10, 10, 0.7225, 1.0),
        (50, 100, 0.4038, 0.5962),
        (1, 2, 0.0945, 0.9055),
    ],
)
def test_wilson_interval_known_values(wins, games, lo, hi):
    got = wilson(wins / games, games)
    assert got == pytest.approx((lo, hi), abs=1e-4)


def test_wilson_interval_contains_the_rate_and_narrows():
    wide = wilson(7.5 / 10, 10)  # shared wins make fractional counts
    narrow = wilson(75 / 100, 100)
    assert wide[0] < 0.75 < wide[1]
    assert narrow[0] < 0.75 < narrow[1]
    assert narrow[1] - narrow[0] < wide[1] - wide[0]


# ---------------------------------------------------------------------------- ratings


def test_two_distinct_agents_get_no_rating():
    result = ev.evaluate(["random", "heuristic"], games=2, seed=0)
    assert result["rated"] is False
    assert all("rating" not in e for e in result["agents"])
    repeated = ev.evaluate(["heuristic", "random", "random"], games=3, seed=0)
    assert repeated["rated"] is False  # distinct by spec: only two
    assert [e["name"] for e in repeated["agents"]] == ["heuristic", "random", "random#2"]


def test_three_distinct_agents_are_rated(tmp_path, monkeypatch):
    from island_fortress_env.agents.checkpoint import save_policy
    from island_fortress_env.agents.network import ActorCritic

    fake = tmp_path / "policy.zip"  # a real (untrained) checkpoint spec, played by a random agent here
    save_policy(fake, ActorCritic(cnn_channels=2, hidden=4), {"cnn_channels": 2, "hidden": 4}, {})

    def factory(spec, seed=None):
        return RandomAgent(seed=seed) if spec == str(fake) else make_agent(spec, seed)

    monkeypatch.setattr(ev, "make_agent", factory)
    result = ev.evaluate(["heuristic", "random", str(fake)], games=6, seed=1)
    assert result["rated"] is True
    names = [e["name"] for e in result["agents"]]
    assert names == ["heuristic", "random", "policy"]
    for e in result["agents"]:
        assert set(e["rating"]) == {"mu", "sigma", "ordinal"}
        assert e["rating"]["sigma"] < 25 / 3  # updated from the prior
    by_name = {e["name"]: e for e in result["agents"]}
    assert by_name["heuristic"]["wins"] >= 5  # the heuristic wins nearly every game...
    assert by_name["heuristic"]["rating"]["mu"] > by_name["random"]["rating"]["mu"]  # ...and rates higher


# ---------------------------------------------------------------------------- in the C++ core


pytest_core = pytest.mark.skipif(not core.available(), reason="the C++ core is not built")


@pytest_core
def test_the_env_and_the_core_deal_the_same_game_from_a_seed():
    from island_fortress_env import island_fortress_v0

    env = island_fortress_v0.raw_env(num_players=3)
    for seed in (0, 7, 2**40):
        env.reset(seed=seed)
        state = core.new_initial_state(env.game, ev.env_game_seed(seed))
        assert state.encode(0).tobytes() == env.observe("player_0")["observation"].tobytes()
        assert state.deck == env.game_state.deck and state.legal_actions() == env.game_state.legal_actions()


@pytest_core
@pytest.mark.parametrize(
    "specs", [["checkpoints/policy-2-4p.zip", "heuristic", "random"], ["heuristic", "random"]]
)
def test_games_played_in_the_core_give_the_python_engines_results(specs, monkeypatch, tmp_path):
    """The same deals, observations and choices (the heuristic's in C++), so the same figures and
    the same game records."""
    from pathlib import Path

    from island_fortress_env import vector
    from island_fortress_env.env.records import load

    specs = [str(Path(__file__).resolve().parents[1] / s) if s.endswith(".zip") else s for s in specs]
    played = []
    real = vector.VectorEnv.step
    monkeypatch.setattr(vector.VectorEnv, "step", lambda *a, **k: played.append(1) or real(*a, **k))
    in_core = ev.evaluate(specs, games=4, seed=9, save_games=tmp_path / "core")
    assert played  # a batch of core games
    stepped = len(played)
    in_python = ev.evaluate(
        specs, games=4, seed=9, save_games=tmp_path / "python", env_options={"backend": "python"}
    )
    assert len(played) == stepped  # backend="python": no more games in the core
    records = [[load(path).to_dict() for path in r.pop("saved_games")] for r in (in_core, in_python)]
    assert in_core == in_python
    assert records[0] == records[1]


def test_openspiels_search_plays_through_the_python_engine_and_the_cores_in_the_core():
    assert ev.plays_in_core("heuristic") and ev.plays_in_core("random") and ev.plays_in_core("a/b.zip")
    assert not ev.plays_in_core("mcts:10") and not ev.plays_in_core("mcts")
    assert ev.plays_in_core("search:x.zip:8")  # the core's batched search (tests/test_batched_search.py)


# ---------------------------------------------------------------------------- CLI


def test_json_output_is_one_object_in_argument_order(capsys):
    code = cli.main(["evaluate", "random", "heuristic", "random", "--games", "3", "--seed", "4", "--json"])
    assert code == 0
    out, err = capsys.readouterr()
    data = json.loads(out)  # exactly one JSON document on stdout
    assert isinstance(data, dict)
    assert [a["name"] for a in data["agents"]] == ["random", "heuristic", "random#2"]
    for a in data["agents"]:
        assert {"name", "games", "wins", "win_rate", "ci95", "mean_score"} <= set(a)
        assert a["games"] == 3
        lo, hi = a["ci95"]
        assert 0.0 <= lo <= a["win_rate"] <= hi <= 1.0
    assert (data["games"], data["seed"], data["players"]) == (3, 4, 3)
    assert "evaluate" not in err  # no progress bar with --json on a non-terminal


def test_table_output(capsys):
    code = cli.main(["evaluate", "heuristic", "random", "--games", "2", "--seed", "1", "--no-progress"])
    assert code == 0
    out, err = capsys.readouterr()
    lines = out.strip().splitlines()
    assert lines[0].startswith("2 players, 2 games, seed 1")
    assert "win rate" in lines[1] and "95% CI" in lines[1] and "mean score" in lines[1]
    assert lines[3].split()[0] == "heuristic"
    assert lines[4].split()[0] == "random"
    assert len(lines) == 5
    assert err == ""


def test_table_shows_ratings_when_rated():
    result = {
        "players": 3, "games": 3, "seed": 0,
        "agents": [
            {"name": n, "games": 3, "wins": w, "win_rate": w / 3, "ci95": [0.0, 1.0], "mean_score": 10.0,
             "rating": {"mu": mu, "sigma": 5.0, "ordinal": mu - 15}}
            for n, w, mu in (("a", 2.0, 30.0), ("b", 1.0, 25.0), ("c", 0.0, 20.0))
        ],
    }  # fmt: skip
    text = ev.format_table(result)
    assert "rating" in text.splitlines()[1]
    assert "30.00" in text and "20.00" in text


def test_cli_dispatches_to_evaluate(capsys):
    assert cli.main(["evaluate", "random", "random", "--games", "2", "--json"]) == 0
    data = json.loads(capsys.readouterr().out)
    assert data["players"] == 2 and len(data["agents"]) == 2


def test_games_not_a_multiple_of_players_warns(capsys):
    assert cli.main(["evaluate", "random", "random", "random", "--games", "4", "--no-progress"]) == 0
    assert "not a multiple of 3" in capsys.readouterr().err


def test_bad_agent_spec_is_a_clear_error(capsys):
    with pytest.raises(AgentSpecError, match=r"unknown agent 'nonsense'.*random, heuristic"):
        ev.evaluate(["nonsense", "random"], games=2, seed=0)
    with pytest.raises(SystemExit) as exc:
        cli.main(["evaluate", "random", "no/such/policy.zip", "--games", "2"])
    assert exc.value.code == 2
    assert "unknown agent 'no/such/policy.zip'" in capsys.readouterr().err


def test_bad_checkpoint_file_is_a_clear_error(tmp_path, capsys):
    bogus = tmp_path / "bogus.zip"
    bogus.write_text("not a checkpoint")
    with pytest.raises(SystemExit) as exc:
        cli.main(["evaluate", str(bogus), "random", "--games", "2", "--no-progress"])
    assert exc.value.code == 2
    err = capsys.readouterr().err
    assert "error" in err and "bogus.zip" in err


@pytest.mark.parametrize("agents", [["random"], ["random"] * 5])
def test_wrong_number_of_agents(agents, capsys):
    with pytest.raises(SystemExit) as exc:
        cli.main(["evaluate", *agents, "--games", "2"])
    assert exc.value.code == 2
    assert "2-4 AGENTs" in capsys.readouterr().err
    with pytest.raises(ValueError, match="2-4 agents"):
        ev.evaluate(agents, games=2, seed=0)


def test_rules_options_reach_the_environment(capsys):
    assert (
        cli.main(["evaluate", "random", "random", "--games", "2", "--json", "--rule", "no_replace=true"]) == 0
    )
    assert json.loads(capsys.readouterr().out)["players"] == 2
    # Three regions for two players is refused by the rules config: the option got there.
    assert cli.main(["evaluate", "random", "random", "--games", "2", "--rule", "extra_region=true"]) == 2
    assert "extra_region" in capsys.readouterr().err
    assert cli.main(["evaluate", "random", "random", "--games", "2", "--rule", "bogus_option=1"]) == 2
    assert "bogus_option" in capsys.readouterr().err


def test_progress_bar_goes_to_stderr(capsys):
    ev.evaluate(["random", "random"], games=2, seed=0, progress=True)
    out, err = capsys.readouterr()
    assert out == ""
    assert "evaluate:" in err and "/2 " in err  # a tqdm bar over the 2 games
