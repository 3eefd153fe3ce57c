"""``mixture:FILE``: a mixed strategy over agents (one member drawn per game), as an agent of every
command and as the fixed opponent of a best response (``league.opponent``, ``island-fortress
exploit``), the file written by hand or by ``island-fortress tournament --out``."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest
import torch
from tiny_runs import SMALL, run_command, small_checkpoint

from island_fortress_env.agents.checkpoint import CheckpointError, load_policy
from island_fortress_env.agents.network import ActorCritic
from island_fortress_env.players import AgentSpecError, MixtureAgent, check_agent_spec, make_agent
from island_fortress_env.players.mixture import Member, read_mixture
from island_fortress_env.research import exploit
from island_fortress_env.training.config import NativeConfig, TrainConfigError, load_config
from island_fortress_env.training.evaluate import entry_names, evaluate, plays_in_core
from island_fortress_env.training.league import OPPONENT_KINDS, GameKind, League, opponent_probabilities
from island_fortress_env.training.plot_curves import read_scalars

ROOT = Path(__file__).resolve().parents[1]
SHIPPED = ROOT / "checkpoints" / "policy-2-4p.zip"
SMALL_NET = ("policy.cnn_channels=2", "policy.hidden=8")


def _mixture(path: Path, weights: dict, *, tournament: bool = False) -> str:
    """Write ``weights`` as a mixture file (as a tournament's result with ``tournament``)."""
    data = {"agents": [], "meta_nash": {"mixture": weights}} if tournament else {"mixture": weights}
    path.write_text(json.dumps(data), "utf-8")
    return f"mixture:{path}"


# --------------------------------------------------------------------------- the file


@pytest.mark.parametrize("tournament", [False, True])
def test_the_weights_are_read_in_order_normalised_and_zero_weights_left_out(tmp_path, tournament):
    spec = _mixture(
        tmp_path / "m.json", {"heuristic": 3, "random": 1, str(SHIPPED): 0}, tournament=tournament
    )
    assert read_mixture(spec) == (Member("heuristic", 0.75), Member("random", 0.25))
    check_agent_spec(spec)


def test_a_tournaments_out_file_is_a_mixture_of_its_nash_equilibrium(tmp_path, capsys):
    """The tournament names its agents for display (a checkpoint by its file name, a repeat with
    ``#2``): the file's ``agents`` rows give each one's spec, and a repeat's weight joins its own."""
    checkpoint = str(small_checkpoint(tmp_path / "sub" / "a.zip", seed=1))
    out = tmp_path / "ladder.json"
    argv = ["tournament", "heuristic", "heuristic", checkpoint, "random", "--games", "4", "--out", str(out)]
    code, text, _ = run_command([*argv, "--no-progress"], capsys)
    assert code == 0 and f"mixture:{out}" in text
    result = json.loads(out.read_text("utf-8"))
    spec_of = {row["name"]: row["spec"] for row in result["agents"]}
    assert set(spec_of) == {"heuristic", "heuristic#2", "a", "random"}
    expected: dict[str, float] = {}
    for name, weight in result["meta_nash"]["mixture"].items():
        expected[spec_of[name]] = expected.get(spec_of[name], 0.0) + weight
    members = read_mixture(f"mixture:{out}")
    assert {m.spec: m.weight for m in members} == pytest.approx({s: w for s, w in expected.items() if w > 0})
    check_agent_spec(f"mixture:{out}")
    code, _, err = run_command(["evaluate", f"mixture:{out}", "heuristic", "--games", "2"], capsys)
    assert code == 0, err


@pytest.mark.parametrize(
    ("content", "says"),
    [
        (None, "no such file"),
        ("{not json", "not a readable JSON file"),
        ('{"agents": []}', "has no mixture"),
        ('{"mixture": {}}', "has no mixture"),
        ('{"mixture": ["heuristic"]}', "has no mixture"),
        ('{"mixture": {"heuristic": -1, "random": 2}}', "must be >= 0"),
        ('{"mixture": {"heuristic": true}}', "must be a number"),
        ('{"mixture": {"heuristic": "1"}}', "must be a number"),
        ('{"mixture": {"heuristic": NaN}}', "must be a number"),
        ('{"mixture": {"heuristic": 0, "random": 0}}', "sum to 0"),
        ('{"mixture": {"heuristic": 1e308, "random": 1e308}}', "more than a float holds"),
        ('{"mixture": {"mixture:other.json": 1}}', "not empty or another mixture"),
        ('{"mixture": {"": 1}}', "not empty or another mixture"),
        ('{"mixture": {"heuristik": 1}}', "member unknown agent 'heuristik'"),
        ('{"mixture": {"nowhere.zip": 1}}', "member unknown agent 'nowhere.zip'"),
    ],
)
def test_a_bad_mixture_is_one_agent_spec_error_that_says_why(tmp_path, content, says):
    path = tmp_path / "m.json"
    if content is not None:
        path.write_text(content, "utf-8")
    with pytest.raises(AgentSpecError, match=says) as caught:
        check_agent_spec(f"mixture:{path}")
    assert "\n" not in str(caught.value) and str(caught.value).startswith(f"agent 'mixture:{path}': ")


def test_a_mixture_without_a_file_or_of_a_directory_is_refused(tmp_path):
    with pytest.raises(AgentSpecError, match="expected mixture:FILE"):
        check_agent_spec("mixture:")
    with pytest.raises(AgentSpecError, match="a directory, not a file"):
        check_agent_spec(f"mixture:{tmp_path}")


def test_a_bad_mixture_on_the_command_line_is_one_line_and_exit_2(tmp_path, capsys):
    spec = _mixture(tmp_path / "m.json", {"heuristic": -1})
    code, out, err = run_command(["evaluate", spec, "heuristic", "--games", "2"], capsys)
    assert code == 2 and not out and len(err.strip().splitlines()) == 1 and "must be >= 0" in err


# --------------------------------------------------------------------------- the agent


def test_each_game_is_played_by_one_member_drawn_by_weight_and_the_seed_draws_the_same(tmp_path):
    agent = make_agent(_mixture(tmp_path / "m.json", {"heuristic": 3, "random": 1}), seed=0)
    assert isinstance(agent, MixtureAgent)
    drawn = []
    for game in range(2000):
        agent.reset(seed=game)
        drawn.append(agent.current)
    share = np.mean(np.array(drawn) == 0)
    assert 0.72 < share < 0.78  # 0.75 by the weights (2000 seeded draws: a fixed number)
    again = [(agent.reset(seed=game), agent.current)[1] for game in range(2000)]
    assert again == drawn


def test_the_drawn_member_plays_the_game(tmp_path):
    """Game after game, each move is the one the member drawn for that game makes (a twin of it
    with the same generator answers alike), and both members get games."""
    import copy

    from island_fortress_env import island_fortress_v0

    agent = make_agent(_mixture(tmp_path / "m.json", {"heuristic": 1, "random": 1}), seed=0)
    assert isinstance(agent, MixtureAgent) and [a.name for a in agent.agents] == ["heuristic", "random"]
    env = island_fortress_v0.env(num_players=2)
    drawn = set()
    for game in range(6):
        env.reset(seed=game)
        agent.reset(seed=game)
        drawn.add(agent.current)
        for _ in range(30):
            obs, *_ = env.last()
            state = env.unwrapped.game_state
            member = agent.agents[agent.current]
            twin = make_agent(member.name)
            twin.rng = copy.deepcopy(member.rng)  # type: ignore[attr-defined]
            action = agent.act(obs["observation"], obs["action_mask"], state)
            assert action == twin.act(obs["observation"], obs["action_mask"], state)
            env.step(action)
    assert drawn == {0, 1}


def test_a_mixture_plays_in_the_core_as_in_the_python_engine_and_is_named_by_its_file(tmp_path):
    spec = _mixture(tmp_path / "m.json", {"heuristic": 1, "random": 1})
    assert plays_in_core(spec)
    assert entry_names([spec, "heuristic"]) == ["mixture:m.json", "heuristic"]
    core = evaluate([spec, "heuristic"], games=12, seed=3)
    python = evaluate([spec, "heuristic"], games=12, seed=3, env_options={"backend": "python"})
    assert core["agents"] == python["agents"]
    assert core == evaluate([spec, "heuristic"], games=12, seed=3)  # reproducible
    searching = _mixture(tmp_path / "s.json", {"heuristic": 1, "mcts:2": 1})
    assert not plays_in_core(searching)


# --------------------------------------------------------------------------- as a fixed opponent


def _config(*overrides: str) -> NativeConfig:
    cfg: NativeConfig = load_config(None, ["league.share=1.0", *SMALL_NET, *overrides], schema=NativeConfig)
    return cfg


def test_its_members_play_the_league_games_by_their_weights_whatever_the_games_say(tmp_path):
    a = small_checkpoint(tmp_path / "a.zip", seed=1)
    b = small_checkpoint(tmp_path / "b.zip", seed=2)
    spec = _mixture(tmp_path / "m.json", {str(a): 0.1, str(b): 0.3, "heuristic": 0.4, "random": 0.2})
    cfg = _config(f"league.opponent={spec}")
    p = opponent_probabilities(cfg.league)
    assert p.tolist() == pytest.approx([0.4, 0.4, 0.2, 0.0])
    assert [k for k, w in zip(OPPONENT_KINDS, p, strict=True) if w] == [
        GameKind.SNAPSHOT, GameKind.HEURISTIC, GameKind.RANDOM
    ]  # fmt: skip
    league = League.for_run(cfg, ActorCritic(**SMALL), 0)
    assert league.fixed and [e.member for e in league.pool.values()] == [str(a), str(b)]
    for sid, path in zip(league.pool, (a, b), strict=True):
        expected = load_policy(path)[0].state_dict()
        assert all(torch.equal(league.pool[sid].state_dict[k], expected[k]) for k in expected)
    first, second = league.pool
    assert league.probabilities() == {first: pytest.approx(0.25), second: pytest.approx(0.75)}
    for _ in range(20):  # the learner beats the second one every time: its weight stays
        league.record(second, 1.0)
    assert league.probabilities() == {first: pytest.approx(0.25), second: pytest.approx(0.75)}
    assert league.standing().probabilities == league.probabilities()
    assert set(league.member_win_rates()) == {str(a), str(b)}


def test_a_mixture_with_a_search_player_cannot_be_a_league_opponent(tmp_path):
    checkpoint = small_checkpoint(tmp_path / "a.zip")
    spec = _mixture(tmp_path / "m.json", {"heuristic": 1, f"search:{checkpoint}:2": 1})
    check_agent_spec(spec)  # an agent for evaluate, the tournament, play
    with pytest.raises(TrainConfigError, match=r"league\.opponent.*cannot hold a search player"):
        _config(f"league.opponent={spec}")


def test_the_exploiter_starts_from_the_most_played_checkpoint(tmp_path):
    a = small_checkpoint(tmp_path / "a.zip", seed=1)
    b = small_checkpoint(tmp_path / "b.zip", seed=2)
    spec = _mixture(tmp_path / "pop.json", {str(a): 0.2, "heuristic": 0.5, str(b): 0.3})
    assert exploit.checkpoints_of(spec) == [str(b), str(a)] and exploit.weights_of(spec) == str(b)
    assert exploit.start_of(spec, None) == "target"
    assert exploit.run_name(spec, 2, 0).startswith("exploit-mixture-pop-2p-seed0-")
    cfg = exploit.exploit_config(spec, 2, "target", 0, tmp_path, decisions=10)
    assert cfg.policy.init_from == str(b) and cfg.league.opponent == spec
    no_weights = _mixture(tmp_path / "kinds.json", {"heuristic": 1, "random": 1})
    assert exploit.weights_of(no_weights) is None and exploit.start_of(no_weights, None) == "scratch"
    with pytest.raises(exploit.ExploitError, match="no weights to start from"):
        exploit.start_of(no_weights, "target")


def test_a_best_response_to_a_mixture_plays_each_member_and_logs_how_often_it_finishes_ahead(tmp_path):
    a = small_checkpoint(tmp_path / "a.zip", seed=1)
    spec = _mixture(tmp_path / "pop.json", {str(a): 0.5, "random": 0.5})
    overrides = [
        "train.workers=0", "train.pipelined=false", "train.rollout_decisions=1024",
        "train.games_per_collector=8", "ppo.minibatch_size=256", *SMALL_NET,
    ]  # fmt: skip
    report = exploit.best_response(
        spec, players=2, decisions=2000, seed=0, games=4, out=tmp_path, overrides=overrides
    )
    assert report["target"] == spec and report["from"] == "target"
    assert report["target_mixture"] == {str(a): 0.5, "random": 0.5}  # as trained against
    assert report["training"]["games_vs_target"] > 0 and report["evaluation"]["games"] == 4
    scalars = read_scalars(report["tensorboard"])
    assert "league/ahead_of_member_0_a" in scalars and exploit.TAG in scalars


def test_a_mixture_of_another_network_is_refused_before_training(tmp_path, capsys):
    a = small_checkpoint(tmp_path / "a.zip")
    spec = _mixture(tmp_path / "m.json", {str(a): 1, str(SHIPPED): 1})
    with pytest.raises(CheckpointError):
        exploit.exploit(spec, players=2, decisions=100, out=tmp_path, overrides=list(SMALL_NET))
    code, out, err = run_command(["exploit", spec, "--decisions", "100", "--out", str(tmp_path)], capsys)
    assert code == 2 and not out and len(err.strip().splitlines()) == 1
    assert not list(tmp_path.glob("checkpoints/*"))  # refused before any training


# --------------------------------------------------------------------------- in the browser app


def test_the_web_app_offers_a_mixture_for_the_seats_but_not_for_analysis(tmp_path):
    pytest.importorskip("starlette")
    from tests.web_client import client_for, play_through

    spec = _mixture(tmp_path / "m.json", {"heuristic": 1, str(SHIPPED): 1})
    with client_for(tmp_path / "games", agents=("random", spec, str(SHIPPED))) as client:
        config = client.get("/api/config").json()
        assert config["agents"] == ["random", spec, str(SHIPPED)]
        assert config["checkpoints"] == [str(SHIPPED)]  # what the analysis reads: a checkpoint's policy
        last = play_through(client, players=2, seat=0, seed=3, opponents=[spec])
    assert last["view"]["terminal"] and last["record"]


@pytest.mark.parametrize(
    ("spec", "name"),
    [
        ("checkpoints/policy-2-4p.zip", "policy-2-4p"),
        ("sample:checkpoints/policy-2-4p.zip", "sample:policy-2-4p"),
        ("mixture:runs/meta.json", "mixture:meta.json"),
        ("heuristic", "heuristic"),
        ("search:64", "search:64"),
    ],
)
def test_a_seat_in_the_web_app_is_named_by_its_kind_and_file(spec, name):
    from island_fortress_env.web.words import seat_label

    assert seat_label(spec) == name
