"""The native trainer's starting points and precision: the shipped SB3 policy converted, init_from,
snapshots and greedy evaluation across processes, bfloat16 detection and the bfloat16 update."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
import torch
from native_runs import tiny_config

from island_fortress_env.agents.network import ActorCritic, torch_threads
from island_fortress_env.engine.actions import NUM_ACTIONS
from island_fortress_env.env.observation import OBS_SIZE
from island_fortress_env.players import make_agent
from island_fortress_env.training.collect import Collector
from island_fortress_env.training.config import NativeConfig, TrainConfigError, load_config
from island_fortress_env.training.greedy_eval import greedy_evaluation
from island_fortress_env.training.league import GameKind
from island_fortress_env.training.trajectories import SeatTrajectories
from island_fortress_env.training.weights import network_kwargs

ROOT = Path(__file__).resolve().parents[1]


# ---------------------------------------------------------------- starting from a checkpoint


BASELINE = ROOT / "checkpoints" / "baseline-3p.zip"
POLICY = ROOT / "checkpoints" / "policy-2-4p.zip"
TANH_32 = {"obs_size": OBS_SIZE, "num_actions": NUM_ACTIONS, "cnn_channels": 32, "hidden": 128,
           "head_activation": "tanh"}  # fmt: skip


def test_the_shipped_sb3_policy_loads_every_weight_and_converts_exactly():
    """Its torso's layers are named as the extractor's own (``wall.*``, ``board.*``): every weight
    must load (a silently re-initialised torso would play at random), and the native copy must
    give the same action probabilities as SB3's policy."""
    import warnings

    from island_fortress_env.agents.checkpoint import CheckpointAgent
    from island_fortress_env.env.aec import raw_env
    from island_fortress_env.training.weights import initial_weights

    with warnings.catch_warnings():
        warnings.simplefilter("error")  # SB3 turns a partial load into a warning
        agent = CheckpointAgent(BASELINE)
    net = ActorCritic(**TANH_32)
    net.load_state_dict(initial_weights(str(BASELINE), TANH_32))
    env = raw_env(num_players=3)
    env.reset(seed=4)
    rng = np.random.default_rng(0)
    for _ in range(40):
        o = env.observe(env.agent_selection)
        sb3 = agent.probabilities(o["observation"], o["action_mask"])
        with torch.no_grad():
            logits, _ = net(
                torch.as_tensor(o["observation"])[None], torch.as_tensor(o["action_mask"].astype(bool))[None]
            )
        assert np.abs(torch.softmax(logits, -1)[0].numpy() - sb3).max() < 1e-5
        env.step(int(rng.choice(np.flatnonzero(o["action_mask"]))))


def test_init_from_refuses_a_checkpoint_of_another_architecture(tmp_path):
    from island_fortress_env.agents.checkpoint import CheckpointError
    from island_fortress_env.training.weights import initial_weights

    with pytest.raises(CheckpointError, match="head_activation=tanh"):
        initial_weights(str(BASELINE), {**TANH_32, "head_activation": "relu"})
    with pytest.raises(CheckpointError, match="cnn_channels"):
        initial_weights(str(BASELINE), {**TANH_32, "cnn_channels": 16})
    with pytest.raises(TrainConfigError, match=r"policy\.init_from"):
        load_config(None, ["policy.init_from=missing.zip"], schema=NativeConfig)


def test_a_run_starts_from_init_from(tiny_native, tmp_path):
    _base, _cfg, final = tiny_native
    from island_fortress_env.agents.checkpoint import load_policy
    from island_fortress_env.training.weights import initial_weights

    cfg = tiny_config(tmp_path, "init", "pretrain.games=0", f"policy.init_from={final}")
    start = initial_weights(str(final), network_kwargs(cfg))
    reference, _ = load_policy(final)
    assert all(torch.equal(start[k], v) for k, v in reference.state_dict().items())


def test_a_collectors_python_games_share_one_observation_encoder_per_table_size():
    cfg = tiny_config(Path("/nonexistent"), "c", "league.share=0.0", "train.games_per_collector=12")
    collector = Collector(cfg, 0, SeatTrajectories, backend="python")
    collector.collect(ActorCritic(cnn_channels=4, hidden=16), 3000)
    encoders = collector.batch._encoders
    assert sorted(game.num_players for game in encoders) == [2, 3, 4]  # one per table size


def test_a_snapshot_leaving_the_pool_still_finishes_the_games_it_plays_in(backend):
    cfg = tiny_config(
        Path("/nonexistent"), "c", "league.share=1.0", "league.random=0.0", "train.games_per_collector=4"
    )
    collector = Collector(cfg, 0, SeatTrajectories, backend=backend)
    playing = lambda: [slot.current.tag for slot in collector.runner.slots]  # noqa: E731
    old, new = ActorCritic(cnn_channels=4, hidden=16), ActorCritic(cnn_channels=4, hidden=16)
    assert all(g.kind is GameKind.SELF_PLAY for g in playing())  # no snapshot to draw yet
    collector.set_snapshots({0: old.state_dict()}, {0: 1.0})
    for _ in range(20):  # the games begun from now on play snapshot 0
        collector.collect(new, 500)
        if any(g.snapshot == 0 for g in playing()):
            break
    assert any(g.snapshot == 0 for g in playing())
    collector.set_snapshots({1: new.state_dict()}, {1: 1.0})  # 0 leaves the pool mid-game
    assert 0 in collector.snapshots
    for _ in range(20):  # the games against 0 end; new ones draw 1
        collector.collect(new, 500)
        if all(g.snapshot != 0 for g in playing()):
            break
    assert all(g.snapshot != 0 for g in playing())
    collector.set_snapshots({}, {1: 1.0})
    assert 0 not in collector.snapshots and 1 in collector.snapshots


def test_greedy_evaluation_gives_the_same_figures_on_any_number_of_processes():
    """The tables are played on the processes, one a job; game ``g`` of a table is dealt and seated
    the same way wherever it is played, so the figures do not depend on the processes."""
    shipped = make_agent(str(ROOT / "checkpoints" / "policy-2-4p.zip"))
    one, three = (
        greedy_evaluation(
            shipped.net, shipped.metadata["network"], 7, 11, ["heuristic"], {}, processes=p, tables=(2, 3)
        )
        for p in (1, 3)
    )
    assert one == three
    assert set(one) == {
        "win_rate_vs_heuristic_2p",
        "win_rate_vs_heuristic_3p",
        "openskill_mu",
        "openskill_ordinal",
    }
    assert one["win_rate_vs_heuristic_2p"] > 0 and one["win_rate_vs_heuristic_3p"] > 0


def test_an_evaluation_in_the_learners_process_leaves_it_its_torch_threads():
    """Played in the learner's process (``train.workers=0``), the greedy evaluation plays on one
    thread and gives the learner back the threads it had: the update after it is not one-threaded."""
    net = ActorCritic(**TANH_32)
    with torch_threads(2):
        greedy_evaluation(net, TANH_32, 2, 0, ["random"], {}, processes=1, tables=(2,))
        assert torch.get_num_threads() == 2


@pytest.mark.parametrize("spec", ["POLICY", "sample:POLICY", "search:POLICY:4"])
def test_a_checkpoint_player_made_in_the_learners_process_leaves_it_its_torch_threads(spec):
    """A checkpoint or search player that plays in the learner's process (a league opponent with
    ``train.workers=0``) runs its forward passes on one thread, and leaves the process's threads as
    they were, made and playing."""
    from island_fortress_env import island_fortress_v0

    env = island_fortress_v0.env(num_players=2)
    env.reset(seed=0)
    obs, *_ = env.last()
    with torch_threads(2):
        agent = make_agent(spec.replace("POLICY", str(POLICY)), seed=0)
        assert torch.get_num_threads() == 2
        action = agent.act(obs["observation"], obs["action_mask"], env.unwrapped.game_state)
        assert obs["action_mask"][action] and torch.get_num_threads() == 2


def test_bfloat16_detection_asks_torch_for_avx512_bf16_or_amx():
    from types import SimpleNamespace

    from island_fortress_env.training.ppo import bfloat16_is_native

    def cpu(avx512_bf16: bool | None, amx: bool | None) -> SimpleNamespace:
        queries = {}
        if avx512_bf16 is not None:
            queries["_is_avx512_bf16_supported"] = lambda: avx512_bf16
        if amx is not None:
            queries["_is_amx_tile_supported"] = lambda: amx
        return SimpleNamespace(**queries)

    assert bfloat16_is_native(cpu(True, False)) and bfloat16_is_native(cpu(False, True))
    assert bfloat16_is_native(cpu(None, True))
    assert not bfloat16_is_native(cpu(False, False))
    assert not bfloat16_is_native(cpu(None, None))  # a torch without the queries: emulated


def test_bfloat16_detection_agrees_with_the_cpu_flags():
    """On Linux the CPU's flags (``/proc/cpuinfo``) say whether it has AVX512-BF16 or AMX."""
    from island_fortress_env.training.ppo import bfloat16_is_native, update_dtype

    cpuinfo = Path("/proc/cpuinfo")
    if not cpuinfo.is_file():
        pytest.skip("no /proc/cpuinfo on this system")
    flags = {f for line in cpuinfo.read_text().splitlines() if line.startswith("flags") for f in line.split()}
    native = bool(flags & {"avx512_bf16", "amx_tile"})
    assert bfloat16_is_native() is native
    cfg = load_config(None, ["train.update_dtype=auto"], schema=NativeConfig)
    assert update_dtype(cfg) == ("bfloat16" if native else "float32")


def test_update_dtype_auto_takes_bfloat16_only_where_the_cpu_computes_it(monkeypatch):
    from island_fortress_env.training import ppo

    cfg = load_config(ROOT / "configs" / "default.yaml", ["train.update_dtype=auto"], schema=NativeConfig)
    monkeypatch.setattr(ppo, "bfloat16_is_native", lambda: True)
    assert ppo.update_dtype(cfg) == "bfloat16"
    monkeypatch.setattr(ppo, "bfloat16_is_native", lambda: False)
    assert ppo.update_dtype(cfg) == "float32"
    cfg.train.update_dtype = "bfloat16"
    assert ppo.update_dtype(cfg) == "bfloat16"


def test_a_value_torso_of_its_own_keeps_each_loss_in_its_own_torso(tmp_path):
    """``policy.value_cnn_channels`` / ``value_hidden``: the value loss trains only the value's
    torso and head, the policy loss only the policy's; the checkpoint loads the same network."""
    from island_fortress_env.agents.checkpoint import load_policy, save_policy

    network = {"cnn_channels": 4, "hidden": 16, "value_cnn_channels": 2, "value_hidden": 8}
    net = ActorCritic(**network)
    obs = torch.rand(5, OBS_SIZE)
    logits, value = net(obs)
    assert logits.shape == (5, NUM_ACTIONS) and value.shape == (5,)
    value.sum().backward()
    grads = {name: p.grad for name, p in net.named_parameters()}
    assert all(g is None for name, g in grads.items() if name.startswith(("torso.", "policy_head.")))
    assert all(g is not None for name, g in grads.items() if name.startswith(("value_torso.", "value_head.")))
    net.zero_grad(set_to_none=True)
    net(obs)[0].logsumexp(-1).sum().backward()
    assert all(p.grad is None for name, p in net.named_parameters() if name.startswith("value_"))
    path = save_policy(tmp_path / "v.zip", net, network, {"num_timesteps": 1})
    loaded, meta = load_policy(path)
    assert meta["network"] == network
    torch.testing.assert_close(loaded(obs)[1], net(obs)[1])
    # Starting a run without a value torso from it is refused, not a load_state_dict traceback.
    from island_fortress_env.agents.checkpoint import CheckpointError
    from island_fortress_env.training.weights import initial_weights

    # every argument network_kwargs gives, the same sizes, but no value torso
    shared = {"obs_size": OBS_SIZE, "num_actions": NUM_ACTIONS, **network, "head_activation": "relu"}
    del shared["value_cnn_channels"], shared["value_hidden"]
    with pytest.raises(CheckpointError, match=r"does not match.*value_hidden 8 there, unset in the config"):
        initial_weights(str(path), shared)
    with pytest.raises(ValueError, match=r"value_cnn_channels .* and value_hidden .* go together"):
        ActorCritic(cnn_channels=4, hidden=16, value_hidden=8)
    with pytest.raises(TrainConfigError, match=r"policy\.value_cnn_channels"):
        load_config(None, ["policy.value_hidden=64"], schema=NativeConfig)
    cfg = load_config(None, ["policy.value_cnn_channels=2", "policy.value_hidden=8"], schema=NativeConfig)
    assert {"value_cnn_channels": 2, "value_hidden": 8}.items() <= network_kwargs(cfg).items()
    assert "value_hidden" not in network_kwargs(load_config(None, schema=NativeConfig))


def test_a_bfloat16_update_adds_the_shared_torsos_two_gradients_in_float32():
    """Both heads read one float32 copy of the torso's features, so under autocast their gradients
    are summed in float32 and cast to bfloat16 once (two casts would sum them in bfloat16: another
    run of the same seed)."""
    torch.manual_seed(0)
    net = ActorCritic(cnn_channels=8, hidden=32)
    obs = torch.rand(64, OBS_SIZE)

    def torso_grads(forward) -> list[torch.Tensor]:
        net.zero_grad(set_to_none=True)
        with torch.autocast("cpu", dtype=torch.bfloat16):
            logits, value = forward()
        (logits.logsumexp(-1).sum() + value.square().sum()).backward()
        return [p.grad.clone() for p in net.torso.parameters()]

    def one_copy() -> tuple[torch.Tensor, torch.Tensor]:
        features = net.torso(obs)
        with torch.autocast("cpu", enabled=False):
            features = features.float()
            return net.policy_head(features), net.value_head(features).squeeze(-1)

    pairs = zip(torso_grads(lambda: net(obs)), torso_grads(one_copy), strict=True)
    assert all(torch.equal(a, b) for a, b in pairs)


def test_a_snapshot_leaving_the_pool_stays_for_the_games_dealt_to_begin_next(backend):
    """A slot's next game is dealt while its current one is played: a snapshot drawn for it that
    leaves the pool before it begins still plays it."""
    cfg = tiny_config(
        Path("/nonexistent"), "c", "league.share=1.0", "league.random=0.0", "league.heuristic=0.0",
        "train.games_per_collector=4",
    )  # fmt: skip
    collector = Collector(cfg, 0, SeatTrajectories, backend=backend)
    net = ActorCritic(**network_kwargs(cfg))
    collector.set_snapshots({0: net.state_dict()}, {0: 1.0})
    for _ in range(200):  # until a game against snapshot 0 is dealt to begin next
        collector.collect(net, 50)
        dealt = [slot.following for slot in collector.runner.slots if slot.following is not None]
        if any(seating.tag.snapshot == 0 for seating in dealt):
            break
    following = {slot.following.tag.snapshot for slot in collector.runner.slots if slot.following is not None}
    assert 0 in following
    collector.set_snapshots({1: net.state_dict()}, {1: 1.0})  # 0 leaves the pool
    assert 0 in collector.snapshots
    collector.collect(net, 2000)  # the dealt games begin and are played by snapshot 0
