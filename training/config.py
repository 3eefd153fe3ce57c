"""Training configuration: YAML files in ``configs/``, validated on load, overridable by
``section.key=value`` arguments on the command line.

The schema is a set of dataclasses, so a typo or a wrong type is one clear error that names
the key and the file, not a crash halfway through a run.
"""

from __future__ import annotations

import contextlib
import dataclasses
import datetime as dt
import importlib
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field, fields
from pathlib import Path
from typing import Any

import yaml

from island_fortress_env.players import AGENT_KINDS


class TrainConfigError(ValueError):
    """A training config that cannot be used."""


@dataclass
class EnvSection:
    num_players: int = 3
    options: dict = field(default_factory=dict)  # rules options / variants, as for env()


@dataclass
class OpponentsSection:
    """Per-episode sampling weights of the opponent kind that plays every other seat."""

    self: float = 0.4  # frozen snapshots of the learner
    random: float = 0.2
    heuristic: float = 0.4


@dataclass
class SelfPlaySection:
    snapshot_every: int = 20_000  # learner steps between snapshots added to the pool
    pool_size: int = 5  # most recent snapshots kept; one is drawn per self-play episode


@dataclass
class RewardSection:
    win: float = 1.0  # zero-sum win/loss at the end (sole winner +1, losers -1/(n-1))
    vp: float = 1.0  # score gained / 50, every step (dense shaping; training/shaping.py)
    vp_relative: bool = False  # true: own gain minus the other seats' mean gain (zero-sum)


@dataclass
class PretrainSection:
    """Behaviour-cloning warm start from heuristic games (0 games: none)."""

    games: int = 0
    epochs: int = 4
    batch_size: int = 256
    learning_rate: float = 1.0e-3


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
class PolicySection:
    cnn_channels: int = 32
    hidden: int = 128


@dataclass
class EvalSection:
    games: int = 60  # per opponent kind, at the end of training
    opponents: list = field(default_factory=lambda: ["random", "heuristic"])


@dataclass
class LoggingSection:
    runs_dir: str = "runs"
    checkpoints_dir: str = "checkpoints"
    progress_bar: bool = True


@dataclass
class TrainConfig:
    run_name: str = "default"
    seed: int = 0
    env: EnvSection = field(default_factory=EnvSection)
    opponents: OpponentsSection = field(default_factory=OpponentsSection)
    selfplay: SelfPlaySection = field(default_factory=SelfPlaySection)
    reward: RewardSection = field(default_factory=RewardSection)
    pretrain: PretrainSection = field(default_factory=PretrainSection)
    train: TrainSection = field(default_factory=TrainSection)
    ppo: PPOSection = field(default_factory=PPOSection)
    policy: PolicySection = field(default_factory=PolicySection)
    eval: EvalSection = field(default_factory=EvalSection)
    logging: LoggingSection = field(default_factory=LoggingSection)

    def to_dict(self) -> dict[str, Any]:
        return dataclasses.asdict(self)


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


def _validate(cfg: TrainConfig) -> None:
    def fail(key: str, why: str) -> None:
        raise TrainConfigError(f"{key}: {why}")

    if not cfg.run_name or "/" in cfg.run_name:
        fail("run_name", "must be a non-empty name without '/'")
    weights = dataclasses.asdict(cfg.opponents)
    if any(w < 0 for w in weights.values()) or sum(weights.values()) <= 0:
        fail("opponents", f"weights must be >= 0 and not all zero, got {weights}")
    for name in ("snapshot_every", "pool_size"):
        if getattr(cfg.selfplay, name) < 1:
            fail(f"selfplay.{name}", "must be >= 1")
    pre = cfg.pretrain
    if pre.games < 0 or pre.epochs < 1 or pre.batch_size < 1 or pre.learning_rate <= 0:
        fail("pretrain", "games must be >= 0, epochs and batch_size >= 1, learning_rate > 0")
    t = cfg.train
    if t.total_timesteps < 1:
        fail("train.total_timesteps", "must be >= 1")
    if t.n_envs < 1:
        fail("train.n_envs", "must be >= 1")
    if t.vec_env not in ("subproc", "dummy"):
        fail("train.vec_env", "must be 'subproc' or 'dummy'")
    if t.checkpoint_every < 1:
        fail("train.checkpoint_every", "must be >= 1")
    p = cfg.ppo
    if p.n_steps < 2 or p.batch_size < 2 or p.n_epochs < 1:
        fail("ppo", "n_steps and batch_size must be >= 2, n_epochs >= 1")
    if p.batch_size > p.n_steps * t.n_envs:
        fail("ppo.batch_size", f"must be <= n_steps * n_envs ({p.n_steps * t.n_envs})")
    if not 0 < p.gamma <= 1 or not 0 <= p.gae_lambda <= 1:
        fail("ppo.gamma", "gamma must be in (0, 1] and gae_lambda in [0, 1]")
    if p.learning_rate <= 0:
        fail("ppo.learning_rate", "must be > 0")
    bad = [o for o in cfg.eval.opponents if o not in AGENT_KINDS]
    if bad:
        fail("eval.opponents", f"unknown opponent(s) {bad}; use random and/or heuristic")
    if cfg.eval.games < 0:
        fail("eval.games", "must be >= 0")
    # The env options are validated by the rules engine itself.
    from island_fortress_env.engine import GameConfig
    from island_fortress_env.engine.config import ConfigError

    try:
        GameConfig.from_dict({"num_players": cfg.env.num_players, **cfg.env.options})
    except ConfigError as exc:
        fail("env", str(exc))


# ------------------------------------------------------------------ the native PPO trainer


@dataclass
class RulesSection:
    options: dict = field(default_factory=dict)  # rules options / variants, as for env()


TABLE_SIZES = (2, 3, 4)  # the table sizes the native trainer plays, in TablesSection's order


@dataclass
class TablesSection:
    """Sampling weights of the table size of every new game (one policy for every table)."""

    two: float = 1.0
    three: float = 1.0
    four: float = 1.0

    def weights(self) -> dict[int, float]:
        return {2: self.two, 3: self.three, 4: self.four}


@dataclass
class LeagueSection:
    """Frozen opponents. A ``share`` of new games seats one learner against frozen players of one
    kind drawn by the weights below; every seat of the other games learns (pure self-play).
    A snapshot opponent is drawn by prioritised fictitious self-play: weight
    ``(1 - p) ** priority_power + floor`` where ``p`` is the learner's smoothed rate of finishing
    ahead of that snapshot's seats, so snapshots that still beat the learner come back more often."""

    share: float = 0.5
    snapshot: float = 0.4
    heuristic: float = 0.4
    random: float = 0.2
    snapshot_every: int = 100_000  # learner decisions between snapshots added to the pool
    pool_size: int = 8
    priority_power: float = 2.0
    floor: float = 0.05


@dataclass
class NativeTrainSection:
    total_decisions: int = 2_000_000  # decisions learned from (every learning seat's)
    rollout_decisions: int = 8192  # decisions learned from per PPO update (all collectors)
    games_per_collector: int = 32  # games each collector process plays at once
    workers: int = 1  # worker processes collecting (0: the main process collects alone)
    pipelined: bool = True  # workers collect the next rollout during the update (needs workers >= 1)
    torch_threads: int = 1  # threads of the main process (the update)
    # The update's torso in "float32" or "bfloat16" (autocast; the heads stay float32), or "auto":
    # bfloat16 where the CPU computes it natively (AVX512-BF16 or AMX), which makes the update
    # 1.6x faster; elsewhere bfloat16 is emulated and slower than float32.
    update_dtype: str = "float32"
    checkpoint_every: int = 200_000
    max_minutes: float = 0.0  # wall-clock cap (0: none); the run ends cleanly when it is reached


@dataclass
class NativePolicySection:
    cnn_channels: int = 32
    hidden: int = 128
    head_activation: str = "relu"  # "relu", or "tanh" (SB3's heads: needed to start from an SB3 policy)
    value_cnn_channels: int = 0  # both > 0: the value head reads a torso of its own, of these sizes;
    value_hidden: int = 0  # both 0: it reads the policy's torso
    init_from: str = ""  # start from this checkpoint's weights (native, or SB3 converted exactly)


@dataclass
class NativePPOSection:
    learning_rate: float = 2.5e-4
    anneal_lr: bool = True
    # "decisions": linear to 0 at train.total_decisions (the same seed gives the same run wherever
    # the total is reached within train.max_minutes); "minutes": at the total or at
    # train.max_minutes of wall-clock time, whichever is nearer (a capped leg ends annealed).
    anneal_over: str = "decisions"
    anneal_power: float = 1.0  # the rate is learning_rate * (1 - done) ** anneal_power: 1 linear
    minibatch_size: int = 1024
    n_epochs: int = 3
    gamma: float = 0.997
    gae_lambda: float = 0.95
    clip_coef: float = 0.2
    ent_coef: float = 0.005
    vf_coef: float = 0.5
    max_grad_norm: float = 0.5
    target_kl: float = 0.0  # stop an update's epochs early past this approximate KL (0: never)


@dataclass
class NativeEvalSection:
    every: int = 200_000  # learner decisions between greedy evaluations (0: only at the end)
    games: int = 30  # per table size and opponent kind, periodic
    final_games: int = 60  # per table size and opponent kind, at the end
    opponents: list = field(default_factory=lambda: ["heuristic", "random"])
    # Keep the policy of the periodic evaluation with the best mean greedy win rate against the
    # heuristic over the table sizes as best.zip; the final evaluation then plays that policy.
    keep_best: bool = False


@dataclass
class NativeConfig:
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

    def to_dict(self) -> dict[str, Any]:
        return dataclasses.asdict(self)


def _validate_native(cfg: NativeConfig) -> None:
    def fail(key: str, why: str) -> None:
        raise TrainConfigError(f"{key}: {why}")

    if not cfg.run_name or "/" in cfg.run_name:
        fail("run_name", "must be a non-empty name without '/'")
    tables = cfg.tables.weights()
    if any(w < 0 for w in tables.values()) or sum(tables.values()) <= 0:
        fail("tables", f"weights must be >= 0 and not all zero, got {tables}")
    lg = cfg.league
    if not 0 <= lg.share <= 1:
        fail("league.share", "must be in [0, 1]")
    kinds = {"snapshot": lg.snapshot, "heuristic": lg.heuristic, "random": lg.random}
    if lg.share > 0 and (any(w < 0 for w in kinds.values()) or sum(kinds.values()) <= 0):
        fail("league", f"opponent weights must be >= 0 and not all zero, got {kinds}")
    if lg.snapshot_every < 1 or lg.pool_size < 1:
        fail("league", "snapshot_every and pool_size must be >= 1")
    if lg.priority_power < 0 or lg.floor < 0:
        fail("league", "priority_power and floor must be >= 0")
    pre = cfg.pretrain
    if pre.games < 0 or pre.epochs < 1 or pre.batch_size < 1 or pre.learning_rate <= 0:
        fail("pretrain", "games must be >= 0, epochs and batch_size >= 1, learning_rate > 0")
    t = cfg.train
    for name in ("total_decisions", "rollout_decisions", "games_per_collector", "torch_threads",
                 "checkpoint_every"):  # fmt: skip
        if getattr(t, name) < 1:
            fail(f"train.{name}", "must be >= 1")
    if t.workers < 0:
        fail("train.workers", "must be >= 0")
    if t.pipelined and t.workers < 1:
        fail("train.pipelined", "needs train.workers >= 1 (the workers collect during the update)")
    if t.update_dtype not in ("auto", "float32", "bfloat16"):
        fail("train.update_dtype", f"must be 'auto', 'float32' or 'bfloat16', not {t.update_dtype!r}")
    if t.max_minutes < 0:
        fail("train.max_minutes", "must be >= 0 (0: no cap)")
    p = cfg.ppo
    if p.minibatch_size < 2 or p.n_epochs < 1:
        fail("ppo", "minibatch_size must be >= 2 and n_epochs >= 1")
    if p.minibatch_size > t.rollout_decisions:
        fail("ppo.minibatch_size", f"must be <= train.rollout_decisions ({t.rollout_decisions})")
    if not 0 < p.gamma <= 1 or not 0 <= p.gae_lambda <= 1:
        fail("ppo.gamma", "gamma must be in (0, 1] and gae_lambda in [0, 1]")
    if p.learning_rate <= 0 or p.clip_coef <= 0 or p.target_kl < 0:
        fail("ppo", "learning_rate and clip_coef must be > 0, target_kl >= 0")
    if p.anneal_over not in ("decisions", "minutes"):
        fail("ppo.anneal_over", f"must be 'decisions' or 'minutes', not {p.anneal_over!r}")
    if p.anneal_power <= 0:
        fail("ppo.anneal_power", "must be > 0 (1: linear)")
    if p.anneal_over == "minutes" and not t.max_minutes:
        fail("ppo.anneal_over", "'minutes' needs train.max_minutes > 0")
    bad = [o for o in cfg.eval.opponents if o not in AGENT_KINDS]
    if bad:
        fail("eval.opponents", f"unknown opponent(s) {bad}; use random and/or heuristic")
    if cfg.policy.head_activation not in ("relu", "tanh"):
        fail("policy.head_activation", "must be 'relu' or 'tanh'")
    vc, vh = cfg.policy.value_cnn_channels, cfg.policy.value_hidden
    if vc < 0 or vh < 0 or (vc > 0) != (vh > 0):
        fail("policy.value_cnn_channels", "and value_hidden: both > 0 (a value torso of its own) or both 0")
    if cfg.policy.init_from and not Path(cfg.policy.init_from).is_file():
        fail("policy.init_from", f"no checkpoint file {cfg.policy.init_from!r}")
    if cfg.eval.every < 0 or cfg.eval.games < 0 or cfg.eval.final_games < 0:
        fail("eval", "every, games and final_games must be >= 0")
    if cfg.eval.keep_best and not (cfg.eval.every and cfg.eval.games and "heuristic" in cfg.eval.opponents):
        fail("eval.keep_best", "needs periodic evaluations (eval.every, eval.games > 0) vs the heuristic")
    from island_fortress_env.engine import GameConfig
    from island_fortress_env.engine.config import ConfigError

    for n, weight in tables.items():
        if weight > 0:
            try:
                GameConfig.from_dict({"num_players": n, **cfg.env.options})
            except ConfigError as exc:
                fail("env.options", str(exc))


VALIDATORS: dict[type, Any] = {TrainConfig: _validate, NativeConfig: _validate_native}


def _set_dotted(data: dict, dotted: str, raw_value: str) -> None:
    keys = dotted.split(".")
    node = data
    for k in keys[:-1]:
        node = node.setdefault(k, {})
        if not isinstance(node, dict):
            raise TrainConfigError(f"override {dotted!r}: {k!r} is not a section")
    node[keys[-1]] = yaml.safe_load(raw_value)


def load_config(
    path: str | Path | None = None, overrides: Sequence[str] = (), schema: type = TrainConfig
) -> Any:
    """Read a YAML config (or the defaults), apply ``key.sub=value`` overrides, validate.

    ``schema`` is ``TrainConfig`` (the SB3 trainer) or ``NativeConfig`` (the native PPO trainer).
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
        cfg = _build(schema, data, "config")
        VALIDATORS[schema](cfg)
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
