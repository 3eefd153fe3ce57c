"""Multi-agent masked PPO for Island Fortress: the algorithm and its loop, read top to bottom.

    island-fortress train --config configs/default.yaml [section.key=value ...] [--resume CKPT]

One shared policy (``ActorCritic``) plays every learning seat of many games at 2, 3 and 4 players
at once. In the spirit of CleanRL's ``ppo.py`` this file holds the algorithm; beside it are the
settings (``config.py``: ``NativeConfig``), the games of a rollout on worker processes
(``collect.py``), self-play and league games (``league.py``), the greedy evaluation
(``greedy_eval.py``), starting weights (``weights.py``) and the warm start (``pretrain.py``).

1. **Storage** (``trajectories.py``: ``SeatTrajectories``, ``gae_rows``, ``Rollout``): each
   learning seat of each game is its own trajectory, credited everything it receives until it
   decides again; GAE runs along it, and a trajectory cut by the rollout's end continues in the next.
2. **Update** (``ppo_update``): clipped PPO on the rollout, advantages normalised per minibatch,
   entropy bonus over the legal actions only, global gradient clipping, optional early stop on
   approximate KL. With ``train.update_dtype`` bfloat16 the torso's forward pass runs under
   autocast (the heads, hence the log-probabilities, stay float32). With ``train.device=cuda`` it
   runs on the GPU, on the learner's copy of the network (``learner_copy``). With
   ``ppo.magnet_coef`` or ``ppo.prev_kl_coef`` the KL terms of ``regularise.py`` join the loss.
3. **Loop** (``train_native``): per rollout, the learning rate is annealed, the collectors play
   ``train.rollout_decisions`` learning decisions, PPO updates on them, and the figures go to
   TensorBoard under ``runs/<run_name>`` (``losses/``, ``charts/``, ``game/``, ``eval/``). Every
   ``league.snapshot_every`` decisions the league gains a snapshot of the learner, every
   ``train.checkpoint_every`` a checkpoint (weights, metadata, optimizer state) is written to
   ``checkpoints/<run_name>/``, every ``eval.every`` the greedy policy is evaluated. A crash or
   Ctrl-C still writes ``latest.zip``, which ``--resume`` continues.
"""

from __future__ import annotations

import copy
import time
from collections import defaultdict
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np
import torch
from torch import nn

from island_fortress_env.agents.checkpoint import load_policy, load_training_state, save_policy
from island_fortress_env.agents.network import ActorCritic
from island_fortress_env.players.seeds import Stream, generator, stream_seed
from island_fortress_env.training import cpus
from island_fortress_env.training.collect import Collectors, FinishedGame
from island_fortress_env.training.config import NativeConfig, fail, run_metadata
from island_fortress_env.training.greedy_eval import (
    BEST,
    greedy_evaluation,
    previous_best_score,
    selection_score,
)
from island_fortress_env.training.league import GameKind, League, member_name
from island_fortress_env.training.pretrain import warm_start
from island_fortress_env.training.regularise import Regulariser
from island_fortress_env.training.trajectories import Rollout, SeatTrajectories
from island_fortress_env.training.weights import initial_weights, load_same_network, network_kwargs

# ============================================================== 2. the PPO update


def bfloat16_is_native(cpu: Any = torch.cpu) -> bool:
    """Whether the CPU computes bfloat16 in hardware (AVX512-BF16 or AMX), by ``cpu``'s capability
    queries (``torch.cpu``'s; a query this torch does not have counts as no)."""
    checks = ("_is_avx512_bf16_supported", "_is_amx_tile_supported")
    return any(getattr(cpu, check, lambda: False)() for check in checks)


def update_dtype(cfg: NativeConfig, device: str | None = None) -> str:
    """``train.update_dtype`` with ``auto`` resolved for ``device`` (``train.device`` by default:
    this CPU or that GPU): the dtype of the update's torso."""
    name = cfg.train.update_dtype
    if name == "auto":
        gpu = device or cfg.train.device
        if gpu != "cpu" and torch.cuda.is_available():
            with torch.cuda.device(torch.device(gpu).index or 0):
                native = torch.cuda.is_bf16_supported(including_emulation=False)
            return "bfloat16" if native else "float32"
        return "bfloat16" if bfloat16_is_native() else "float32"
    return name


def check_device(device: str) -> None:
    """``train.device``: the CPU, or a GPU that this torch can reach (a ``TrainConfigError``)."""
    if device == "cpu":
        return
    if not torch.cuda.is_available():
        fail("train.device", f"{device!r}: this torch sees no CUDA GPU here (use train.device=cpu)")
    count = torch.cuda.device_count()
    if int(device.partition(":")[2] or 0) >= count:
        fail("train.device", f"{device!r}: this machine has {count} CUDA GPU(s), cuda:0 to cuda:{count - 1}")


def learner_copy(net: ActorCritic, device: str) -> ActorCritic:
    """The network that the update trains: ``net`` itself on the CPU; on a GPU (``train.device``)
    a copy there, whose weights go back to ``net`` after every update (``net`` is what the
    collectors, the league, the checkpoints and the evaluations read)."""
    check_device(device)
    return net if device == "cpu" else copy.deepcopy(net).to(device)


def ppo_update(
    net: ActorCritic,
    optimizer: torch.optim.Optimizer,
    rollout: Rollout,
    cfg: NativeConfig,
    rng: np.random.Generator,
    regulariser: Regulariser | None = None,
) -> dict[str, float]:
    """``ppo.n_epochs`` passes over ``rollout`` in minibatches drawn by ``rng``; the mean losses.
    ``regulariser`` adds its KL terms (``training/regularise.py``) to the loss."""
    p = cfg.ppo
    net.train()
    device = next(net.parameters()).device  # the rollout goes where the network is
    obs, masks, actions = (
        torch.from_numpy(a).to(device) for a in (rollout.obs, rollout.masks, rollout.actions)
    )
    old_logprobs, advantages, returns = (
        torch.from_numpy(a).to(device) for a in (rollout.logprobs, rollout.advantages, rollout.returns)
    )
    n = len(rollout)
    bf16 = update_dtype(cfg) == "bfloat16"  # autocast: the torso in bfloat16, the heads in float32
    stats: dict[str, list[float]] = defaultdict(list)
    for _epoch in range(p.n_epochs):
        order = torch.from_numpy(rng.permutation(n)).to(device)
        for start in range(0, n - p.minibatch_size + 1, p.minibatch_size):
            idx = order[start : start + p.minibatch_size]
            mask = masks[idx]
            with torch.autocast(device.type, dtype=torch.bfloat16, enabled=bf16):
                logits, value = net(obs[idx], mask)
            logp_all = torch.log_softmax(logits, dim=-1)
            logp = logp_all.gather(1, actions[idx].unsqueeze(-1)).squeeze(-1)
            log_ratio = logp - old_logprobs[idx]
            ratio = log_ratio.exp()
            with torch.no_grad():
                approx_kl = ((ratio - 1) - log_ratio).mean()  # the k3 estimator
                stats["clip_fraction"].append(float(((ratio - 1).abs() > p.clip_coef).float().mean()))
            adv = advantages[idx]
            adv = (adv - adv.mean()) / (adv.std() + 1e-8)
            pg_loss = torch.max(-adv * ratio, -adv * ratio.clamp(1 - p.clip_coef, 1 + p.clip_coef)).mean()
            v_loss = 0.5 * ((value - returns[idx]) ** 2).mean()
            # softmax, not logp_all.exp(): exp of the masked actions' huge negative
            # log-probabilities takes a slow path, ten times the cost of the whole softmax
            probs = torch.softmax(logits, dim=-1)
            entropy = -(probs * torch.where(mask, logp_all, torch.zeros_like(logp_all))).sum(-1).mean()
            loss = pg_loss - p.ent_coef * entropy + p.vf_coef * v_loss
            if regulariser is not None:
                terms, values = regulariser.loss(obs[idx], mask, logp_all, log_ratio)
                loss = loss + terms
                for key, value in values.items():
                    stats[key].append(value)
            optimizer.zero_grad()
            loss.backward()
            nn.utils.clip_grad_norm_(net.parameters(), p.max_grad_norm)
            optimizer.step()
            stats["policy_loss"].append(pg_loss.item())
            stats["value_loss"].append(v_loss.item())
            stats["entropy"].append(entropy.item())
            stats["approx_kl"].append(float(approx_kl))
        if p.target_kl > 0 and np.mean(stats["approx_kl"][-max(1, n // p.minibatch_size) :]) > p.target_kl:
            break
    out = {k: float(np.mean(v)) for k, v in stats.items()}
    var = float(np.var(rollout.returns))
    explained = 1.0 - float(np.var(rollout.returns - rollout.values)) / var if var else float("nan")
    out["explained_variance"] = explained
    return out


# ============================================================== 3. the loop


@dataclass
class Progress:
    """How far a run has got: what its checkpoints record and ``--resume`` continues from."""

    decisions: int = 0  # learned from, over every leg of the run
    updates: int = 0
    seconds_before: float = 0.0  # wall-clock seconds of the legs before this one
    leg_start: float = field(default_factory=time.monotonic)
    loop_seconds: float = 0.0  # this leg's collecting and updating
    best_score: float = -1.0  # the best periodic evaluation's selection_score (eval.keep_best)
    last_eval: int = -1  # decisions at the last periodic evaluation

    def leg_seconds(self) -> float:
        return time.monotonic() - self.leg_start

    def elapsed(self) -> float:
        return self.seconds_before + self.leg_seconds()


@dataclass
class Run:
    """A run's learner, optimizer, progress and TensorBoard writer: what a checkpoint saves and an
    evaluation reads."""

    cfg: NativeConfig
    net: ActorCritic
    optimizer: torch.optim.Optimizer
    progress: Progress
    writer: Any  # torch.utils.tensorboard.SummaryWriter
    regulariser: Regulariser | None = None  # its magnet is saved with the optimizer state
    trainer: str = "native-ppo"  # the checkpoints' ``trainer`` (search learning's: native-search)

    @property
    def directory(self) -> Path:
        return Path(self.cfg.logging.checkpoints_dir) / self.cfg.run_name

    def save(self, name: str, **extra: Any) -> Path:
        """The weights, the optimizer state and the metadata (``extra`` added) as ``name``."""
        cfg, progress = self.cfg, self.progress
        meta = run_metadata(
            cfg,
            cfg.env.options,
            ("numpy",),
            trainer=self.trainer,
            num_timesteps=progress.decisions,  # decisions learned from
            updates=progress.updates,
            update_dtype=update_dtype(cfg),
            elapsed_seconds=round(progress.elapsed(), 3),
            training_seconds=round(progress.loop_seconds, 2),  # collecting + updating, this leg
        )
        state = {"optimizer": self.optimizer.state_dict()}
        if self.regulariser is not None:
            state.update(self.regulariser.state())
        return save_policy(
            self.directory / name, self.net, network_kwargs(cfg), {**meta, **extra}, training_state=state
        )

    def evaluate(self, net: nn.Module, games: int, stream: Stream) -> dict[str, float]:
        """The greedy evaluation of ``net`` on the deals of the run seed's ``stream``."""
        cfg, processes = self.cfg, 1 + self.cfg.train.workers
        deals = stream_seed(cfg.seed, stream)
        args = (network_kwargs(cfg), games, deals, cfg.eval.opponents, cfg.env.options)
        return greedy_evaluation(net, *args, processes)

    def periodic_evaluation(self) -> dict[str, float]:
        """The greedy evaluation of the current weights, logged under ``eval/``; with
        ``eval.keep_best`` the weights are kept as best.zip when they beat every earlier one."""
        progress = self.progress
        result = self.evaluate(self.net, self.cfg.eval.games, Stream.PERIODIC_EVALUATION)
        progress.last_eval = progress.decisions
        for key, value in result.items():
            self.writer.add_scalar(f"eval/{key}", value, progress.decisions)
            if key.startswith("win_rate_vs_heuristic"):
                self.writer.add_scalar(f"eval_time/{key}", value, int(progress.elapsed()))
        score = selection_score(result)
        if self.cfg.eval.keep_best and score > progress.best_score:
            progress.best_score = score
            selection = {"decisions": progress.decisions, "games": self.cfg.eval.games, "score": score}
            self.save(BEST, selection=selection)
        return result


@dataclass
class Milestones:
    """The decisions at which a run next adds its learner to the league, writes a checkpoint and
    runs its periodic evaluation (None: no periodic evaluation), and each done in its turn: both
    native trainers' loops call ``reached`` after every update."""

    snapshot: int
    checkpoint: int
    evaluation: int | None

    @classmethod
    def after(cls, cfg: NativeConfig, decisions: int) -> Milestones:
        every = cfg.eval.every
        return cls(
            decisions + cfg.league.snapshot_every,
            decisions + cfg.train.checkpoint_every,
            decisions + every if every else None,
        )

    def reached(self, run: Run, league: League, step: int, bar: Any) -> None:
        """Snapshot, checkpoint and evaluate as ``step`` decisions call for (``bar``: the
        progress bar the evaluation's line is written through)."""
        cfg = run.cfg
        if step >= self.snapshot and not league.fixed:
            league.add(run.net, step)
            self.snapshot += cfg.league.snapshot_every
        if step >= self.checkpoint:
            run.save(f"step_{step}.zip")
            run.save("latest.zip")
            self.checkpoint += cfg.train.checkpoint_every
        # A final evaluation (other deals, more games) covers the last weights, so they get no
        # periodic one here; with keep_best, the one after the loop lets them compete for best.zip.
        final_follows = step >= cfg.train.total_decisions and cfg.eval.final_games > 0
        due = self.evaluation is not None and step >= self.evaluation
        if due and cfg.eval.games > 0 and not final_follows:
            result = run.periodic_evaluation()
            bar.write(
                f"{step} decisions, {run.progress.elapsed() / 60:.1f} min: "
                + ", ".join(f"{k} {v:.2f}" for k, v in result.items())
            )
            assert self.evaluation is not None
            self.evaluation += cfg.eval.every


def log_games(writer: Any, finished: Sequence[FinishedGame], step: int) -> None:
    """The figures of the games finished in a rollout (their learning seats'), under ``game/``."""
    if not finished:
        return
    by_kind: dict[str, list[float]] = defaultdict(list)
    figures: list[dict[str, Any]] = []
    for game in finished:
        figures.extend(game.figures)
        if game.kind is not GameKind.SELF_PLAY:
            by_kind[f"{game.kind.value}_{game.players}p"].append(game.figures[0]["win"])
    for key, wins in sorted(by_kind.items()):
        writer.add_scalar(f"game/win_rate_vs_{key}", float(np.mean(wins)), step)
    for key in ("score", "rounds", "jade_spent", "favors_played", "blocks_built"):
        writer.add_scalar(f"game/{key}", float(np.mean([f[key] for f in figures])), step)
    for comp in figures[0]["components"]:
        writer.add_scalar(
            f"game/score_{comp}", float(np.mean([f["components"][comp] for f in figures])), step
        )
    writer.add_scalar("game/length", float(np.mean([game.length for game in finished])), step)
    writer.add_scalar("game/games", len(finished), step)


def fitted_threads(cfg: NativeConfig) -> NativeConfig:
    """``cfg`` with ``train.fit_threads`` resolved: its torch and core threads at most the CPUs
    idle now (``cpus.measure``), recorded as fixed numbers (said once, with the run's other
    progress lines, when fewer)."""
    t = cfg.train
    if not t.fit_threads:
        return cfg
    budget = cpus.measure()
    torch_threads, core_threads = min(t.torch_threads, budget.threads), min(t.core_threads, budget.threads)
    if (torch_threads, core_threads) != (t.torch_threads, t.core_threads):
        print(
            f"threads: torch {torch_threads}, core {core_threads} ({budget.idle:.1f} of "
            f"{budget.available} CPUs idle; train.torch_threads={t.torch_threads} "
            f"train.core_threads={t.core_threads} fit_threads=false to use more)"
        )
    fitted = t.model_copy(
        update={"torch_threads": torch_threads, "core_threads": core_threads, "fit_threads": False}
    )
    return cfg.model_copy(update={"train": fitted})


def train_native(
    cfg: NativeConfig,
    resume: str | None = None,
    after_rollout: Callable[[Run, Sequence[FinishedGame]], None] | None = None,
) -> Path:
    """Run the training described by ``cfg``, continuing checkpoint ``resume`` if given (its
    weights, optimizer state and counters); returns the path of the checkpoint kept.
    ``after_rollout`` is called after every update with the run and the games finished in that
    rollout (``island-fortress exploit`` logs its win rate against its target there)."""
    from torch.utils.tensorboard import SummaryWriter
    from tqdm import tqdm

    if cfg.train.algorithm != "ppo":  # island-fortress train runs search_learning.train_search
        raise ValueError(f"train_native trains train.algorithm=ppo, not {cfg.train.algorithm!r}")
    cfg = fitted_threads(cfg)
    t = cfg.train
    torch.manual_seed(stream_seed(cfg.seed, Stream.WEIGHTS))
    torch.set_num_threads(t.torch_threads)
    rng = generator(cfg.seed, Stream.MINIBATCHES, 0)  # the minibatches' order, from update 0
    net = ActorCritic(**network_kwargs(cfg))
    learner = learner_copy(net, t.device)  # net itself, or its copy on the GPU
    # fused: one kernel per step for all the parameters (several times cheaper on a CPU)
    optimizer = torch.optim.Adam(learner.parameters(), lr=cfg.ppo.learning_rate, eps=1e-5, fused=True)
    progress = Progress()
    if resume:
        loaded, meta = load_same_network(resume, network_kwargs(cfg))
        net.load_state_dict(loaded.state_dict())
        progress.decisions = int(meta.get("num_timesteps", 0))
        progress.updates = int(meta.get("updates", 0))
        progress.seconds_before = float(meta.get("elapsed_seconds", 0.0))
        state = load_training_state(resume)
        if state is not None:
            optimizer.load_state_dict(state["optimizer"])
            rng = generator(cfg.seed, Stream.MINIBATCHES, progress.updates)
    writer = SummaryWriter(str(Path(cfg.logging.runs_dir) / cfg.run_name))
    run = Run(cfg, net, optimizer, progress, writer)
    if resume and cfg.eval.keep_best:
        progress.best_score = previous_best_score(run.directory / BEST)
    progress.leg_start = time.monotonic()
    if not resume and cfg.policy.init_from:
        net.load_state_dict(initial_weights(cfg.policy.init_from, network_kwargs(cfg)))
    phases: dict[str, str] = {}  # what each phase of this leg got, for the summary
    if not resume and cfg.pretrain.games > 0:
        # The imitation may take pretrain.max_share of train.max_minutes: PPO gets the rest.
        share = 60 * t.max_minutes * cfg.pretrain.max_share
        deadline = progress.leg_start + share if t.max_minutes else None
        bf16 = update_dtype(cfg, "cpu") == "bfloat16"
        report = warm_start(net, cfg, writer, bfloat16=bf16, deadline=deadline)  # on the CPU
        writer.add_scalar("pretrain/final_accuracy", report["epochs"][-1]["accuracy"], 0)
        cut = f" (stopped at its share of train.max_minutes, {share:.0f} s)" * report["stopped_early"]
        phases["imitation"] = (
            f"{report['games']:,} games, {report['fitted']:,} of {report['samples']:,} decisions "
            f"fitted, {report['seconds']:.0f} s{cut}"
        )
    if learner is not net:  # the weights resumed, started from or imitated, to the GPU
        learner.load_state_dict(net.state_dict())
    bf16 = update_dtype(cfg) == "bfloat16"
    run.regulariser = Regulariser.for_run(cfg, learner, progress.decisions, bf16, resume)

    decisions_before = progress.decisions
    league = League.for_run(cfg, net, progress.decisions)
    collectors = Collectors(cfg, SeatTrajectories, standing=league.standing())
    milestones = Milestones.after(cfg, progress.decisions)
    total_updates = max(1, -(-t.total_decisions // t.rollout_decisions))
    bar = tqdm(
        total=t.total_decisions,
        initial=min(progress.decisions, t.total_decisions),
        unit="dec",
        dynamic_ncols=True,
        desc="training",
        disable=not cfg.logging.progress_bar,
    )
    last_line = time.monotonic()
    try:
        while progress.decisions < t.total_decisions:
            if t.max_minutes and progress.leg_seconds() >= 60 * t.max_minutes:
                at = progress.decisions
                bar.write(f"train.max_minutes={t.max_minutes} reached: stopping at {at} decisions")
                break
            if cfg.ppo.anneal_lr:  # to 0 at total_decisions (or this leg's wall-clock cap if nearer)
                done = progress.updates / total_updates
                if cfg.ppo.anneal_over == "minutes":
                    done = max(done, progress.leg_seconds() / (60 * t.max_minutes))
                for group in optimizer.param_groups:
                    group["lr"] = cfg.ppo.learning_rate * max(0.0, 1.0 - done) ** cfg.ppo.anneal_power

            # collect (with pipelined workers, the next rollout is collected during this update)
            tick = time.monotonic()
            if not collectors.outstanding:
                collectors.start(net, t.rollout_decisions, league, local=learner)
            parts, finished = collectors.finish()
            rollout = Rollout.concatenate(parts)
            if t.pipelined:
                collectors.start(net, t.rollout_decisions, league, local=learner)
            collect_s = time.monotonic() - tick

            # update
            stats = ppo_update(learner, optimizer, rollout, cfg, rng, run.regulariser)
            if learner is not net:
                net.load_state_dict(learner.state_dict())
            update_s = time.monotonic() - tick - collect_s
            progress.loop_seconds += time.monotonic() - tick
            progress.updates += 1
            progress.decisions += len(rollout)
            if run.regulariser is not None:
                run.regulariser.after_update(learner, progress.decisions)
            for game in finished:
                if game.snapshot is not None and game.ahead is not None:
                    league.record(game.snapshot, game.ahead)

            # log
            step = progress.decisions
            bar.update(min(len(rollout), t.total_decisions - bar.n))  # the bar ends full, not past it
            for key, value in stats.items():
                writer.add_scalar(f"losses/{key}", value, step)
            writer.add_scalar("charts/learning_rate", optimizer.param_groups[0]["lr"], step)
            writer.add_scalar("charts/decisions_per_second", len(rollout) / (time.monotonic() - tick), step)
            writer.add_scalar("charts/collect_seconds", collect_s, step)
            writer.add_scalar("charts/update_seconds", update_s, step)
            writer.add_scalar("charts/league_pool", len(league.pool), step)
            for i, (member, rate) in enumerate(league.member_win_rates().items()):
                writer.add_scalar(f"league/ahead_of_member_{i}_{member_name(member)}", rate, step)
            log_games(writer, finished, step)
            if after_rollout is not None:
                after_rollout(run, finished)
            bar.set_postfix_str(
                f"kl {stats['approx_kl']:.3f} ent {stats['entropy']:.2f} "
                f"ev {stats['explained_variance']:.2f}",
                refresh=False,
            )
            if not cfg.logging.progress_bar and time.monotonic() - last_line >= 60:
                last_line = time.monotonic()
                print(
                    f"{step} decisions, {progress.elapsed() / 60:.1f} min, "
                    f"{len(rollout) / (last_line - tick):.0f} decisions/s, entropy {stats['entropy']:.2f}",
                    flush=True,
                )

            milestones.reached(run, league, step, bar)  # snapshot, checkpoint, evaluate
    except BaseException:  # a crash or Ctrl-C: keep what was learned, resumable with --resume
        run.save("latest.zip")
        raise
    finally:
        bar.close()
        collectors.close()
    learned = progress.decisions - decisions_before
    phases["PPO"] = (
        f"{learned:,} decisions in {progress.loop_seconds:.0f} s "
        f"({learned / max(progress.loop_seconds, 1e-9):,.0f} decisions/s, {progress.updates} updates)"
    )

    return finish(run, phases)


def finish(run: Run, phases: dict[str, str]) -> Path:
    """How a native run ends: ``final.zip`` and ``latest.zip``, ``best.zip``'s choice
    (``eval.keep_best``), the final evaluation and the summary of ``phases``; the path of the
    checkpoint kept (both trainers, PPO's and search learning's)."""
    cfg, progress, writer = run.cfg, run.progress, run.writer
    final = run.save("final.zip")
    run.save("latest.zip")
    kept, kept_net = final, run.net
    if cfg.eval.keep_best:
        if progress.last_eval != progress.decisions:  # the last weights compete too (so best.zip exists)
            run.periodic_evaluation()
        kept = run.directory / BEST
        kept_net, meta = load_policy(kept)
        chosen = meta["selection"]
        print(
            f"\nkept {kept}: the weights after {chosen['decisions']} decisions, mean greedy win rate "
            f"{chosen['score']:.3f} against the heuristic over the table sizes in the periodic "
            f"evaluations ({chosen['games']} games per table); the last weights are in {final}"
        )
    if cfg.eval.final_games > 0:
        # Other deals than the periodic evaluations': the kept policy was not chosen on these.
        tick = time.monotonic()
        result = run.evaluate(kept_net, cfg.eval.final_games, Stream.FINAL_EVALUATION)
        took = time.monotonic() - tick
        phases["final evaluation"] = f"{cfg.eval.final_games} games per table and opponent, {took:.0f} s"
        for key, value in result.items():
            writer.add_scalar(f"final_eval/{key}", value, progress.decisions)
        games = cfg.eval.final_games
        print(f"\nfinal greedy evaluation of {kept.name} ({games} games per table, seats rotated):")
        for key, value in result.items():
            print(f"  {key:<28} {value:.3f}")
    print(f"\nthis run's phases ({progress.leg_seconds() / 60:.1f} min in all):")
    for phase, got in phases.items():
        print(f"  {phase:<17} {got}")
    writer.close()
    return kept
