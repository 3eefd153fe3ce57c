"""Training configuration of the three trainers: YAML files in ``configs/``, read by one loader
(``load_config``), validated on load, overridable by ``section.key=value`` arguments.

    schema        trainer                                           configs/
    NativeConfig  native multi-agent PPO (training/ppo.py)          default.yaml, policy-2-4p.yaml
    TrainConfig   SB3 MaskablePPO (training/train.py)               sb3.yaml, sb3-long.yaml
    RLlibConfig   multi-agent PPO on Ray RLlib (rllib_backend.py)   rllib.yaml

A schema is a set of dataclasses, so a typo or a wrong type is one clear error that names the key
and the file, not a crash halfway through a run. What the trainers have in common is written once:
the ``reward``, ``pretrain``, ``eval`` and ``logging`` sections, and the checks of the run name,
the seed, the discount, the evaluation opponents, the network sizes and the rules options.
"""

from __future__ import annotations

import contextlib
import dataclasses
import datetime as dt
import importlib
import re
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field, fields
from pathlib import Path
from typing import Any, ClassVar, NoReturn

import yaml

from island_fortress_env.players import KINDS, AgentKind, AgentSpecError, check_agent_spec, parse_agent_spec
from island_fortress_env.players.mixture import is_mixture, read_mixture
from island_fortress_env.vector import MAX_THREADS as MAX_CORE_THREADS


class TrainConfigError(ValueError):
    """A training config that cannot be used."""


def fail(key: str, why: str) -> NoReturn:
    raise TrainConfigError(f"{key}: {why}")


# ============================================================== checks every trainer shares


def check_run(run_name: str, seed: int) -> None:
    """``run_name`` names the run's directories; ``seed`` seeds every generator of the run."""
    if not run_name or "/" in run_name:
        fail("run_name", "must be a non-empty name without '/'")
    if seed < 0:
        fail("seed", "must be >= 0")


def check_discount(gamma: float, gae_lambda: float, lambda_key: str) -> None:
    """PPO's discount and GAE's lambda (``lambda_key``: its name in the trainer's ``ppo`` section)."""
    if not 0 < gamma <= 1 or not 0 <= gae_lambda <= 1:
        fail("ppo.gamma", f"gamma must be in (0, 1] and {lambda_key} in [0, 1]")


def check_eval_opponents(opponents: Sequence[str]) -> None:
    bad = [o for o in opponents if o not in (AgentKind.RANDOM.value, AgentKind.HEURISTIC.value)]
    if bad:
        fail("eval.opponents", f"unknown opponent(s) {bad}; use random and/or heuristic")


def check_network(cnn_channels: int, hidden: int) -> None:
    """The sizes of ``network.ActorCritic``'s torso (``policy.cnn_channels``, ``policy.hidden``)."""
    if cnn_channels < 0 or hidden < 1:
        fail("policy", "cnn_channels must be >= 0 (0: a dense torso) and hidden >= 1")


def check_table_weights(key: str, weights: Mapping[Any, Any]) -> None:
    """Weights of the table sizes (``tables``, ``pretrain.tables``): numbers >= 0, not all zero."""
    values = list(weights.values())
    if any(not isinstance(w, int | float) or isinstance(w, bool) or w < 0 for w in values):
        fail(key, f"weights must be numbers >= 0, got {dict(weights)}")
    if sum(values) <= 0:
        fail(key, f"weights must not all be zero, got {dict(weights)}")


def check_rules(key: str, table_sizes: Iterable[int], options: Mapping[str, Any]) -> None:
    """The rules options at every table size played, validated by the rules engine itself."""
    from island_fortress_env.engine import GameConfig
    from island_fortress_env.engine.config import ConfigError

    for n in table_sizes:
        try:
            GameConfig.from_dict({"num_players": n, **options})
        except ConfigError as exc:
            fail(key, str(exc))


# ============================================================== sections every trainer shares


@dataclass
class RewardSection:
    """The reward of the native and SB3 trainers (``training/shaping.py``)."""

    win: float = 1.0  # zero-sum win/loss at the end (sole winner +1, losers -1/(n-1))
    vp: float = 1.0  # score gained / 50, every step (dense shaping)
    vp_relative: bool = False  # true: own gain minus the other seats' mean gain (zero-sum)


@dataclass
class PretrainSection:
    """Behaviour-cloning warm start from a teacher's games (0 games: none; ``training/pretrain.py``):
    the heuristic by default, or any agent spec, such as a search player over the policy the run
    starts from (expert iteration)."""

    games: int = 0
    teacher: str = "heuristic"
    epochs: int = 4
    batch_size: int = 256
    learning_rate: float = 1.0e-3
    tables: dict = field(default_factory=dict)  # {two: w, three: w, four: w}; empty: the run's
    max_share: float = 1.0  # of train.max_minutes (native trainer): the fit stops there, PPO gets the rest

    def check(self) -> None:
        if self.games < 0 or self.epochs < 1 or self.batch_size < 1 or self.learning_rate <= 0:
            fail("pretrain", "games must be >= 0, epochs and batch_size >= 1, learning_rate > 0")
        if not 0 < self.max_share <= 1:
            fail("pretrain.max_share", f"must be in (0, 1], not {self.max_share}")
        unknown = sorted(set(self.tables) - set(TABLE_NAMES.values()))
        if unknown:
            fail("pretrain.tables", f"unknown table size(s) {unknown}; use {', '.join(TABLE_NAMES.values())}")
        if self.tables:  # empty: the run's own weights, checked with them
            check_table_weights("pretrain.tables", self.tables)
        try:
            check_agent_spec(self.teacher)
        except AgentSpecError as exc:
            fail("pretrain.teacher", str(exc))

    def table_weights(self, run_tables: TablesSection) -> dict[int, float]:
        """How the imitated games split between the table sizes: ``tables`` where given (a size
        left out gets none), else the run's own table weights."""
        if not self.tables:
            return run_tables.weights()
        return {n: float(self.tables.get(name, 0.0)) for n, name in TABLE_NAMES.items()}


@dataclass
class PolicySection:
    """The network of the SB3 and RLlib trainers: ``network.ActorCritic``'s sizes."""

    cnn_channels: int = 32
    hidden: int = 128

    def check(self) -> None:
        check_network(self.cnn_channels, self.hidden)


@dataclass
class EvalSection:
    """The evaluation of the SB3 and RLlib trainers' final policy (``evaluate_checkpoint``)."""

    games: int = 60  # per opponent kind, at the end of training
    opponents: list = field(default_factory=lambda: ["random", "heuristic"])

    def check(self) -> None:
        check_eval_opponents(self.opponents)
        if self.games < 0:
            fail("eval.games", "must be >= 0")


@dataclass
class LoggingSection:
    runs_dir: str = "runs"  # TensorBoard: <runs_dir>/<run_name>
    checkpoints_dir: str = "checkpoints"  # checkpoints: <checkpoints_dir>/<run_name>/
    progress_bar: bool = True


class RunConfig:
    """What every schema has: ``to_dict`` (a checkpoint's record of its config) and ``validate``,
    which ``load_config`` runs. ``RENAMED`` maps a refused dotted key to the key to write instead."""

    RENAMED: ClassVar[dict[str, str]] = {}

    def to_dict(self) -> dict[str, Any]:
        return dataclasses.asdict(self)  # type: ignore[call-overload]  # every schema is a dataclass

    def validate(self) -> None:
        raise NotImplementedError


# ============================================================== the native trainer


TABLE_NAMES = {2: "two", 3: "three", 4: "four"}  # the native trainer's table sizes: their config keys
TABLE_SIZES = tuple(TABLE_NAMES)  # the table sizes the native trainer plays, in TablesSection's order


@dataclass
class RulesSection:
    options: dict = field(default_factory=dict)
    """Rules options / variants, as for ``island_fortress_v0.env()``, at every table size."""


@dataclass
class TablesSection:
    """Sampling weights of the table size of every new game (one policy for every table)."""

    two: float = 1.0
    three: float = 1.0
    four: float = 1.0

    def weights(self) -> dict[int, float]:
        return {n: getattr(self, name) for n, name in TABLE_NAMES.items()}


@dataclass
class LeagueSection:
    """Frozen opponents (``training/league.py``). A ``share`` of new games seats one learner
    against frozen players of one kind drawn by the weights below; every seat of the other games
    learns (self-play)."""

    share: float = 0.5
    """The share of new games that are league games."""
    snapshot: float = 0.4
    """Weight of snapshot opponents: frozen copies of the learner."""
    heuristic: float = 0.4
    """Weight of heuristic opponents."""
    random: float = 0.2
    """Weight of random opponents."""
    snapshot_every: int = 100_000
    """Decisions learned from between snapshots of the learner joining the pool."""
    pool_size: int = 8
    """The newest snapshots kept."""
    priority_power: float = 2.0
    """A snapshot is drawn with weight ``(1 - p) ** priority_power + floor``, where ``p`` is the
    learner's smoothed rate of finishing ahead of its seats (prioritised fictitious self-play):
    snapshots that still beat the learner come back more often."""
    floor: float = 0.05
    """See ``priority_power``."""
    opponent: str = ""
    """An agent spec (a checkpoint, ``heuristic``, ``random`` or a search player such as
    ``search:64``; empty: none): every league game seats the learner against this one fixed player,
    and the kind weights above are not used. A checkpoint plays as the league's only snapshot, its
    weights fixed for the whole run (its network must be the learner's); a search player decides in
    the collectors, at its own pace (tens of milliseconds a decision); a mixture (``mixture:FILE``)
    draws one of its members for each league game by its weights (its checkpoints as snapshots; no
    search player in it). No snapshot of the learner joins (``island-fortress exploit``)."""
    members: list = field(default_factory=list)
    """Checkpoints of the learner's network that join the snapshot pool at the start and never leave
    it (the newest ``pool_size`` of the learner's own snapshots come and go beside them): the
    population of a PSRO-style run, such as earlier policies and best responses to them
    (``island-fortress exploit``), drawn like every snapshot by how often they still beat the
    learner."""


def check_league_members(league: LeagueSection) -> None:
    """``league.members``: a list of checkpoint paths, in a league that plays snapshots."""
    members = league.members
    if not isinstance(members, list) or not all(isinstance(m, str) and m for m in members):
        fail("league.members", f"must be a list of checkpoint paths, got {members!r}")
    if not members:
        return
    if league.opponent:
        fail("league.members", "cannot be combined with league.opponent (a league of one player)")
    if league.share <= 0 or league.snapshot <= 0:
        fail("league.members", "needs league.share > 0 and league.snapshot > 0 (they play as snapshots)")
    missing = [m for m in members if not Path(m).is_file()]
    if missing:
        fail("league.members", f"no such checkpoint file(s): {missing}")


def check_league_opponent(league: LeagueSection) -> None:
    """``league.opponent``: an agent spec that a league seat can be played by."""
    spec = league.opponent
    if league.share <= 0:
        fail("league.opponent", "needs league.share > 0 (the share of games played against it)")
    try:
        check_agent_spec(spec)
    except AgentSpecError as exc:
        fail("league.opponent", str(exc))
    if is_mixture(spec):
        searches = [m.spec for m in read_mixture(spec) if not KINDS[parse_agent_spec(m.spec).kind].league]
        if searches:
            fail("league.opponent", f"a mixture in the league cannot hold a search player: {searches}")


@dataclass
class NativeTrainSection:
    total_decisions: int = 2_000_000
    """Decisions learned from (every learning seat's) over the whole run."""
    rollout_decisions: int = 8192
    """Decisions learned from per PPO update (all collectors together)."""
    games_per_collector: int = 32
    """Games each collector plays at once."""
    core_threads: int = 1
    """Threads stepping each collector's batch of C++ core games (1..256): with one process
    (``workers: 0``) as many as the cores, which take turns stepping the games and running the
    network."""
    workers: int = 1
    """Worker processes collecting (0: the main process collects alone)."""
    pipelined: bool = True
    """Workers collect the next rollout during the update (needs workers >= 1)."""
    torch_threads: int = 1
    """Threads of the main process (the update)."""
    update_dtype: str = "float32"
    """The update's torso in ``float32`` or ``bfloat16`` (autocast; the heads stay float32), or
    ``auto``: bfloat16 where the CPU computes it natively (AVX512-BF16 or AMX), which makes the
    update 1.6x faster; elsewhere bfloat16 is emulated and slower than float32. On a GPU, ``auto``
    is bfloat16 where the GPU supports it."""
    device: str = "cpu"
    """Where the update runs: ``cpu``, or ``cuda`` (``cuda:N``) for a GPU. The learner's copy of
    the network and the optimizer live there; the collectors, the league's snapshots, the
    checkpoints and the evaluations use the CPU copy, refreshed after every update. Only the CPU
    update is bit-reproducible."""
    checkpoint_every: int = 200_000
    """Decisions learned from between ``step_<n>.zip`` checkpoints."""
    max_minutes: float = 0.0
    """Wall-clock cap of this leg of the run (0: none); the run ends cleanly when it is reached."""


@dataclass
class NativePolicySection:
    cnn_channels: int = 0
    """Channels of the torso's convolutions; 0: a dense torso, no convolution (``network.Torso``)."""
    hidden: int = 128
    """Width of the torso's and the heads' hidden layers."""
    head_activation: str = "relu"
    """``relu``, or ``tanh`` (SB3's heads: needed to start from an SB3 policy)."""
    value_cnn_channels: int = 0
    """With ``value_hidden``, both > 0: the value head reads a torso of its own, of these sizes;
    both 0: it reads the policy's torso."""
    value_hidden: int = 0
    """See ``value_cnn_channels``."""
    init_from: str = ""
    """Start from this checkpoint's weights (native, or SB3 converted exactly)."""


@dataclass
class NativePPOSection:
    learning_rate: float = 2.5e-4
    """Adam's learning rate (at the start, when annealed)."""
    anneal_lr: bool = True
    """Anneal the learning rate to 0, as ``learning_rate * (1 - done) ** anneal_power``."""
    anneal_over: str = "decisions"
    """``decisions``: ``done`` is the share of ``train.total_decisions`` learned (the same seed
    gives the same run wherever the total is reached within ``train.max_minutes``); ``minutes``:
    the larger of that and the share of ``train.max_minutes`` spent (a capped leg ends annealed)."""
    anneal_power: float = 1.0
    """1: linear."""
    minibatch_size: int = 1024
    """Decisions per gradient step."""
    n_epochs: int = 3
    """Passes over each rollout."""
    gamma: float = 0.997
    """Discount per decision of the seat."""
    gae_lambda: float = 0.95
    """GAE's lambda."""
    clip_coef: float = 0.2
    """PPO's clipping of the probability ratio."""
    ent_coef: float = 0.005
    """Weight of the entropy bonus (over the legal actions)."""
    vf_coef: float = 0.5
    """Weight of the value loss."""
    max_grad_norm: float = 0.5
    """Global gradient-norm clip."""
    target_kl: float = 0.0
    """Stop an update's epochs early past this approximate KL (0: never)."""


@dataclass
class NativeEvalSection:
    every: int = 200_000
    """Decisions learned from between greedy evaluations (0: only at the end)."""
    games: int = 30
    """Games per table size and opponent kind, periodic."""
    final_games: int = 60
    """Games per table size and opponent kind, at the end (on other deals)."""
    opponents: list = field(default_factory=lambda: ["heuristic", "random"])
    """The opponent kinds played."""
    keep_best: bool = False
    """Keep the weights of the periodic evaluation with the best mean greedy win rate against the
    heuristic over the table sizes as ``best.zip``; the final evaluation then plays those."""


@dataclass
class NativeConfig(RunConfig):
    """The native multi-agent PPO trainer's run (``training/ppo.py``; ``configs/default.yaml``)."""

    run_name: str = "native"
    seed: int = 0
    env: RulesSection = field(default_factory=RulesSection)
    tables: TablesSection = field(default_factory=TablesSection)
    league: LeagueSection = field(default_factory=LeagueSection)
    reward: RewardSection = field(default_factory=RewardSection)
    pretrain: PretrainSection = field(default_factory=PretrainSection)
    train: NativeTrainSection = field(default_factory=NativeTrainSection)
    ppo: NativePPOSection = field(default_factory=NativePPOSection)
    policy: NativePolicySection = field(default_factory=NativePolicySection)
    eval: NativeEvalSection = field(default_factory=NativeEvalSection)
    logging: LoggingSection = field(default_factory=LoggingSection)

    def validate(self) -> None:
        check_run(self.run_name, self.seed)
        tables = self.tables.weights()
        check_table_weights("tables", tables)
        lg = self.league
        if not 0 <= lg.share <= 1:
            fail("league.share", "must be in [0, 1]")
        kinds = {"snapshot": lg.snapshot, "heuristic": lg.heuristic, "random": lg.random}
        if lg.opponent:
            check_league_opponent(lg)
        elif lg.share > 0 and (any(w < 0 for w in kinds.values()) or sum(kinds.values()) <= 0):
            fail("league", f"opponent weights must be >= 0 and not all zero, got {kinds}")
        check_league_members(lg)
        if lg.snapshot_every < 1 or lg.pool_size < 1:
            fail("league", "snapshot_every and pool_size must be >= 1")
        if lg.priority_power < 0 or lg.floor < 0:
            fail("league", "priority_power and floor must be >= 0")
        self.pretrain.check()
        t = self.train
        for name in ("rollout_decisions", "games_per_collector", "torch_threads", "checkpoint_every"):
            if getattr(t, name) < 1:
                fail(f"train.{name}", "must be >= 1")
        if not 1 <= t.core_threads <= MAX_CORE_THREADS:
            fail("train.core_threads", f"must be 1..{MAX_CORE_THREADS}")
        if t.total_decisions < (0 if self.pretrain.games > 0 else 1):  # 0: a run that only imitates
            fail("train.total_decisions", "must be >= 1 (or 0 with pretrain.games > 0: imitation only)")
        if t.workers < 0:
            fail("train.workers", "must be >= 0")
        if t.pipelined and t.workers < 1:
            fail("train.pipelined", "needs train.workers >= 1 (the workers collect during the update)")
        if not re.fullmatch(r"cpu|cuda(:\d{1,4})?", t.device):
            fail("train.device", f"must be 'cpu', 'cuda' or 'cuda:N', not {t.device!r}")
        if t.update_dtype not in ("auto", "float32", "bfloat16"):
            fail("train.update_dtype", f"must be 'auto', 'float32' or 'bfloat16', not {t.update_dtype!r}")
        if t.max_minutes < 0:
            fail("train.max_minutes", "must be >= 0 (0: no cap)")
        p = self.ppo
        if p.minibatch_size < 2 or p.n_epochs < 1:
            fail("ppo", "minibatch_size must be >= 2 and n_epochs >= 1")
        if p.minibatch_size > t.rollout_decisions:
            fail("ppo.minibatch_size", f"must be <= train.rollout_decisions ({t.rollout_decisions})")
        check_discount(p.gamma, p.gae_lambda, "gae_lambda")
        if p.learning_rate <= 0 or p.clip_coef <= 0 or p.target_kl < 0:
            fail("ppo", "learning_rate and clip_coef must be > 0, target_kl >= 0")
        if p.anneal_over not in ("decisions", "minutes"):
            fail("ppo.anneal_over", f"must be 'decisions' or 'minutes', not {p.anneal_over!r}")
        if p.anneal_power <= 0:
            fail("ppo.anneal_power", "must be > 0 (1: linear)")
        if p.anneal_over == "minutes" and not t.max_minutes:
            fail("ppo.anneal_over", "'minutes' needs train.max_minutes > 0")
        check_eval_opponents(self.eval.opponents)
        pol = self.policy
        check_network(pol.cnn_channels, pol.hidden)
        if pol.head_activation not in ("relu", "tanh"):
            fail("policy.head_activation", "must be 'relu' or 'tanh'")
        vc, vh = pol.value_cnn_channels, pol.value_hidden
        if vc < 0 or vh < 0 or (vc > 0) != (vh > 0):
            why = "and value_hidden: both > 0 (a value torso of its own) or both 0"
            fail("policy.value_cnn_channels", why)
        if pol.init_from and not Path(pol.init_from).is_file():
            fail("policy.init_from", f"no checkpoint file {pol.init_from!r}")
        ev = self.eval
        if ev.every < 0 or ev.games < 0 or ev.final_games < 0:
            fail("eval", "every, games and final_games must be >= 0")
        if ev.keep_best and not (ev.every and ev.games and "heuristic" in ev.opponents):
            fail("eval.keep_best", "needs periodic evaluations (eval.every, eval.games > 0) vs the heuristic")
        played = {n for n, w in tables.items() if w > 0}
        imitated = {n for n, w in self.pretrain.table_weights(self.tables).items() if w > 0}
        check_rules("env.options", sorted(played | imitated), self.env.options)


# ============================================================== the SB3 trainer


@dataclass
class EnvSection:
    num_players: int = 3
    options: dict = field(default_factory=dict)  # rules options / variants, as for env()


@dataclass
class OpponentsSection:
    """Per-episode sampling weights of the opponent kind that plays every other seat."""

    snapshot: float = 0.4  # frozen snapshots of the learner (the snapshots section's pool)
    random: float = 0.2
    heuristic: float = 0.4


@dataclass
class SnapshotsSection:
    snapshot_every: int = 20_000  # learner steps between snapshots added to the pool
    pool_size: int = 5  # most recent snapshots kept; one is drawn per snapshot episode


@dataclass
class TrainSection:
    total_timesteps: int = 200_000
    n_envs: int = 4
    vec_env: str = "subproc"  # "subproc" (one process per env) or "dummy" (in-process)
    checkpoint_every: int = 50_000
    device: str = "cpu"
    torch_threads: int = 1


@dataclass
class PPOSection:
    """Keyword arguments of sb3-contrib's ``MaskablePPO``, under SB3's own names."""

    learning_rate: float = 3.0e-4
    n_steps: int = 512
    batch_size: int = 512
    n_epochs: int = 4
    gamma: float = 0.995
    gae_lambda: float = 0.95
    clip_range: float = 0.2
    ent_coef: float = 0.01
    vf_coef: float = 0.5
    max_grad_norm: float = 0.5


@dataclass
class TrainConfig(RunConfig):
    """The SB3 trainer's run: one learning seat per game (``training/train.py``; ``configs/sb3.yaml``)."""

    RENAMED: ClassVar[dict[str, str]] = {"opponents.self": "opponents.snapshot", "selfplay": "snapshots"}

    run_name: str = "default"
    seed: int = 0
    env: EnvSection = field(default_factory=EnvSection)
    opponents: OpponentsSection = field(default_factory=OpponentsSection)
    snapshots: SnapshotsSection = field(default_factory=SnapshotsSection)
    reward: RewardSection = field(default_factory=RewardSection)
    pretrain: PretrainSection = field(default_factory=PretrainSection)
    train: TrainSection = field(default_factory=TrainSection)
    ppo: PPOSection = field(default_factory=PPOSection)
    policy: PolicySection = field(default_factory=PolicySection)
    eval: EvalSection = field(default_factory=EvalSection)
    logging: LoggingSection = field(default_factory=LoggingSection)

    def validate(self) -> None:
        check_run(self.run_name, self.seed)
        weights = dataclasses.asdict(self.opponents)
        if any(w < 0 for w in weights.values()) or sum(weights.values()) <= 0:
            fail("opponents", f"weights must be >= 0 and not all zero, got {weights}")
        for name in ("snapshot_every", "pool_size"):
            if getattr(self.snapshots, name) < 1:
                fail(f"snapshots.{name}", "must be >= 1")
        self.pretrain.check()
        if self.pretrain.tables:
            fail("pretrain.tables", "the SB3 trainer imitates games at its own table size (env.num_players)")
        t = self.train
        if t.total_timesteps < 1:
            fail("train.total_timesteps", "must be >= 1")
        if t.n_envs < 1:
            fail("train.n_envs", "must be >= 1")
        if t.vec_env not in ("subproc", "dummy"):
            fail("train.vec_env", "must be 'subproc' or 'dummy'")
        if t.checkpoint_every < 1:
            fail("train.checkpoint_every", "must be >= 1")
        p = self.ppo
        if p.n_steps < 2 or p.batch_size < 2 or p.n_epochs < 1:
            fail("ppo", "n_steps and batch_size must be >= 2, n_epochs >= 1")
        if p.batch_size > p.n_steps * t.n_envs:
            fail("ppo.batch_size", f"must be <= n_steps * n_envs ({p.n_steps * t.n_envs})")
        check_discount(p.gamma, p.gae_lambda, "gae_lambda")
        if p.learning_rate <= 0:
            fail("ppo.learning_rate", "must be > 0")
        self.policy.check()
        self.eval.check()
        check_rules("env", [self.env.num_players], self.env.options)


# ============================================================== the RLlib trainer


REWARD_MODES = ("win_loss", "score_margin", "vp_delta")  # island_fortress_v0's reward modes


@dataclass
class RLlibEnvSection:
    num_players: int = 3
    reward: str = "win_loss"  # island_fortress_v0's reward modes
    options: dict = field(default_factory=dict)  # rules options / variants, as for env()


@dataclass
class RaySection:
    address: str = ""  # "" starts a local Ray; "auto" or HOST:PORT joins a running cluster
    num_cpus: int = 2  # CPUs of the local Ray (ignored with an address)


@dataclass
class EnvRunnersSection:
    num_env_runners: int = 1  # rollout actors (each one CPU)
    num_envs_per_env_runner: int = 1
    rollout_fragment_length: int = 0  # 0: "auto" (train_batch_size split over the runners)


@dataclass
class LearnersSection:
    num_learners: int = 0  # 0: one learner in the driver process
    num_gpus_per_learner: float = 0.0


@dataclass
class RLlibTrainSection:
    total_timesteps: int = 200_000  # env steps sampled (one step = one decision of one seat)
    checkpoint_every: int = 10  # training iterations between checkpoints
    torch_threads: int = 1


@dataclass
class RLlibPPOSection:
    """Keyword arguments of RLlib's ``PPOConfig.training()``, under RLlib's own names."""

    lr: float = 3.0e-4
    train_batch_size_per_learner: int = 4000
    minibatch_size: int = 512
    num_epochs: int = 4
    gamma: float = 0.995
    lambda_: float = 0.95
    clip_param: float = 0.2
    vf_clip_param: float = 10.0
    entropy_coeff: float = 0.01
    vf_loss_coeff: float = 0.5
    grad_clip: float = 0.5


@dataclass
class RLlibConfig(RunConfig):
    """The RLlib trainer's run: every seat plays one shared policy (``training/rllib_backend.py``;
    ``configs/rllib.yaml``)."""

    run_name: str = "rllib"
    seed: int = 0
    env: RLlibEnvSection = field(default_factory=RLlibEnvSection)
    ray: RaySection = field(default_factory=RaySection)
    env_runners: EnvRunnersSection = field(default_factory=EnvRunnersSection)
    learners: LearnersSection = field(default_factory=LearnersSection)
    train: RLlibTrainSection = field(default_factory=RLlibTrainSection)
    ppo: RLlibPPOSection = field(default_factory=RLlibPPOSection)
    policy: PolicySection = field(default_factory=PolicySection)
    eval: EvalSection = field(default_factory=EvalSection)
    logging: LoggingSection = field(default_factory=LoggingSection)

    def env_config(self) -> dict[str, Any]:
        """RLlib's ``env_config``: ``island_fortress_v0.env()``'s keyword arguments."""
        return {"num_players": self.env.num_players, "reward": self.env.reward, **self.env.options}

    def validate(self) -> None:
        check_run(self.run_name, self.seed)
        if self.env.reward not in REWARD_MODES:
            fail("env.reward", f"must be one of {list(REWARD_MODES)}, not {self.env.reward!r}")
        if self.ray.num_cpus < 1:
            fail("ray.num_cpus", "must be >= 1")
        r = self.env_runners
        if r.num_env_runners < 0 or r.num_envs_per_env_runner < 1 or r.rollout_fragment_length < 0:
            fail("env_runners", "num_env_runners and rollout_fragment_length must be >= 0, "
                                "num_envs_per_env_runner >= 1")  # fmt: skip
        if not self.ray.address and r.num_env_runners + 1 > self.ray.num_cpus:
            need, have = r.num_env_runners + 1, self.ray.num_cpus
            why = f"needs {need} CPUs (one per env runner plus the learner); ray.num_cpus is {have}"
            fail("env_runners.num_env_runners", why)
        if self.learners.num_learners < 0 or self.learners.num_gpus_per_learner < 0:
            fail("learners", "num_learners and num_gpus_per_learner must be >= 0")
        t = self.train
        if t.total_timesteps < 1 or t.checkpoint_every < 1 or t.torch_threads < 1:
            fail("train", "total_timesteps, checkpoint_every and torch_threads must be >= 1")
        p = self.ppo
        if p.train_batch_size_per_learner < 2 or p.minibatch_size < 2 or p.num_epochs < 1:
            fail("ppo", "train_batch_size_per_learner and minibatch_size must be >= 2, num_epochs >= 1")
        if p.minibatch_size > p.train_batch_size_per_learner:
            fail(
                "ppo.minibatch_size",
                f"must be <= train_batch_size_per_learner ({p.train_batch_size_per_learner})",
            )
        check_discount(p.gamma, p.lambda_, "lambda_")
        if p.lr <= 0:
            fail("ppo.lr", "must be > 0")
        self.policy.check()
        self.eval.check()
        check_rules("env", [self.env.num_players], self.env.options)


# ============================================================== loading


_TYPES = {"int": int, "float": float, "bool": bool, "str": str, "dict": dict, "list": list}


def _build(cls: type, data: Mapping[str, Any], where: str) -> Any:
    if not isinstance(data, Mapping):
        raise TrainConfigError(f"{where}: must be a mapping, not {type(data).__name__}")
    known = {f.name: f for f in fields(cls)}
    unknown = sorted(set(data) - set(known))
    if unknown:
        raise TrainConfigError(f"{where}: unknown key(s) {unknown}; known: {sorted(known)}")
    values = {}
    for name, value in data.items():
        f = known[name]
        key = f"{where}.{name}" if where != "config" else name
        factory: Any = f.default_factory
        if factory is not dataclasses.MISSING and dataclasses.is_dataclass(factory()):
            values[name] = _build(factory().__class__, value or {}, key)
            continue
        expected = _TYPES[str(f.type)]
        if expected is float and isinstance(value, int) and not isinstance(value, bool):
            value = float(value)
        if expected is float and isinstance(value, str):  # YAML 1.1 reads "1e-4" as a string
            with contextlib.suppress(ValueError):
                value = float(value)
        if not isinstance(value, expected) or (expected is int and isinstance(value, bool)):
            raise TrainConfigError(f"{key}: expected {f.type}, got {value!r}")
        values[name] = value
    return cls(**values)


def _check_renamed(data: Mapping[str, Any], renamed: Mapping[str, str]) -> None:
    """A key that was replaced by another is refused with an error that names the new key."""
    for old, new in renamed.items():
        node: Any = data
        for part in old.split("."):
            node = node.get(part) if isinstance(node, Mapping) and part in node else dataclasses.MISSING
        if node is not dataclasses.MISSING:
            fail(old, f"renamed to {new}")


def _set_dotted(data: dict, dotted: str, raw_value: str) -> None:
    keys = dotted.split(".")
    node = data
    for k in keys[:-1]:
        node = node.setdefault(k, {})
        if not isinstance(node, dict):
            raise TrainConfigError(f"override {dotted!r}: {k!r} is not a section")
    node[keys[-1]] = yaml.safe_load(raw_value)


def load_config(
    path: str | Path | None = None, overrides: Sequence[str] = (), schema: type[RunConfig] = TrainConfig
) -> Any:
    """Read a YAML config (or the defaults), apply ``section.key=value`` overrides, validate.

    ``schema`` is ``TrainConfig`` (the SB3 trainer), ``NativeConfig`` (the native PPO trainer) or
    ``RLlibConfig`` (the RLlib trainer). Any problem is one ``TrainConfigError`` naming the file.
    """
    data: dict[str, Any] = {}
    where = "defaults"
    if path is not None:
        where = str(path)
        try:
            text = Path(path).read_text("utf-8")
        except OSError as exc:
            raise TrainConfigError(f"config {where!r}: cannot be read ({exc.strerror or exc})") from None
        try:
            data = yaml.safe_load(text) or {}
        except yaml.YAMLError as exc:
            raise TrainConfigError(f"config {where!r}: invalid YAML ({exc})") from None
        if not isinstance(data, dict):
            raise TrainConfigError(f"config {where!r}: must be a mapping at the top level")
    for item in overrides:
        if "=" not in item:
            raise TrainConfigError(f"override {item!r}: expected section.key=value")
        key, value = item.split("=", 1)
        _set_dotted(data, key.strip(), value)
    try:
        _check_renamed(data, schema.RENAMED)
        cfg = _build(schema, data, "config")
        cfg.validate()
    except TrainConfigError as exc:
        raise TrainConfigError(f"config {where!r}: {exc}") from None
    return cfg


def run_metadata(
    cfg: Any, env_options: Mapping[str, Any], libraries: Sequence[str], **extra: Any
) -> dict[str, Any]:
    """What every trainer's checkpoint records: the run name, the config, the env options, the
    creation time and the versions of this package, torch and the named ``libraries`` (module
    names), plus the trainer's own ``extra`` keys."""
    modules = ("island_fortress_env", "torch", *libraries)
    return {
        "run_name": cfg.run_name,
        **extra,
        "config": cfg.to_dict(),
        "env_options": dict(env_options),
        "created": dt.datetime.now(dt.timezone.utc).isoformat(timespec="seconds"),
        "versions": {name: importlib.import_module(name).__version__ for name in modules},
    }
