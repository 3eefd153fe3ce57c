"""Regularised self-play in the native trainer (training/regularise.py): the KL pull toward a magnet
policy and the KL step toward the acting policy, how the magnet moves, the config keys, and the
magnet's way through a checkpoint and ``--resume``."""

from __future__ import annotations

import copy
import itertools
from pathlib import Path

import numpy as np
import pytest
import torch
from native_runs import tiny_config

from island_fortress_env.agents.checkpoint import (
    CheckpointError,
    load_policy,
    load_training_state,
    save_policy,
)
from island_fortress_env.agents.network import ActorCritic
from island_fortress_env.engine.actions import NUM_ACTIONS
from island_fortress_env.env.observation import OBS_SIZE
from island_fortress_env.training.config import NativeConfig, load_config
from island_fortress_env.training.regularise import MAGNET, Regulariser, policy_kl, sample_kl
from island_fortress_env.training.weights import network_kwargs

ROOT = Path(__file__).resolve().parents[1]
SMALL = ("policy.cnn_channels=0", "policy.hidden=8")


def _config(*extra: str, base: str | None = None) -> NativeConfig:
    return load_config(ROOT / "configs" / base if base else None, [*SMALL, *extra], schema=NativeConfig)


def _net(cfg: NativeConfig, seed: int) -> ActorCritic:
    torch.manual_seed(seed)
    return ActorCritic(**network_kwargs(cfg))


def _batch(n: int = 6, seed: int = 0) -> tuple[torch.Tensor, torch.Tensor]:
    """``n`` observations and masks of 2 to 5 legal actions each."""
    gen = torch.Generator().manual_seed(seed)
    obs = torch.rand(n, OBS_SIZE, generator=gen)
    mask = torch.zeros(n, NUM_ACTIONS, dtype=torch.bool)
    for row in range(n):
        mask[row, torch.randperm(NUM_ACTIONS, generator=gen)[: 2 + row % 4]] = True
    return obs, mask


def _by_hand(p_logits: torch.Tensor, q_logits: torch.Tensor, mask: torch.Tensor) -> float:
    """The mean over the rows of sum_a p(a) log(p(a) / q(a)) over the legal actions, in numpy."""
    kls = []
    for p_row, q_row, legal in zip(p_logits.numpy(), q_logits.numpy(), mask.numpy(), strict=True):
        p = np.exp(p_row[legal].astype(np.float64) - p_row[legal].max())
        q = np.exp(q_row[legal].astype(np.float64) - q_row[legal].max())
        p, q = p / p.sum(), q / q.sum()
        kls.append(float(np.sum(p * np.log(p / q))))
    return float(np.mean(kls))


def _magnet_term(reg: Regulariser, net: ActorCritic, obs: torch.Tensor, mask: torch.Tensor):
    logits, _ = net(obs, mask)
    logp_all = torch.log_softmax(logits, dim=-1)
    return reg.loss(obs, mask, logp_all, torch.zeros(len(obs)))


# ---------------------------------------------------------------- the terms


def test_the_magnet_term_is_the_coefficient_times_the_kl_from_the_policy_to_the_magnet():
    cfg = _config("ppo.magnet_coef=0.3")
    policy, other = _net(cfg, 1), _net(cfg, 2)
    reg = Regulariser(cfg, other, decisions=0)  # the magnet: a copy of another network
    obs, mask = _batch()
    term, values = _magnet_term(reg, policy, obs, mask)
    with torch.no_grad():
        expected = _by_hand(policy(obs)[0], other(obs)[0], mask)
    assert expected > 1e-4
    assert values == pytest.approx({"magnet_kl": expected}, rel=1e-4)
    assert float(term.detach()) == pytest.approx(0.3 * expected, rel=1e-4)
    # reversed, it would be another number: the policy comes first
    with torch.no_grad():
        assert _by_hand(other(obs)[0], policy(obs)[0], mask) != pytest.approx(expected, rel=1e-3)


def test_the_magnet_term_is_zero_with_no_gradient_when_the_magnet_is_the_policy():
    cfg = _config("ppo.magnet_coef=1.0")
    policy = _net(cfg, 1)
    reg = Regulariser(cfg, policy, decisions=0)
    obs, mask = _batch()
    term, values = _magnet_term(reg, policy, obs, mask)
    assert values["magnet_kl"] == pytest.approx(0.0, abs=1e-6)
    term.backward()
    assert all(p.grad is None or float(p.grad.abs().max()) < 1e-6 for p in policy.parameters())


def test_the_magnet_terms_gradient_pulls_the_policy_to_the_magnet_and_leaves_the_magnet_alone():
    cfg = _config("ppo.magnet_coef=1.0")
    policy, other = _net(cfg, 1), _net(cfg, 2)
    reg = Regulariser(cfg, other, decisions=0)
    magnet_before = copy.deepcopy(reg.magnet.state_dict())
    obs, mask = _batch()
    optimizer = torch.optim.SGD(policy.parameters(), lr=0.5)
    kls = []
    for _ in range(20):
        term, values = _magnet_term(reg, policy, obs, mask)
        optimizer.zero_grad()
        term.backward()
        optimizer.step()
        kls.append(values["magnet_kl"])
    assert all(b < a for a, b in itertools.pairwise(kls))  # closer to the magnet every step
    assert kls[-1] < 0.5 * kls[0]
    assert all(torch.equal(v, reg.magnet.state_dict()[k]) for k, v in magnet_before.items())
    assert all(not p.requires_grad for p in reg.magnet.parameters())


def test_the_kl_leaves_the_illegal_actions_out_of_the_value_and_the_gradient():
    logits = torch.tensor([[1.0, 2.0, -3.0, 0.5]], requires_grad=True)
    other = torch.tensor([[0.0, 0.0, 7.0, -1.0]])
    mask = torch.tensor([[True, True, False, True]])
    minimum = torch.finfo(torch.float32).min
    masked, other_masked = (torch.where(mask, t, minimum) for t in (logits, other))
    kl = policy_kl(torch.log_softmax(masked, -1), torch.log_softmax(other_masked, -1), mask)
    legal = [0, 1, 3]
    assert float(kl.detach()) == pytest.approx(
        _by_hand(logits.detach()[:, legal], other[:, legal], mask[:, legal])
    )
    kl.sum().backward()
    assert torch.isfinite(logits.grad).all() and logits.grad[0, 2] == 0


def test_the_previous_policy_term_is_the_sample_estimate_of_the_kl_from_the_policy_to_the_acting_one():
    log_ratio = torch.tensor([0.1, -0.2, 0.0, 0.5])
    r = log_ratio.exp()
    cfg = _config("ppo.prev_kl_coef=0.25")
    reg = Regulariser(cfg, _net(cfg, 1), decisions=0)
    obs, mask = _batch(4)
    term, values = reg.loss(obs, mask, torch.zeros(4, NUM_ACTIONS), log_ratio)
    expected = float((r * log_ratio - (r - 1)).mean())
    assert values == pytest.approx({"prev_kl": expected})  # no magnet: no magnet_kl
    assert float(term) == pytest.approx(0.25 * expected)
    assert float(sample_kl(torch.zeros(3)).abs().max()) == 0.0  # the same policy: 0
    # Its expectation over the actions the acting policy draws is KL(policy || acting), not the reverse.
    acting, policy = (
        torch.tensor([0.6, 0.3, 0.1], dtype=torch.float64),
        torch.tensor([0.1, 0.2, 0.7]).double(),
    )
    expectation = float((acting * sample_kl(policy.log() - acting.log())).sum())
    assert expectation == pytest.approx(float((policy * (policy / acting).log()).sum()))
    assert expectation != pytest.approx(float((acting * (acting / policy).log()).sum()), abs=0.05)


# ---------------------------------------------------------------- how the magnet moves


def _nudged(net: ActorCritic, by: float) -> None:
    """An update's stand-in: every weight moves."""
    with torch.no_grad():
        for p in net.parameters():
            p.add_(by)


def _same(a: ActorCritic, b: ActorCritic) -> bool:
    return all(
        torch.equal(x, y) for x, y in zip(a.state_dict().values(), b.state_dict().values(), strict=True)
    )


@pytest.mark.parametrize("start", [0, 1100], ids=["fresh", "resumed"])
def test_a_reset_magnet_is_the_policy_right_after_each_boundary_and_stays_between(start):
    cfg = _config("ppo.magnet_coef=0.1", "ppo.magnet=reset", "ppo.magnet_every=1000")
    net = _net(cfg, 1)
    reg = Regulariser(cfg, net, decisions=start)
    assert _same(reg.magnet, net)
    seen = []
    for decisions in range(start + 300, start + 3001, 300):
        _nudged(net, 0.01)
        reg.after_update(net, decisions)
        if _same(reg.magnet, net):
            seen.append(decisions)
    # the updates that reach or cross a multiple of 1,000 decisions, and no other
    assert seen == {0: [1200, 2100, 3000], 1100: [2000, 3200, 4100]}[start]


def test_an_ema_magnet_moves_to_the_stated_average_after_every_update():
    cfg = _config("ppo.magnet_coef=0.1", "ppo.magnet=ema", "ppo.magnet_ema=0.9")
    net = _net(cfg, 1)
    reg = Regulariser(cfg, net, decisions=0)
    expected = {k: v.clone() for k, v in net.state_dict().items()}
    for step in range(3):
        _nudged(net, 0.1 * (step + 1))
        reg.after_update(net, 300 * (step + 1))
        current = net.state_dict()
        expected = {k: 0.9 * v + 0.1 * current[k] for k, v in expected.items()}
        for key, value in reg.magnet.state_dict().items():
            torch.testing.assert_close(value, expected[key])
    assert not _same(reg.magnet, net)


# ---------------------------------------------------------------- config


def test_the_defaults_are_off_and_build_no_regulariser():
    cfg = load_config(ROOT / "configs" / "default.yaml", schema=NativeConfig)
    assert (cfg.ppo.magnet_coef, cfg.ppo.prev_kl_coef) == (0.0, 0.0)
    assert Regulariser.for_run(cfg, _net(_config(), 1), 0, bfloat16=False) is None


def test_the_regularised_config_loads_with_the_regularisation_on():
    cfg = load_config(ROOT / "configs" / "regularised.yaml", schema=NativeConfig)
    default = load_config(ROOT / "configs" / "default.yaml", schema=NativeConfig)
    assert cfg.ppo.magnet_coef > 0 and cfg.ppo.prev_kl_coef > 0 and cfg.ppo.magnet == "reset"
    assert cfg.ppo.ent_coef >= 0.05 > default.ppo.ent_coef
    # default.yaml's shape: the same sections and keys, only the regularisation differs
    changed = {"run_name", "ppo"}
    assert cfg.model_dump(exclude=changed) == default.model_dump(exclude=changed)


# ---------------------------------------------------------------- runs, checkpoints, resume


def _tiny(base: Path, run_name: str, *extra: str, config: str = "regularised.yaml") -> NativeConfig:
    """``native_runs.tiny_config`` of ``configs/<config>``: no warm start, 900 decisions at a
    constant learning rate, no evaluation."""
    return tiny_config(
        base, run_name, "pretrain.games=0", "train.total_decisions=900", "ppo.anneal_lr=false",
        "eval.every=0", "eval.final_games=0", *extra, config=config,
    )  # fmt: skip


def _magnet_of(path: Path) -> dict[str, torch.Tensor]:
    return load_training_state(path)[MAGNET]


def _equal(a: dict[str, torch.Tensor], b: dict[str, torch.Tensor]) -> bool:
    return set(a) == set(b) and all(torch.equal(a[k], b[k]) for k in a)


@pytest.fixture(scope="module")
def reset_run(tmp_path_factory):
    """Three updates of 300 decisions with the magnet reset every 600: (the run's base, its checkpoints)."""
    from island_fortress_env.training.ppo import train_native

    base = tmp_path_factory.mktemp("reset")
    train_native(_tiny(base, "reg", "ppo.magnet_every=600"))
    return base, base / "ckpt" / "reg"


def test_a_regularised_run_logs_its_terms_and_checkpoints_its_magnet(reset_run):
    from island_fortress_env.training.plot_curves import read_scalars

    base, ckpt = reset_run
    scalars = read_scalars(base / "runs" / "reg")
    for key in ("losses/magnet_kl", "losses/prev_kl"):
        assert len(scalars[key]) == 3 and all(np.isfinite(v) and v >= -1e-6 for _, v in scalars[key])
    assert scalars["losses/magnet_kl"][0][1] > 0  # the policy leaves the magnet within an update
    weights = {name: load_policy(ckpt / name)[0].state_dict() for name in ("step_300.zip", "step_600.zip")}
    final = load_policy(ckpt / "final.zip")[0].state_dict()
    # reset after the update that reached 600 decisions, and kept through the one to 900
    assert not _equal(_magnet_of(ckpt / "step_300.zip"), weights["step_300.zip"])
    assert _equal(_magnet_of(ckpt / "step_600.zip"), weights["step_600.zip"])
    assert _equal(_magnet_of(ckpt / "final.zip"), weights["step_600.zip"])
    assert not _equal(_magnet_of(ckpt / "final.zip"), final)


def _first_magnet(monkeypatch) -> list[dict[str, torch.Tensor]]:
    """From now on, the magnet each PPO update of a run starts from is recorded."""
    from island_fortress_env.training import ppo

    magnets: list[dict[str, torch.Tensor]] = []
    update = ppo.ppo_update

    def recorded(net, optimizer, rollout, cfg, rng, regulariser=None):
        magnets.append(copy.deepcopy(regulariser.magnet.state_dict()))
        return update(net, optimizer, rollout, cfg, rng, regulariser)

    monkeypatch.setattr(ppo, "ppo_update", recorded)
    return magnets


def test_resume_keeps_the_magnet(reset_run, tmp_path, monkeypatch):
    from island_fortress_env.training.ppo import train_native

    _base, ckpt = reset_run
    magnets = _first_magnet(monkeypatch)
    more = _tiny(tmp_path, "more", "ppo.magnet_every=600", "train.total_decisions=1500")
    train_native(more, resume=str(ckpt / "final.zip"))
    assert len(magnets) == 2  # 900 -> 1200 -> 1500: the reset at 1200 comes after the first update
    assert _equal(magnets[0], _magnet_of(ckpt / "final.zip"))
    assert not _equal(magnets[0], load_policy(ckpt / "final.zip")[0].state_dict())


def test_resuming_a_run_without_a_magnet_starts_the_magnet_at_the_resumed_policy(tmp_path, monkeypatch):
    from island_fortress_env.training.ppo import train_native

    first = train_native(_tiny(tmp_path, "plain", "train.total_decisions=300", config="default.yaml"))
    assert set(load_training_state(first)) == {"optimizer"}
    magnets = _first_magnet(monkeypatch)
    train_native(_tiny(tmp_path, "then", "train.total_decisions=600"), resume=str(first))
    assert _equal(magnets[0], load_policy(first)[0].state_dict())


def test_an_ema_run_saves_and_resumes_its_magnet(tmp_path, monkeypatch):
    from island_fortress_env.training.ppo import train_native

    cfg = _tiny(tmp_path, "ema", "ppo.magnet=ema", "ppo.magnet_ema=0.5", "train.total_decisions=600")
    final = train_native(cfg)
    magnet, weights = _magnet_of(final), load_policy(final)[0].state_dict()
    assert not _equal(magnet, weights)
    magnets = _first_magnet(monkeypatch)
    more = _tiny(tmp_path, "ema2", "ppo.magnet=ema", "ppo.magnet_ema=0.5", "train.total_decisions=900")
    train_native(more, resume=str(final))
    assert _equal(magnets[0], magnet)


def test_a_checkpoints_magnet_of_another_network_is_one_error(tmp_path):
    cfg = _config("ppo.magnet_coef=0.1")
    net = _net(cfg, 1)
    optimizer = torch.optim.Adam(net.parameters())
    state = {"optimizer": optimizer.state_dict(), MAGNET: {"torso.weight": torch.zeros(3)}}
    path = save_policy(tmp_path / "m.zip", net, network_kwargs(cfg), {}, training_state=state)
    with pytest.raises(
        CheckpointError, match=r"^checkpoint '.*m\.zip': its magnet is not this run's network$"
    ):
        Regulariser.for_run(cfg, net, 0, bfloat16=False, resume=str(path))


def test_with_the_keys_absent_or_at_zero_a_run_gives_the_same_losses_and_weights(tmp_path):
    from island_fortress_env.training.plot_curves import read_scalars
    from island_fortress_env.training.ppo import train_native

    losses, weights = [], []
    zeros = ("ppo.magnet_coef=0", "ppo.prev_kl_coef=0", "ppo.magnet=ema", "ppo.magnet_every=1")
    for run, extra in (("absent", ()), ("zero", zeros)):
        cfg = _tiny(tmp_path / run, "same", "train.total_decisions=600", *extra, config="default.yaml")
        final = train_native(cfg)
        scalars = read_scalars(tmp_path / run / "runs" / "same")
        assert not {"losses/magnet_kl", "losses/prev_kl"} & set(scalars)
        assert set(load_training_state(final)) == {"optimizer"}
        losses.append([scalars[k] for k in ("losses/policy_loss", "losses/value_loss", "losses/entropy")])
        weights.append(load_policy(final)[0].state_dict())
    assert losses[0] == losses[1]
    assert _equal(weights[0], weights[1])


@pytest.mark.skipif(not torch.cuda.is_available(), reason="no CUDA GPU")
def test_on_a_gpu_the_magnet_lives_beside_the_learner_and_is_saved_on_the_cpu(tmp_path, monkeypatch):
    from island_fortress_env.training.ppo import train_native

    magnets = _first_magnet(monkeypatch)
    cfg = _tiny(tmp_path, "gpu", "train.device=cuda", "ppo.magnet_every=300", "train.total_decisions=600")
    final = train_native(cfg)
    assert all(v.is_cuda for v in magnets[0].values())
    saved = _magnet_of(final)
    assert all(v.device.type == "cpu" for v in saved.values())
    assert _equal(saved, load_policy(final)[0].state_dict())  # reset after the last update, at 600
