"""Regularised self-play for the native trainer (``ppo.magnet_*``, ``ppo.prev_kl_coef``): a KL pull
toward a magnet policy and a KL step toward the policy that collected the rollout, added to
``ppo_update``'s loss.

The form follows Magnetic Mirror Descent (Sokota et al., ICLR 2023, arXiv 2206.05825) as the
IIG-RL benchmark (Rudolph et al., ICLR 2026, arXiv 2502.08938) runs it in
``algorithms/mmd/mmd.py`` of nathanlct/IIG-RL-Benchmark: PPO's clipped loss, minus an entropy
bonus, plus ``kl_coef`` times ``ratio * logratio - (ratio - 1)``. MMD's update is
``argmax <q, pi> - alpha KL(pi || magnet) - (1 / eta) KL(pi || pi_t)``: both KLs have the new policy
first (reverse KL), as R-NaD's reward transform ``log(pi / pi_reg)`` has too. So here:

* ``magnet_kl`` = KL(pi_theta || pi_magnet), exact: the sum over the legal actions of each
  minibatch state, under the magnet network's forward pass on the same observations, averaged
  over the minibatch. mmd.py's magnet is the uniform policy, whose KL is the negative entropy plus a
  constant (its ``ent_coef``, our ``ppo.ent_coef``); here the magnet is a frozen copy of the policy
  network, which ``ppo.magnet`` moves: ``reset`` copies the current policy over it after the update
  that crosses each multiple of ``ppo.magnet_every`` decisions (DeepNash / OpenSpiel's ``rnad``
  replace their regularisation policy at fixed learner-step intervals), ``ema`` moves it after
  every update to ``magnet_ema * magnet + (1 - magnet_ema) * policy`` (R-NaD's target network
  follows its parameters this way, ``target_network_avg`` = 1 - magnet_ema), with torch's
  ``get_ema_multi_avg_fn``.
* ``prev_kl`` = KL(pi_theta || pi_old), pi_old the policy that acted: the rollout stores only the
  acting policy's log-probability of the action taken (not its whole distribution), so this is
  mmd.py's sample estimate ``r log r - (r - 1)`` with ``r = pi_theta(a) / pi_old(a)``, ``a`` drawn
  from pi_old (unbiased: its expectation under pi_old is KL(pi_theta || pi_old)), averaged.

The coefficients are constant: mmd.py computes an ``ent_kl_coef_mult`` schedule but does not apply
it. Each term costs nothing when its coefficient is 0 (``Regulariser.for_run`` is then None and the
update is today's, bit for bit). The magnet's weights go into the checkpoint's training state
(``state``: names to tensors, read back by ``torch.load(weights_only=True)``) and come back on
``--resume``; a checkpoint without them (a run that had no magnet) starts the magnet at the resumed
policy.
"""

from __future__ import annotations

import copy
from pathlib import Path
from typing import Any

import torch
from torch.optim.swa_utils import get_ema_multi_avg_fn

from island_fortress_env.agents.checkpoint import CheckpointError, load_training_state
from island_fortress_env.agents.network import ActorCritic
from island_fortress_env.training.config_native import NativeConfig

MAGNET = "magnet"  # the training state's key of the magnet's weights


def policy_kl(logp: torch.Tensor, other_logp: torch.Tensor, mask: torch.Tensor) -> torch.Tensor:
    """Per row, KL(p || q) over the legal actions (``mask``), from the log-probabilities of p and q.

    The illegal actions' log-probabilities (about the float minimum, or -inf) are replaced by 0
    before anything else (their difference is 0, their exp 1, never a denormal's slow path), so
    neither the value nor the gradient sees them."""
    zeros = torch.zeros_like(logp)
    diff = torch.where(mask, logp - other_logp, zeros)
    return (torch.where(mask, logp, zeros).exp() * diff).sum(-1)


def sample_kl(log_ratio: torch.Tensor) -> torch.Tensor:
    """Per decision, mmd.py's estimate ``r log r - (r - 1)`` of KL(pi_theta || pi_old), with
    ``log_ratio`` = log pi_theta(a) - log pi_old(a) of the action a that pi_old took."""
    ratio = log_ratio.exp()
    return ratio * log_ratio - (ratio - 1)


def _frozen_copy(net: ActorCritic) -> ActorCritic:
    magnet = copy.deepcopy(net)
    magnet.requires_grad_(False)
    magnet.eval()
    return magnet


class Regulariser:
    """The magnet (a frozen copy of the learner's network, on its device) and the two KL terms."""

    def __init__(self, cfg: NativeConfig, net: ActorCritic, decisions: int, bfloat16: bool = False) -> None:
        p = cfg.ppo
        self.magnet_coef, self.prev_kl_coef = p.magnet_coef, p.prev_kl_coef
        self.kind, self.every = p.magnet, p.magnet_every
        self.magnet = _frozen_copy(net) if self.magnet_coef > 0 else None
        self._ema = get_ema_multi_avg_fn(p.magnet_ema)
        self._decisions = decisions  # learned from so far: the reset boundaries are its multiples
        self._bfloat16 = bfloat16  # the magnet's torso under autocast, as the learner's

    @classmethod
    def for_run(
        cls, cfg: NativeConfig, net: ActorCritic, decisions: int, bfloat16: bool, resume: str | None = None
    ) -> Regulariser | None:
        """The run's regulariser (None when both coefficients are 0), its magnet the weights of
        ``net`` or those saved in checkpoint ``resume``."""
        if cfg.ppo.magnet_coef <= 0 and cfg.ppo.prev_kl_coef <= 0:
            return None
        regulariser = cls(cfg, net, decisions, bfloat16)
        if resume:
            regulariser.restore(load_training_state(resume) or {}, resume)
        return regulariser

    def loss(
        self, obs: torch.Tensor, mask: torch.Tensor, logp_all: torch.Tensor, log_ratio: torch.Tensor
    ) -> tuple[torch.Tensor, dict[str, float]]:
        """The terms to add to a minibatch's loss and their values (``magnet_kl``, ``prev_kl``):
        ``logp_all`` is the learner's log-probabilities of every action on ``obs`` (``mask`` the
        legal ones), ``log_ratio`` its log-ratio to the acting policy on the actions taken."""
        total = torch.zeros((), device=logp_all.device)
        stats: dict[str, float] = {}
        if self.magnet is not None:
            with torch.no_grad(), torch.autocast(obs.device.type, torch.bfloat16, enabled=self._bfloat16):
                magnet_logits, _ = self.magnet(obs, mask)
            magnet_logp = torch.log_softmax(magnet_logits.float(), dim=-1)
            magnet_kl = policy_kl(logp_all, magnet_logp, mask).mean()
            total = total + self.magnet_coef * magnet_kl
            stats["magnet_kl"] = magnet_kl.item()
        if self.prev_kl_coef > 0:
            prev_kl = sample_kl(log_ratio).mean()
            total = total + self.prev_kl_coef * prev_kl
            stats["prev_kl"] = prev_kl.item()
        return total, stats

    def after_update(self, net: ActorCritic, decisions: int) -> None:
        """Move the magnet after an update that brought the run to ``decisions``: ``reset`` copies
        ``net`` over it when a multiple of ``magnet_every`` was crossed, ``ema`` averages it in."""
        before, self._decisions = self._decisions, decisions
        if self.magnet is None:
            return
        if self.kind == "reset":
            if decisions // self.every > before // self.every:
                self.magnet.load_state_dict(net.state_dict())
        else:
            self._ema(list(self.magnet.parameters()), list(net.parameters()), None)
            for mine, theirs in zip(self.magnet.buffers(), net.buffers(), strict=True):
                mine.copy_(theirs)

    def state(self) -> dict[str, Any]:
        """What a checkpoint's training state keeps: the magnet's weights (on the CPU), if any."""
        if self.magnet is None:
            return {}
        return {MAGNET: {k: v.detach().cpu().clone() for k, v in self.magnet.state_dict().items()}}

    def restore(self, state: dict[str, Any], path: str | Path) -> None:
        """The magnet's weights from a checkpoint's training ``state``; none there (a run that had
        no magnet), the magnet stays the policy it was built from. Weights of another network are
        a ``CheckpointError`` of one line."""
        if self.magnet is None or MAGNET not in state:
            return
        saved, own = state[MAGNET], self.magnet.state_dict()
        shapes = {k: tuple(v.shape) for k, v in own.items()}
        if not (
            isinstance(saved, dict)
            and all(isinstance(v, torch.Tensor) for v in saved.values())
            and {k: tuple(v.shape) for k, v in saved.items()} == shapes
        ):
            raise CheckpointError(f"checkpoint {str(path)!r}: its magnet is not this run's network")
        self.magnet.load_state_dict(saved)
