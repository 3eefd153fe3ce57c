"""A checkpoint's play modes as agent specs: greedy (``CHECKPOINT``), sampled
(``sample:CHECKPOINT``) and thresholded (``threshold:P:CHECKPOINT``: the actions below P dropped,
the rest renormalised, then sampled), played alike by the single agent, the batched runner's
checkpoint seats and its network seats."""

from __future__ import annotations

import math
from pathlib import Path

import numpy as np
import pytest
import torch
from tiny_runs import run_command, small_checkpoint

from island_fortress_env import vector
from island_fortress_env.agents.base import thresholded
from island_fortress_env.agents.checkpoint import CheckpointAgent, load_policy
from island_fortress_env.players import AgentKind, AgentSpecError, make_agent, parse_agent_spec, spec_labels
from island_fortress_env.players.runner import Games
from island_fortress_env.players.seat_policies import CheckpointSeats, sample_actions, seat_policy
from island_fortress_env.players.specs import GREEDY, SAMPLED, PlayMode
from island_fortress_env.training.evaluate import evaluate

ROOT = Path(__file__).resolve().parents[1]
SHIPPED = str(ROOT / "checkpoints" / "policy-2-4p.zip")


@pytest.fixture(scope="module")
def small(tmp_path_factory) -> str:
    return str(small_checkpoint(tmp_path_factory.mktemp("modes") / "small.zip", seed=4))


def _positions(count: int = 12, seed: int = 3) -> tuple[np.ndarray, np.ndarray]:
    """Observations and masks of ``count`` positions: a few moves into games played at random."""
    tables = vector.make(count, num_players=2, seed=seed, backend="python")
    tables.reset()
    rng = np.random.default_rng(seed)
    for _ in range(5):
        actions = np.array([rng.choice(np.flatnonzero(m)) for m in tables.mask], dtype=np.int64)
        tables.step(actions, np.ones(count, dtype=np.bool_))
    return tables.obs.copy(), tables.mask.copy()


# --------------------------------------------------------------------------- the spec


def test_a_threshold_spec_parses_to_its_probability_and_checkpoint():
    spec = parse_agent_spec(f"threshold:0.05:{SHIPPED}")
    assert spec.kind is AgentKind.THRESHOLD and spec.threshold == 0.05
    assert spec.path == Path(SHIPPED) and spec.checkpoint == Path(SHIPPED)
    assert spec.label == "threshold:0.05:policy-2-4p"
    assert spec.play_mode == PlayMode(threshold=0.05)
    assert parse_agent_spec(SHIPPED).play_mode == GREEDY
    assert parse_agent_spec(f"sample:{SHIPPED}").play_mode == SAMPLED
    assert parse_agent_spec("heuristic").play_mode is None
    labels = spec_labels([parse_agent_spec(s) for s in (SHIPPED, f"threshold:1e-3:{SHIPPED}")])
    assert labels == ["policy-2-4p", "threshold:1e-3:policy-2-4p"]


@pytest.mark.parametrize(
    ("text", "says"),
    [
        ("threshold:0:x.zip", "between 0 and 1"),
        ("threshold:1:x.zip", "between 0 and 1"),
        ("threshold:-0.1:x.zip", "between 0 and 1"),
        ("threshold:nan:x.zip", "between 0 and 1"),
        ("threshold:high:x.zip", "between 0 and 1"),
        ("threshold: 0.1:x.zip", "between 0 and 1"),
        ("threshold:", "between 0 and 1"),
        ("threshold:0.1", "CHECKPOINT the path"),
        ("threshold:0.1:", "CHECKPOINT the path"),
        ("threshold:0.1:sample:x.zip", "CHECKPOINT the path"),
    ],
)
def test_a_bad_threshold_spec_is_one_agent_spec_error(text, says):
    with pytest.raises(AgentSpecError, match=says) as error:
        parse_agent_spec(text)
    assert "\n" not in str(error.value) and repr(text) in str(error.value)


def test_a_bad_threshold_on_the_command_line_is_one_line_and_exit_2(capsys):
    code, out, err = run_command(["evaluate", f"threshold:1.5:{SHIPPED}", "random", "--games", "2"], capsys)
    assert code == 2 and not out
    lines = err.strip().splitlines()
    assert len(lines) == 1 and "between 0 and 1" in lines[0]


# --------------------------------------------------------------------------- the draw


def test_thresholding_drops_the_actions_below_p_and_renormalises_the_rest():
    p = np.array([0.0, 0.5, 0.3, 0.15, 0.05])
    assert thresholded(p, 0.1) == pytest.approx([0.0, 0.5 / 0.95, 0.3 / 0.95, 0.15 / 0.95, 0.0])
    assert thresholded(p, 0.9).tolist() == [0.0, 1.0, 0.0, 0.0, 0.0]  # the most probable stays
    rows = thresholded(np.array([p, p[::-1]]), 0.2)
    assert rows[0] == pytest.approx([0, 0.5 / 0.8, 0.3 / 0.8, 0, 0])
    assert rows[1] == pytest.approx([0, 0, 0.3 / 0.8, 0.5 / 0.8, 0])


def test_a_threshold_agent_draws_only_actions_at_or_above_p(small):
    obs, masks = _positions()
    agent = make_agent(f"threshold:0.3:{small}", seed=0)
    assert isinstance(agent, CheckpointAgent) and not agent.deterministic and agent.threshold == 0.3
    assert agent.name == "threshold:0.3:small"
    probs = agent.probabilities(obs, masks)
    sampled = make_agent(f"sample:{small}", seed=0)
    dropped_one = False
    for k in range(len(obs)):
        allowed = (probs[k] >= 0.3) | (np.arange(len(probs[k])) == probs[k].argmax())
        chosen = {agent.act(obs[k], masks[k]) for _ in range(40)}
        assert all(allowed[a] and masks[k][a] for a in chosen)
        drawn = {sampled.act(obs[k], masks[k]) for _ in range(40)}
        dropped_one |= any(not allowed[a] for a in drawn)
    assert dropped_one  # sampled play takes actions that thresholded play never does


def test_the_batched_checkpoint_seats_draw_as_the_single_agent_with_its_seed(small):
    obs, masks = _positions(count=6)
    spec = f"threshold:0.3:{small}"
    seats = seat_policy(spec, make_agent)
    assert isinstance(seats, CheckpointSeats) and seats.name == "threshold:0.3:small"
    slots, seat_of = np.arange(6), np.zeros(6, dtype=np.int64)
    for slot in slots.tolist():
        seats.begin(slot, 0, seed=100 + slot)
    singles = [make_agent(spec, seed=100 + slot) for slot in slots.tolist()]
    for _ in range(3):  # each game's generator goes on drawing as the agent's does
        batched = seats.act(obs, masks, Games(None, slots, seat_of))
        assert batched.tolist() == [a.act(obs[k], masks[k]) for k, a in enumerate(singles)]


def test_the_network_seats_draw_thresholded_with_the_noise_of_a_sampled_draw(small):
    obs, masks = _positions(count=12)
    net, _ = load_policy(small)

    def draw(threshold: float, greedy: bool = False) -> tuple[np.ndarray, np.ndarray]:
        generator = torch.Generator().manual_seed(7)
        actions, logp, _values = sample_actions(net, obs, masks, generator, greedy, threshold)
        return actions, logp

    probs = CheckpointAgent(small).probabilities(obs, masks)
    plain, plain_logp = draw(0.0)
    # a threshold that drops nothing legal: the same draw from the same generator
    tiny, tiny_logp = draw(1e-30)
    assert tiny.tolist() == plain.tolist() and tiny_logp == pytest.approx(plain_logp, abs=1e-5)
    assert draw(0.3, greedy=True)[0].tolist() == draw(0.0, greedy=True)[0].tolist()
    kept = thresholded(probs, 0.3)
    for seed in range(20):
        generator = torch.Generator().manual_seed(seed)
        actions, logp, _ = sample_actions(net, obs, masks, generator, threshold=0.3)
        assert all(kept[k, a] > 0 for k, a in enumerate(actions.tolist()))
        expected = np.log(kept[np.arange(len(actions)), actions])
        assert logp == pytest.approx(expected, abs=1e-4)  # the thresholded policy's own
    assert ((kept == 0) & (probs > 0)).any()  # some legal action is dropped
    assert not all(math.isclose(x, 1.0) for x in kept.max(axis=1))  # more than one action kept somewhere


def test_a_threshold_checkpoint_plays_in_evaluate_under_its_label(small):
    result = evaluate([f"threshold:0.05:{small}", "random"], games=2, seed=0)
    names = [agent["name"] for agent in result["agents"]]
    assert names == ["threshold:0.05:small", "random"] and result["games"] == 2
