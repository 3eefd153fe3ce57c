"""Agent specs: ``mcts[:N]`` on the command line, with or without OpenSpiel installed, and
``sample:CHECKPOINT``, a checkpoint's policy played by sampling its actions instead of greedily."""

from __future__ import annotations

import importlib.util
from pathlib import Path

import numpy as np
import pytest
from tiny_runs import SMALL, small_checkpoint

from island_fortress_env.agents.checkpoint import CheckpointAgent
from island_fortress_env.agents.network import ActorCritic
from island_fortress_env.cli import app as cli
from island_fortress_env.players import AgentSpecError, check_agent_spec, make_agent, parse_agent_spec
from island_fortress_env.players.ismcts import DEFAULT_SIMULATIONS
from island_fortress_env.research import exploit
from island_fortress_env.training import evaluate as evaluate_mod
from island_fortress_env.training.config import NativeConfig, load_config
from island_fortress_env.training.league import League

ROOT = Path(__file__).resolve().parents[1]
SHIPPED = str(ROOT / "checkpoints" / "policy-2-4p.zip")


def test_simulations_parse():
    assert parse_agent_spec("mcts").simulations == DEFAULT_SIMULATIONS
    assert parse_agent_spec("mcts:").simulations == DEFAULT_SIMULATIONS
    assert parse_agent_spec("mcts:7").simulations == 7


@pytest.mark.parametrize("spec", ["mcts:0", "mcts:x", "mcts:-3", "mcts:1.5"])
def test_a_bad_mcts_spec_is_one_line_and_exit_2(spec, capsys):
    with pytest.raises(SystemExit) as exit_info:
        cli.main(["evaluate", spec, "random", "--games", "2"])
    assert exit_info.value.code == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert "positive whole number of simulations" in err[-1] and spec in err[-1]


def test_mcts_without_openspiel_says_what_to_install(monkeypatch, capsys):
    real = importlib.util.find_spec
    monkeypatch.setattr(
        importlib.util, "find_spec", lambda name, *a: None if name == "pyspiel" else real(name, *a)
    )
    with pytest.raises(SystemExit) as exit_info:
        cli.main(["evaluate", "mcts:5", "random", "--games", "2"])
    assert exit_info.value.code == 2
    assert "[openspiel]" in capsys.readouterr().err.strip().splitlines()[-1]


# --------------------------------------------------------------------------- sample:CHECKPOINT


def test_a_sampled_checkpoint_is_the_checkpoints_policy_with_its_actions_drawn():
    check_agent_spec(f"sample:{SHIPPED}")
    agent = make_agent(f"sample:{SHIPPED}", seed=0)
    assert isinstance(agent, CheckpointAgent) and not agent.deterministic
    assert agent.name == "sample:policy-2-4p"
    assert isinstance(make_agent(SHIPPED), CheckpointAgent) and make_agent(SHIPPED).deterministic
    specs = (SHIPPED, f"sample:{SHIPPED}", "heuristic", "search:8")
    assert [parse_agent_spec(s).checkpoint for s in specs] == [Path(SHIPPED), Path(SHIPPED), None, None]


def test_a_sampled_checkpoint_draws_by_the_policy_from_its_own_seeded_generator():
    from island_fortress_env import island_fortress_v0

    env = island_fortress_v0.env(num_players=2)
    env.reset(seed=1)
    obs, *_ = env.last()
    agent = make_agent(f"sample:{SHIPPED}", seed=0)
    probs = agent.probabilities(obs["observation"], obs["action_mask"])
    draws = [agent.act(obs["observation"], obs["action_mask"]) for _ in range(400)]
    assert set(draws) <= set(np.flatnonzero(probs)) and len(set(draws)) > 1  # not its greedy choice
    agent.reset(seed=0)
    assert draws == [agent.act(obs["observation"], obs["action_mask"]) for _ in range(400)]


@pytest.mark.parametrize(
    ("spec", "says"),
    [
        ("sample:", "expected sample:CHECKPOINT"),
        ("sample:heuristic", "expected sample:CHECKPOINT"),
        ("sample:search:8", "expected sample:CHECKPOINT"),
        ("sample:nowhere.zip", "'nowhere.zip' is no such file"),
    ],
)
def test_a_bad_sampled_checkpoint_is_one_clear_error(spec, says):
    with pytest.raises(AgentSpecError, match=says):
        check_agent_spec(spec)


def test_a_sampled_checkpoint_is_evaluated_in_the_core_as_in_python_and_named_so():
    specs = [f"sample:{SHIPPED}", "heuristic"]
    assert evaluate_mod.plays_in_core(specs[0])
    assert evaluate_mod.entry_names([specs[0], SHIPPED]) == ["sample:policy-2-4p", "policy-2-4p"]
    core = evaluate_mod.evaluate(specs, games=4, seed=2)
    python = evaluate_mod.evaluate(specs, games=4, seed=2, env_options={"backend": "python"})
    assert core["agents"] == python["agents"]


def test_a_best_response_to_a_sampled_checkpoint_starts_from_its_weights_and_plays_it_as_a_snapshot(tmp_path):
    target = str(small_checkpoint(tmp_path / "t.zip", seed=1))
    spec = f"sample:{target}"
    assert exploit.weights_of(spec) == target and exploit.start_of(spec, None) == "target"
    assert exploit.run_name(spec, 2, 0).startswith("exploit-sample-t-2p-seed0-")
    cfg = exploit.exploit_config(spec, 2, "target", 0, tmp_path, decisions=10)
    assert cfg.policy.init_from == target and cfg.policy.hidden == SMALL["hidden"]
    league = League.for_run(
        load_config(None, ["league.share=1", f"league.opponent={spec}", "policy.cnn_channels=2",
                           "policy.hidden=8"], schema=NativeConfig),
        ActorCritic(**SMALL), 0,
    )  # fmt: skip
    assert league.fixed and len(league.pool) == 1
