"""The native multi-agent PPO trainer's config (``training/ppo.py``; ``configs/default.yaml``,
``configs/policy-2-4p.yaml``): ``NativeConfig`` and its own sections."""

from __future__ import annotations

import re
from pathlib import Path
from typing import Annotated, Any, Literal

from pydantic import AfterValidator, Field, model_validator

from island_fortress_env.players import KINDS, parse_agent_spec
from island_fortress_env.players.mixture import is_mixture, read_mixture
from island_fortress_env.training.config_base import (
    TABLE_NAMES,
    Float,
    Gamma,
    Lambda,
    LoggingSection,
    Opponent,
    PolicySection,
    PretrainSection,
    RewardSection,
    RunConfig,
    RunName,
    Section,
    Weight,
    _agent_spec,
    check_rules,
    fail,
    opponent_list,
)
from island_fortress_env.vector import MAX_THREADS as MAX_CORE_THREADS


def _league_opponent(spec: str) -> str:
    """Empty, or an agent spec that a league seat can be played by (a mixture of league kinds)."""
    if not spec:
        return spec
    _agent_spec(spec)
    if is_mixture(spec):
        searches = [m.spec for m in read_mixture(spec) if not KINDS[parse_agent_spec(m.spec).kind].league]
        if searches:
            raise ValueError(f"a mixture in the league cannot hold a search player: {searches}")
    return spec


def _checkpoint_files(paths: list[str]) -> list[str]:
    missing = [p for p in paths if not Path(p).is_file()]
    if missing:
        raise ValueError(f"no such checkpoint file(s): {missing}")
    return paths


def _existing_checkpoint(path: str) -> str:
    if path and not Path(path).is_file():
        raise ValueError(f"no checkpoint file {path!r}")
    return path


def _device(device: str) -> str:
    if not re.fullmatch(r"cpu|cuda(:\d{1,4})?", device):
        raise ValueError(f"must be 'cpu', 'cuda' or 'cuda:N', not {device!r}")
    return device


class RulesSection(Section):
    options: dict[str, Any] = Field(
        default_factory=dict,
        description="Rules options / variants, as for island_fortress_v0.env(), at every table size.",
    )


class TablesSection(Section):
    """Sampling weights of the table size of every new game (one policy for every table)."""

    two: Weight = Field(1.0, description="Weight of 2-player games.")
    three: Weight = Field(1.0, description="Weight of 3-player games.")
    four: Weight = Field(1.0, description="Weight of 4-player games.")

    @model_validator(mode="after")
    def _not_all_zero(self) -> TablesSection:
        if sum(self.weights().values()) <= 0:
            fail("tables", f"weights must not all be zero, got {self.model_dump()}")
        return self

    def weights(self) -> dict[int, float]:
        return {n: getattr(self, name) for n, name in TABLE_NAMES.items()}


class LeagueSection(Section):
    """Frozen opponents (``training/league.py``). A ``share`` of new games seats one learner
    against frozen players of one kind drawn by the weights below; every seat of the other games
    learns (self-play)."""

    share: Float = Field(0.5, ge=0, le=1, description="The share of new games that are league games.")
    snapshot: Weight = Field(0.4, description="Weight of snapshot opponents: frozen copies of the learner.")
    heuristic: Weight = Field(0.4, description="Weight of heuristic opponents.")
    random: Weight = Field(0.2, description="Weight of random opponents.")
    snapshot_every: int = Field(
        100_000, ge=1, description="Decisions learned from between snapshots of the learner joining the pool."
    )
    pool_size: int = Field(8, ge=1, description="The newest snapshots kept.")
    priority_power: Float = Field(
        2.0,
        ge=0,
        description="A snapshot is drawn with weight (1 - p) ** priority_power + floor, where p is the "
        "learner's smoothed rate of finishing ahead of its seats (prioritised fictitious self-play): "
        "snapshots that still beat the learner come back more often.",
    )
    floor: Float = Field(0.05, ge=0, description="See priority_power.")
    opponent: Annotated[str, AfterValidator(_league_opponent)] = Field(
        "",
        description="An agent spec (a checkpoint, heuristic, random or a search player such as "
        "search:64; empty: none): every league game seats the learner against this one fixed player, "
        "and the kind weights above are not used. A checkpoint plays as the league's only snapshot, its "
        "weights fixed for the whole run (its network must be the learner's), in its spec's play mode "
        "(greedy, sample: or threshold:P:); a search player decides "
        "in the collectors, at its own pace; a mixture (mixture:FILE) draws one of its members for each "
        "league game by its weights (its checkpoints as snapshots; no search player in it). No snapshot "
        "of the learner joins (island-fortress exploit).",
    )
    members: Annotated[list[Annotated[str, Field(min_length=1)]], AfterValidator(_checkpoint_files)] = Field(
        default_factory=list,
        description="Checkpoints of the learner's network that join the snapshot pool at the start and "
        "never leave it (the newest pool_size of the learner's own snapshots come and go beside them): "
        "the population of a PSRO-style run, drawn like every snapshot by how often they still beat "
        "the learner.",
    )

    @model_validator(mode="after")
    def _opponents(self) -> LeagueSection:
        kinds = {"snapshot": self.snapshot, "heuristic": self.heuristic, "random": self.random}
        if self.opponent and self.share <= 0:
            fail("league.opponent", "needs league.share > 0 (the share of games played against it)")
        if not self.opponent and self.share > 0 and sum(kinds.values()) <= 0:
            fail("league", f"opponent weights must not all be zero, got {kinds}")
        if self.members:
            if self.opponent:
                fail("league.members", "cannot be combined with league.opponent (a league of one player)")
            if self.share <= 0 or self.snapshot <= 0:
                fail(
                    "league.members",
                    "needs league.share > 0 and league.snapshot > 0 (they play as snapshots)",
                )
        return self


class NativeTrainSection(Section):
    algorithm: Literal["ppo", "search"] = Field(
        "ppo",
        description="ppo: masked PPO on the games' sampled moves (training/ppo.py); search: expert "
        "iteration from the batched Gumbel search over the current network, its improved policy and "
        "the games' returns learned by a supervised update (training/search_learning.py; the "
        "search_learning section).",
    )
    total_decisions: int = Field(
        2_000_000,
        ge=0,
        description="Decisions learned from (every learning seat's) over the whole run (0: a run that "
        "only imitates, with pretrain.games > 0).",
    )
    rollout_decisions: int = Field(
        8192, ge=1, description="Decisions learned from per PPO update (all collectors)."
    )
    games_per_collector: int = Field(32, ge=1, description="Games each collector plays at once.")
    core_threads: int = Field(
        1,
        ge=1,
        le=MAX_CORE_THREADS,
        description="Threads stepping each collector's batch of C++ core games: with one process "
        "(workers: 0) as many as the cores, which take turns stepping the games and running the network.",
    )
    workers: int = Field(
        1, ge=0, description="Worker processes collecting (0: the main process collects alone)."
    )
    pipelined: bool = Field(
        True, description="Workers collect the next rollout during the update (needs workers >= 1)."
    )
    torch_threads: int = Field(1, ge=1, description="Threads of the main process (the update).")
    fit_threads: bool = Field(
        False,
        description="torch_threads and core_threads are upper bounds: the run uses at most as many "
        "threads as CPUs are idle when it starts (training/cpus.py), and its config records the "
        "numbers used (with fit_threads false, so that the checkpoint's config reruns them).",
    )
    update_dtype: Literal["auto", "float32", "bfloat16"] = Field(
        "float32",
        description="The update's torso in float32 or bfloat16 (autocast; the heads stay float32), or auto: "
        "bfloat16 where the CPU computes it natively (AVX512-BF16 or AMX), which makes the update 1.6x "
        "faster; elsewhere bfloat16 is emulated and slower than float32. On a GPU, auto is bfloat16 "
        "where the GPU supports it.",
    )
    device: Annotated[str, AfterValidator(_device)] = Field(
        "cpu",
        description="Where the update runs: cpu, or cuda (cuda:N) for a GPU. The learner's copy of the "
        "network and the optimizer live there; the collectors, the league's snapshots, the checkpoints "
        "and the evaluations use the CPU copy, refreshed after every update. Only the CPU update is "
        "bit-reproducible.",
    )
    checkpoint_every: int = Field(
        200_000, ge=1, description="Decisions learned from between step_<n>.zip checkpoints."
    )
    max_minutes: Float = Field(
        0.0,
        ge=0,
        description="Wall-clock cap of this leg of the run (0: none); the run ends cleanly there.",
    )

    @model_validator(mode="after")
    def _pipelined(self) -> NativeTrainSection:
        if self.pipelined and self.workers < 1:
            fail("train.pipelined", "needs train.workers >= 1 (the workers collect during the update)")
        return self


class NativePolicySection(PolicySection):
    cnn_channels: int = Field(0, ge=0, description="Channels of the torso's convolutions; 0: a dense torso.")
    head_activation: Literal["relu", "tanh"] = Field(
        "relu", description="relu, or tanh (SB3's heads: needed to start from an SB3 policy)."
    )
    value_cnn_channels: int = Field(
        0,
        ge=0,
        description="With value_hidden, both > 0: the value head reads a torso of its own, of these "
        "sizes; both 0: it reads the policy's torso.",
    )
    value_hidden: int = Field(0, ge=0, description="See value_cnn_channels.")
    init_from: Annotated[str, AfterValidator(_existing_checkpoint)] = Field(
        "", description="Start from this checkpoint's weights (native, or SB3 converted exactly)."
    )

    @model_validator(mode="after")
    def _value_torso(self) -> NativePolicySection:
        if (self.value_cnn_channels > 0) != (self.value_hidden > 0):
            fail(
                "policy.value_cnn_channels",
                "and value_hidden: both > 0 (a value torso of its own) or both 0",
            )
        return self


class NativePPOSection(Section):
    learning_rate: Float = Field(
        2.5e-4, gt=0, description="Adam's learning rate (at the start, when annealed)."
    )
    anneal_lr: bool = Field(
        True, description="Anneal the learning rate to 0, as learning_rate * (1 - done) ** anneal_power."
    )
    anneal_over: Literal["decisions", "minutes"] = Field(
        "decisions",
        description="decisions: done is the share of train.total_decisions learned (the same seed gives "
        "the same run wherever the total is reached within train.max_minutes); minutes: the larger of "
        "that and the share of train.max_minutes spent (a capped leg ends annealed).",
    )
    anneal_power: Float = Field(1.0, gt=0, description="The annealing's power (1: linear).")
    minibatch_size: int = Field(1024, ge=2, description="Decisions per gradient step.")
    n_epochs: int = Field(3, ge=1, description="Passes over each rollout.")
    gamma: Gamma = Field(0.997, description="Discount per decision of the seat.")
    gae_lambda: Lambda = Field(0.95, description="GAE's lambda.")
    clip_coef: Float = Field(0.2, gt=0, description="PPO's clipping of the probability ratio.")
    ent_coef: Float = Field(0.005, description="Weight of the entropy bonus (over the legal actions).")
    vf_coef: Float = Field(0.5, description="Weight of the value loss.")
    max_grad_norm: Float = Field(0.5, description="Global gradient-norm clip.")
    target_kl: Float = Field(
        0.0, ge=0, description="Stop an update's epochs early past this approximate KL (0: never)."
    )
    magnet_coef: Float = Field(
        0.0,
        ge=0,
        description="Weight of the pull KL(policy || magnet) toward a frozen magnet policy, exact over the "
        "legal actions (Magnetic Mirror Descent's magnet, R-NaD's regularisation policy; "
        "training/regularise.py). 0: off.",
    )
    magnet: Literal["reset", "ema"] = Field(
        "reset",
        description="How the magnet moves: reset (replaced by the current policy every magnet_every "
        "decisions, as R-NaD resets its regularisation policy) or ema (after every update, "
        "magnet_ema * magnet + (1 - magnet_ema) * policy, weight by weight).",
    )
    magnet_every: int = Field(
        500_000, ge=1, description="With magnet: reset, decisions learned from between magnet resets."
    )
    magnet_ema: Float = Field(
        0.97,
        gt=0,
        lt=1,
        description="With magnet: ema, the share of the magnet's weights kept at each update.",
    )
    prev_kl_coef: Float = Field(
        0.0,
        ge=0,
        description="Weight of the KL step KL(policy || the policy that collected the rollout), the sample "
        "estimate r log r - (r - 1) of the probability ratio r (Magnetic Mirror Descent's step size, as "
        "IIG-RL-Benchmark's mmd.py). 0: off.",
    )


class SearchLearningSection(Section):
    """Expert iteration from the batched search (``train.algorithm: search``;
    ``training/search_learning.py``): every iteration plays ``games_per_iteration`` games in which
    every learning seat's move is the Gumbel search's over the current network, then fits the
    network's policy to the search's improved policies and its value to the returns that followed."""

    simulations: int = Field(
        16, ge=1, le=4096, description="Simulations of the search per decision of a learning seat."
    )
    considered: int = Field(
        8,
        ge=1,
        description="Root actions drawn by Gumbel-top-k for the sequential halving (<= simulations: "
        "each gets a visit). 8 of 16 simulations: three halvings, the last two actions visited 4 times.",
    )
    gumbel_scale: Float = Field(
        1.0, ge=0, description="The root's Gumbel noise scale (1: mctx's; 0: the policy's top actions)."
    )
    games_per_iteration: int = Field(
        64,
        ge=1,
        description="Games played (to their end) with the current network before each update, "
        "train.games_per_collector of them at once.",
    )
    epochs: int = Field(2, ge=1, description="Passes over each iteration's decisions.")
    minibatch_size: int = Field(256, ge=1, description="Decisions per gradient step.")
    learning_rate: Float = Field(1.0e-4, gt=0, description="Adam's learning rate (constant).")
    value_coef: Float = Field(
        1.0, ge=0, description="Weight of the value loss, 0.5 x MSE to the returns (as the warm start's)."
    )
    prev_kl_coef: Float = Field(
        0.0,
        ge=0,
        description="Weight of the trust region KL(the network before the update || the network), "
        "exact over the legal actions. 0: off.",
    )
    max_grad_norm: Float = Field(0.5, gt=0, description="Global gradient-norm clip.")

    @model_validator(mode="after")
    def _considered(self) -> SearchLearningSection:
        if self.considered > self.simulations:
            fail(
                "search_learning.considered",
                f"must be <= search_learning.simulations ({self.simulations}), not {self.considered}: "
                "every considered action needs a visit",
            )
        return self


class NativeEvalSection(Section):
    every: int = Field(
        200_000, ge=0, description="Decisions learned from between greedy evaluations (0: only at the end)."
    )
    games: int = Field(30, ge=0, description="Games per table size and opponent kind, periodic.")
    final_games: int = Field(
        60, ge=0, description="Games per table size and opponent kind, at the end (other deals)."
    )
    opponents: list[Opponent] = Field(
        default_factory=lambda: opponent_list("heuristic", "random"), description="The opponent kinds played."
    )
    keep_best: bool = Field(
        False,
        description="Keep the weights of the periodic evaluation with the best mean greedy win rate against "
        "the heuristic over the table sizes as best.zip; the final evaluation then plays those.",
    )

    @model_validator(mode="after")
    def _keep_best(self) -> NativeEvalSection:
        if self.keep_best and not (self.every and self.games and "heuristic" in self.opponents):
            fail("eval.keep_best", "needs periodic evaluations (eval.every, eval.games > 0) vs the heuristic")
        return self


class NativeConfig(RunConfig):
    """The native multi-agent PPO trainer's run (``training/ppo.py``; ``configs/default.yaml``)."""

    run_name: RunName = Field("native", description="Names the run's directories (no '/').")
    env: RulesSection = Field(default_factory=RulesSection)
    tables: TablesSection = Field(default_factory=TablesSection)
    league: LeagueSection = Field(default_factory=LeagueSection)
    reward: RewardSection = Field(default_factory=RewardSection)
    pretrain: PretrainSection = Field(default_factory=PretrainSection)
    train: NativeTrainSection = Field(default_factory=NativeTrainSection)
    ppo: NativePPOSection = Field(default_factory=NativePPOSection)
    search_learning: SearchLearningSection = Field(default_factory=SearchLearningSection)
    policy: NativePolicySection = Field(default_factory=NativePolicySection)
    eval: NativeEvalSection = Field(default_factory=NativeEvalSection)
    logging: LoggingSection = Field(default_factory=LoggingSection)

    @model_validator(mode="after")
    def _across_sections(self) -> NativeConfig:
        t, p = self.train, self.ppo
        if t.total_decisions < 1 and self.pretrain.games < 1:
            fail("train.total_decisions", "must be >= 1 (or 0 with pretrain.games > 0: imitation only)")
        if p.minibatch_size > t.rollout_decisions:
            fail("ppo.minibatch_size", f"must be <= train.rollout_decisions ({t.rollout_decisions})")
        if p.anneal_over == "minutes" and not t.max_minutes:
            fail("ppo.anneal_over", "'minutes' needs train.max_minutes > 0")
        self._search_learning()
        played = {n for n, w in self.tables.weights().items() if w > 0}
        imitated = {n for n, w in self.pretrain.table_weights(self.tables).items() if w > 0}
        check_rules("env.options", sorted(played | imitated), self.env.options)
        return self

    def _search_learning(self) -> None:
        """``train.algorithm: search`` and what it reads (``search_learning``), or nothing of it."""
        t, p = self.train, self.ppo
        if t.algorithm != "search":
            if self.search_learning != SearchLearningSection():
                fail("search_learning", "is read only with train.algorithm: search")
            return
        if t.workers:
            fail(
                "train.workers",
                f"must be 0 with train.algorithm: search, not {t.workers} (its games are searched in "
                "the main process, every game's leaves in one network call)",
            )
        for key, value in (("magnet_coef", p.magnet_coef), ("prev_kl_coef", p.prev_kl_coef)):
            if value:
                fail(
                    f"ppo.{key}",
                    f"must be 0 with train.algorithm: search, not {value} (PPO's regularisation; the "
                    "search's update has search_learning.prev_kl_coef)",
                )
