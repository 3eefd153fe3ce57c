"""Expert iteration from the batched search, with Gumbel AlphaZero's targets: the native trainer's
``train.algorithm: search`` (``configs/search-learning.yaml``).

    island-fortress train --config configs/search-learning.yaml [section.key=value ...] [--resume CKPT]

From the weights the run starts from (``policy.init_from``, or a warm start: ``pretrain``), every
iteration

1. **plays** ``search_learning.games_per_iteration`` games at 2-4 players (``search_games.py``):
   every move of a learning seat is the batched Gumbel search's over the *current* network
   (``search_learning.simulations`` simulations, ``considered`` root actions by sequential
   halving; the move the halving's survivor), and each decision keeps the search's improved
   policy softmax(logits + sigma(completed Q)), the soft target that keeps mixing where the values
   tie, and the seat's return once its game has ended (PPO's value target's units);
2. **fits** the network to them (``search_update``): the masked policy's cross-entropy to the
   improved policy (over the decisions with a choice) + ``value_coef`` x 0.5 x the value's squared
   error to the return, optionally + ``prev_kl_coef`` x KL(the network before || the network), a
   trust region; ``epochs`` passes in minibatches, Adam at ``learning_rate``.

Around it the PPO trainer's machinery (``ppo.py``'s ``Run``): TensorBoard under
``runs/<run_name>`` (``losses/``, ``charts/``, ``game/``, ``eval/`` as PPO names them, and
``search/``: the target's entropy, the prior's, how far the search moved the policy, how often the
network's argmax is the search's move), the periodic greedy evaluation, ``latest.zip`` /
``final.zip`` / ``step_<n>.zip`` in the native format, ``--resume`` (of a run of this trainer) and
the league: ``league.share`` of the games seat one searching learner against the league's frozen
players. Iteration ``k`` draws only from the run seed's streams at ``k`` and the minibatches
from ``minibatches`` at ``k``: the same seed gives the same losses and weights, and a resumed
run continues as an unbroken one would.
"""

from __future__ import annotations

import time
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

import numpy as np
import torch
from torch import nn

from island_fortress_env.agents.checkpoint import CheckpointError, load_training_state
from island_fortress_env.agents.network import ActorCritic
from island_fortress_env.players.seeds import Stream, generator, stream_seed
from island_fortress_env.training.config import NativeConfig
from island_fortress_env.training.greedy_eval import BEST, previous_best_score
from island_fortress_env.training.league import League, member_name
from island_fortress_env.training.ppo import (
    Milestones,
    Progress,
    Run,
    finish,
    fitted_threads,
    learner_copy,
    log_games,
    update_dtype,
)
from island_fortress_env.training.pretrain import warm_start
from island_fortress_env.training.search_games import IterationGames, SearchDecisions, SearchSelfPlay
from island_fortress_env.training.weights import initial_weights, load_same_network, network_kwargs

TRAINER = "native-search"  # the checkpoints' ``trainer``
CHUNK = 4096  # rows a forward pass over an iteration's decisions takes at once (no gradient)


@dataclass(frozen=True)
class UpdateFigures:
    """An update's means over its minibatches (``losses/`` in TensorBoard)."""

    policy_loss: float  # cross-entropy to the improved policy, over the decisions with a choice
    value_loss: float  # 0.5 x the squared error to the returns
    entropy: float  # the network's, over the legal actions
    approx_kl: float  # exact KL(the network before the update || the network), over the legal actions
    policy_kl_to_target: float  # KL(target || network): the cross-entropy less the target's entropy
    explained_variance: float  # of the returns by the values before the update


@dataclass(frozen=True)
class SearchFigures:
    """What the search did with the network before the update (``search/`` in TensorBoard)."""

    target_entropy: float  # the improved policy's, over the decisions with a choice
    prior_entropy: float  # the network's policy's at the same decisions
    target_prior_kl: float  # KL(target || prior): how far the search moved the policy
    agreement: float  # share of those decisions where the network's argmax is the move played
    target_agreement: float  # share where the network's argmax is the improved policy's
    forced_share: float  # share of the decisions with one legal action


@dataclass(frozen=True)
class SearchLosses:
    """The loss terms of a network on a set of decisions (no gradient): ``search_losses``."""

    policy: float  # cross-entropy to the targets, over the decisions with a choice
    value: float  # 0.5 x the squared error to the returns

    @property
    def total(self) -> float:
        return self.policy + self.value


@dataclass(frozen=True)
class _Before:
    """The network's log-probabilities and values on an iteration's decisions before its update."""

    logp: torch.Tensor  # float32 (n, NUM_ACTIONS), masked
    values: torch.Tensor  # float32 (n,)


def _forward(net: nn.Module, data: SearchDecisions, device: torch.device) -> _Before:
    """One pass of ``net`` over ``data`` without gradient, ``CHUNK`` rows at a time."""
    logps, values = [], []
    with torch.no_grad():
        for start in range(0, len(data), CHUNK):
            rows = slice(start, start + CHUNK)
            obs = torch.from_numpy(data.obs[rows]).to(device)
            logits, value = net(obs, torch.from_numpy(data.masks[rows]).to(device))
            logps.append(torch.log_softmax(logits.float(), dim=-1))
            values.append(value.float())
    empty = torch.zeros((0, data.masks.shape[1]), device=device)
    return _Before(torch.cat(logps) if logps else empty, torch.cat(values) if values else empty[:, 0])


def _entropy(p: torch.Tensor, logp: torch.Tensor, mask: torch.Tensor) -> torch.Tensor:
    """Row entropies of distributions ``p`` (log ``logp``) over the legal actions."""
    return -(p * torch.where(mask, logp, torch.zeros_like(logp))).sum(-1)


def _cross_entropy(target: torch.Tensor, logp: torch.Tensor, mask: torch.Tensor) -> torch.Tensor:
    """Row cross-entropies of ``target`` to the masked log-probabilities ``logp``."""
    return -(target * torch.where(mask, logp, torch.zeros_like(logp))).sum(-1)


def _mean_over(values: torch.Tensor, where: torch.Tensor) -> torch.Tensor:
    """The mean of ``values`` over the rows ``where`` holds (0 where none does)."""
    w = where.float()
    return (values * w).sum() / w.sum().clamp(min=1.0)


def search_losses(net: nn.Module, data: SearchDecisions) -> SearchLosses:
    """``net``'s loss terms on ``data`` (what ``search_update`` lowers), without gradient."""
    device = next(net.parameters()).device
    out = _forward(net, data, device)
    mask = torch.from_numpy(data.masks).to(device)
    targets = torch.from_numpy(data.targets).to(device)
    choice = torch.from_numpy(data.choices()).to(device)
    policy = _mean_over(_cross_entropy(targets, out.logp, mask), choice)
    value = 0.5 * ((out.values - torch.from_numpy(data.returns).to(device)) ** 2).mean()
    return SearchLosses(float(policy), float(value))


def search_figures(data: SearchDecisions, before: _Before) -> SearchFigures:
    """What the search did with the network's policy (``SearchFigures``), from ``before``."""
    device = before.logp.device
    mask = torch.from_numpy(data.masks).to(device)
    targets = torch.from_numpy(data.targets).to(device)
    choice = torch.from_numpy(data.choices()).to(device)
    prior = before.logp.exp()
    target_logp = torch.log(targets.clamp(min=1e-30))
    target_entropy = _entropy(targets, target_logp, mask)
    kl = _cross_entropy(targets, before.logp, mask) - target_entropy
    argmax = before.logp.argmax(dim=-1)
    moves = torch.from_numpy(data.actions).to(device)
    return SearchFigures(
        target_entropy=float(_mean_over(target_entropy, choice)),
        prior_entropy=float(_mean_over(_entropy(prior, before.logp, mask), choice)),
        target_prior_kl=float(_mean_over(kl, choice)),
        agreement=float(_mean_over((argmax == moves).float(), choice)),
        target_agreement=float(_mean_over((argmax == targets.argmax(dim=-1)).float(), choice)),
        forced_share=float((~choice).float().mean()) if len(data) else 0.0,
    )


def search_update(
    net: nn.Module,
    optimizer: torch.optim.Optimizer,
    data: SearchDecisions,
    cfg: NativeConfig,
    rng: np.random.Generator,
) -> tuple[UpdateFigures, SearchFigures]:
    """``search_learning.epochs`` passes over ``data`` in minibatches drawn by ``rng`` (module
    doc); the update's mean figures, and the search's measured on the network before it."""
    s = cfg.search_learning
    device = next(net.parameters()).device
    net.eval()
    before = _forward(net, data, device)
    figures = search_figures(data, before)
    net.train()
    obs, masks = torch.from_numpy(data.obs).to(device), torch.from_numpy(data.masks).to(device)
    targets = torch.from_numpy(data.targets).to(device)
    returns = torch.from_numpy(data.returns).to(device)
    choice = torch.from_numpy(data.choices()).to(device)
    bf16 = update_dtype(cfg) == "bfloat16"  # the torso under autocast, the heads in float32
    stats: dict[str, list[float]] = {name: [] for name in ("policy", "value", "entropy", "kl", "to_target")}
    target_entropy = _entropy(targets, torch.log(targets.clamp(min=1e-30)), masks)
    n = len(data)
    for _epoch in range(s.epochs):
        order = torch.from_numpy(rng.permutation(n)).to(device)
        for start in range(0, n, s.minibatch_size):
            idx = order[start : start + s.minibatch_size]
            mask = masks[idx]
            with torch.autocast(device.type, dtype=torch.bfloat16, enabled=bf16):
                logits, value = net(obs[idx], mask)
            logp = torch.log_softmax(logits, dim=-1)
            cross = _cross_entropy(targets[idx], logp, mask)
            policy_loss = _mean_over(cross, choice[idx])
            value_loss = 0.5 * ((value - returns[idx]) ** 2).mean()
            old = before.logp[idx]
            kl = (old.exp() * torch.where(mask, old - logp, torch.zeros_like(logp))).sum(-1).mean()
            loss = policy_loss + s.value_coef * value_loss
            if s.prev_kl_coef:
                loss = loss + s.prev_kl_coef * kl
            optimizer.zero_grad()
            loss.backward()
            nn.utils.clip_grad_norm_(net.parameters(), s.max_grad_norm)
            optimizer.step()
            with torch.no_grad():
                stats["policy"].append(float(policy_loss))
                stats["value"].append(float(value_loss))
                stats["entropy"].append(float(_entropy(logp.exp(), logp, mask).mean()))
                stats["kl"].append(float(kl))
                stats["to_target"].append(float(_mean_over(cross - target_entropy[idx], choice[idx])))
    net.eval()
    mean = {key: float(np.mean(values)) if values else float("nan") for key, values in stats.items()}
    returns_np = data.returns.astype(np.float64)
    var = float(np.var(returns_np))
    residual = returns_np - before.values.cpu().numpy()
    explained = 1.0 - float(np.var(residual)) / var if var else float("nan")
    losses = UpdateFigures(
        policy_loss=mean["policy"],
        value_loss=mean["value"],
        entropy=mean["entropy"],
        approx_kl=mean["kl"],
        policy_kl_to_target=mean["to_target"],
        explained_variance=explained,
    )
    return losses, figures


# ============================================================== the loop


def _resume(path: str, cfg: NativeConfig, net: ActorCritic, optimizer: Any, progress: Progress) -> None:
    """Continue checkpoint ``path`` of a search-learning run: its weights, optimizer state and
    counters (a checkpoint of another trainer is a ``CheckpointError``)."""
    loaded, meta = load_same_network(path, network_kwargs(cfg))
    if meta.get("trainer") != TRAINER:
        raise CheckpointError(
            f"checkpoint {path!r} was trained by {meta.get('trainer', 'another trainer')!r}, not by search "
            "learning: --resume continues a run of the same trainer (start from its weights with "
            "policy.init_from)"
        )
    net.load_state_dict(loaded.state_dict())
    progress.decisions = int(meta.get("num_timesteps", 0))
    progress.updates = int(meta.get("updates", 0))
    progress.seconds_before = float(meta.get("elapsed_seconds", 0.0))
    state = load_training_state(path)
    if state is not None:
        optimizer.load_state_dict(state["optimizer"])


def _log(run: Run, league: League, played: IterationGames, losses: UpdateFigures, searched: SearchFigures,
         update_s: float) -> None:  # fmt: skip
    """An iteration's figures under ``losses/``, ``charts/``, ``search/``, ``league/``, ``game/``
    (``update_s``: the seconds its update took)."""
    writer, step = run.writer, run.progress.decisions
    decisions = len(played.decisions)
    for key, value in asdict(losses).items():
        writer.add_scalar(f"losses/{key}", value, step)
    for key, value in asdict(searched).items():
        writer.add_scalar(f"search/{key}", value, step)
    writer.add_scalar("search/network_rows_per_decision", played.network_rows / max(decisions, 1), step)
    writer.add_scalar("search/decisions", decisions, step)
    collect_s = played.seconds
    writer.add_scalar("charts/learning_rate", run.optimizer.param_groups[0]["lr"], step)
    writer.add_scalar("charts/decisions_per_second", decisions / max(collect_s + update_s, 1e-9), step)
    writer.add_scalar("charts/collect_seconds", collect_s, step)
    writer.add_scalar("charts/update_seconds", update_s, step)
    writer.add_scalar("charts/league_pool", len(league.pool), step)
    for i, (member, rate) in enumerate(league.member_win_rates().items()):
        writer.add_scalar(f"league/ahead_of_member_{i}_{member_name(member)}", rate, step)
    log_games(writer, played.finished, step)


def train_search(cfg: NativeConfig, resume: str | None = None) -> Path:
    """Run the search learning described by ``cfg`` (``train.algorithm: search``), continuing
    checkpoint ``resume`` if given; returns the path of the checkpoint kept (module doc)."""
    from torch.utils.tensorboard import SummaryWriter
    from tqdm import tqdm

    if cfg.train.algorithm != "search":
        raise ValueError(f"train_search trains train.algorithm=search, not {cfg.train.algorithm!r}")
    cfg = fitted_threads(cfg)
    t, s = cfg.train, cfg.search_learning
    torch.manual_seed(stream_seed(cfg.seed, Stream.WEIGHTS))
    torch.set_num_threads(t.torch_threads)
    net = ActorCritic(**network_kwargs(cfg))
    learner = learner_copy(net, t.device)  # net itself, or its copy on the GPU
    optimizer = torch.optim.Adam(learner.parameters(), lr=s.learning_rate, eps=1e-5, fused=True)
    progress = Progress()
    if resume:
        _resume(resume, cfg, net, optimizer, progress)
    writer = SummaryWriter(str(Path(cfg.logging.runs_dir) / cfg.run_name))
    run = Run(cfg, net, optimizer, progress, writer, trainer=TRAINER)
    if resume and cfg.eval.keep_best:
        progress.best_score = previous_best_score(run.directory / BEST)
    progress.leg_start = time.monotonic()
    if not resume and cfg.policy.init_from:
        net.load_state_dict(initial_weights(cfg.policy.init_from, network_kwargs(cfg)))
    phases: dict[str, str] = {}
    if not resume and cfg.pretrain.games > 0:
        bf16 = update_dtype(cfg, "cpu") == "bfloat16"
        deadline = progress.leg_start + 60 * t.max_minutes * cfg.pretrain.max_share if t.max_minutes else None
        report = warm_start(net, cfg, writer, bfloat16=bf16, deadline=deadline)
        writer.add_scalar("pretrain/final_accuracy", report["epochs"][-1]["accuracy"], 0)
        phases["imitation"] = f"{report['games']:,} games, {report['fitted']:,} decisions fitted"
    if learner is not net:
        learner.load_state_dict(net.state_dict())

    decisions_before = progress.decisions
    league = League.for_run(cfg, net, progress.decisions)
    games = SearchSelfPlay(cfg, net, league)
    milestones = Milestones.after(cfg, progress.decisions)
    bar = tqdm(total=t.total_decisions, initial=min(progress.decisions, t.total_decisions), unit="dec",
               dynamic_ncols=True, desc="search learning", disable=not cfg.logging.progress_bar)  # fmt: skip
    last_line = time.monotonic()
    try:
        while progress.decisions < t.total_decisions:
            if t.max_minutes and progress.leg_seconds() >= 60 * t.max_minutes:
                bar.write(
                    f"train.max_minutes={t.max_minutes} reached: stopping at {progress.decisions} decisions"
                )
                break
            tick = time.monotonic()
            played = games.play(progress.updates)  # iteration k = the updates made so far
            rng = generator(cfg.seed, Stream.MINIBATCHES, progress.updates)
            losses, searched = search_update(learner, optimizer, played.decisions, cfg, rng)
            if learner is not net:
                net.load_state_dict(learner.state_dict())
            update_s = time.monotonic() - tick - played.seconds
            progress.loop_seconds += time.monotonic() - tick
            progress.updates += 1
            progress.decisions += len(played.decisions)
            for game in played.finished:
                if game.snapshot is not None and game.ahead is not None:
                    league.record(game.snapshot, game.ahead)
            _log(run, league, played, losses, searched, update_s)
            step = progress.decisions
            bar.update(min(len(played.decisions), t.total_decisions - bar.n))
            bar.set_postfix_str(f"ce {losses.policy_loss:.3f} kl-target {searched.target_prior_kl:.3f} "
                                f"agree {searched.agreement:.2f}", refresh=False)  # fmt: skip
            if not cfg.logging.progress_bar and time.monotonic() - last_line >= 60:
                last_line = time.monotonic()
                rate = len(played.decisions) / (last_line - tick)
                print(f"{step} decisions, {progress.elapsed() / 60:.1f} min, {rate:.0f} decisions/s, "
                      f"cross-entropy {losses.policy_loss:.3f}, agreement {searched.agreement:.2f}",
                      flush=True)  # fmt: skip

            milestones.reached(run, league, step, bar)  # snapshot, checkpoint, evaluate
    except BaseException:  # a crash or Ctrl-C: keep what was learned, resumable with --resume
        run.save("latest.zip")
        raise
    finally:
        bar.close()
    learned = progress.decisions - decisions_before
    phases["search learning"] = (
        f"{learned:,} decisions in {progress.loop_seconds:.0f} s "
        f"({learned / max(progress.loop_seconds, 1e-9):,.0f} decisions/s, {progress.updates} iterations)"
    )
    return finish(run, phases)
