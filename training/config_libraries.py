"""The configs of the two trainers built on RL libraries: ``TrainConfig`` (SB3's MaskablePPO,
``training/train.py``; ``configs/sb3.yaml``, ``configs/sb3-long.yaml``) and ``RLlibConfig`` (Ray
RLlib's multi-agent PPO, ``training/rllib_backend.py``; ``configs/rllib.yaml``). Their ``ppo``
sections use each library's own argument names."""

from __future__ import annotations

from typing import Annotated, Any, ClassVar, Literal

from pydantic import Field, model_validator

from island_fortress_env.training.config_base import (
    EvalSection,
    Float,
    Gamma,
    Lambda,
    LoggingSection,
    PolicySection,
    PretrainSection,
    RewardSection,
    RunConfig,
    RunName,
    Section,
    Weight,
    check_rules,
    fail,
)

NumPlayers = Annotated[int, Field(ge=2, le=4, description="Players at the table (one table size per run).")]
OPTIONS_HELP = "Rules options / variants, exactly as for island_fortress_v0.env()."

# ============================================================== the SB3 trainer


class EnvSection(Section):
    num_players: NumPlayers = 3
    options: dict[str, Any] = Field(default_factory=dict, description=OPTIONS_HELP)


class OpponentsSection(Section):
    """Per-episode sampling weights of the opponent kind that plays every other seat."""

    snapshot: Weight = Field(
        0.4, description="Frozen snapshots of the learner (the snapshots section's pool)."
    )
    random: Weight = Field(0.2, description="Random players.")
    heuristic: Weight = Field(0.4, description="Heuristic players.")

    @model_validator(mode="after")
    def _not_all_zero(self) -> OpponentsSection:
        if sum(self.model_dump().values()) <= 0:
            fail("opponents", f"weights must not all be zero, got {self.model_dump()}")
        return self


class SnapshotsSection(Section):
    snapshot_every: int = Field(
        20_000, ge=1, description="Learner steps between snapshots added to the pool."
    )
    pool_size: int = Field(
        5, ge=1, description="Most recent snapshots kept; one is drawn per snapshot episode."
    )


class TrainSection(Section):
    total_timesteps: int = Field(200_000, ge=1, description="Steps of the learning seat over the run.")
    n_envs: int = Field(4, ge=1, description="Environments stepped side by side.")
    vec_env: Literal["subproc", "dummy"] = Field(
        "subproc", description="subproc (one process per env) or dummy (in-process)."
    )
    checkpoint_every: int = Field(50_000, ge=1, description="Steps between checkpoints.")
    device: str = Field("cpu", description="torch's device for SB3.")
    torch_threads: int = Field(1, ge=1, description="Threads of torch in the main process.")


class PPOSection(Section):
    """Keyword arguments of sb3-contrib's ``MaskablePPO``, under SB3's own names."""

    learning_rate: Float = Field(3.0e-4, gt=0, description="Adam's learning rate.")
    n_steps: int = Field(512, ge=2, description="Steps per environment per update.")
    batch_size: int = Field(512, ge=2, description="Minibatch size (<= n_steps * n_envs).")
    n_epochs: int = Field(4, ge=1, description="Passes over each rollout.")
    gamma: Gamma = Field(0.995, description="Discount per step.")
    gae_lambda: Lambda = Field(0.95, description="GAE's lambda.")
    clip_range: Float = Field(0.2, gt=0, description="PPO's clipping of the probability ratio.")
    ent_coef: Float = Field(0.01, description="Weight of the entropy bonus.")
    vf_coef: Float = Field(0.5, description="Weight of the value loss.")
    max_grad_norm: Float = Field(0.5, description="Global gradient-norm clip.")


class TrainConfig(RunConfig):
    """The SB3 trainer's run: one learning seat per game (``training/train.py``; ``configs/sb3.yaml``)."""

    RENAMED: ClassVar[dict[str, str]] = {"opponents.self": "opponents.snapshot", "selfplay": "snapshots"}

    run_name: RunName = Field("default", description="Names the run's directories (no '/').")
    env: EnvSection = Field(default_factory=EnvSection)
    opponents: OpponentsSection = Field(default_factory=OpponentsSection)
    snapshots: SnapshotsSection = Field(default_factory=SnapshotsSection)
    reward: RewardSection = Field(default_factory=RewardSection)
    pretrain: PretrainSection = Field(default_factory=PretrainSection)
    train: TrainSection = Field(default_factory=TrainSection)
    ppo: PPOSection = Field(default_factory=PPOSection)
    policy: PolicySection = Field(default_factory=PolicySection)
    eval: EvalSection = Field(default_factory=EvalSection)
    logging: LoggingSection = Field(default_factory=LoggingSection)

    @model_validator(mode="after")
    def _across_sections(self) -> TrainConfig:
        if self.pretrain.tables:
            fail("pretrain.tables", "the SB3 trainer imitates games at its own table size (env.num_players)")
        p, t = self.ppo, self.train
        if p.batch_size > p.n_steps * t.n_envs:
            fail("ppo.batch_size", f"must be <= n_steps * n_envs ({p.n_steps * t.n_envs})")
        check_rules("env", [self.env.num_players], self.env.options)
        return self


# ============================================================== the RLlib trainer


RewardMode = Literal["win_loss", "score_margin", "vp_delta"]  # island_fortress_v0's reward modes


class RLlibEnvSection(Section):
    num_players: NumPlayers = 3
    reward: RewardMode = Field("win_loss", description="island_fortress_v0's reward mode.")
    options: dict[str, Any] = Field(default_factory=dict, description=OPTIONS_HELP)


class RaySection(Section):
    address: str = Field(
        "", description='"" starts a local Ray; "auto" or HOST:PORT joins a running cluster.'
    )
    num_cpus: int = Field(2, ge=1, description="CPUs of the local Ray (ignored with an address).")


class EnvRunnersSection(Section):
    num_env_runners: int = Field(1, ge=0, description="Rollout actors (each one CPU).")
    num_envs_per_env_runner: int = Field(1, ge=1, description="Environments per rollout actor.")
    rollout_fragment_length: int = Field(
        0, ge=0, description="0: auto (train_batch_size split over the runners)."
    )


class LearnersSection(Section):
    num_learners: int = Field(0, ge=0, description="0: one learner in the driver process.")
    num_gpus_per_learner: Float = Field(0.0, ge=0, description="GPUs of each learner.")


class RLlibTrainSection(Section):
    total_timesteps: int = Field(
        200_000, ge=1, description="Env steps sampled (one step = one decision of one seat)."
    )
    checkpoint_every: int = Field(10, ge=1, description="Training iterations between checkpoints.")
    torch_threads: int = Field(1, ge=1, description="Threads of torch in the driver.")


class RLlibPPOSection(Section):
    """Keyword arguments of RLlib's ``PPOConfig.training()``, under RLlib's own names."""

    lr: Float = Field(3.0e-4, gt=0, description="The learning rate.")
    train_batch_size_per_learner: int = Field(4000, ge=2, description="Env steps per update and learner.")
    minibatch_size: int = Field(512, ge=2, description="Minibatch size (<= train_batch_size_per_learner).")
    num_epochs: int = Field(4, ge=1, description="Passes over each batch.")
    gamma: Gamma = Field(0.995, description="Discount per step.")
    lambda_: Lambda = Field(0.95, description="GAE's lambda.")
    clip_param: Float = Field(0.2, description="PPO's clipping of the probability ratio.")
    vf_clip_param: Float = Field(10.0, description="Clipping of the value loss.")
    entropy_coeff: Float = Field(0.01, description="Weight of the entropy bonus.")
    vf_loss_coeff: Float = Field(0.5, description="Weight of the value loss.")
    grad_clip: Float = Field(0.5, description="Global gradient-norm clip.")

    @model_validator(mode="after")
    def _minibatch(self) -> RLlibPPOSection:
        if self.minibatch_size > self.train_batch_size_per_learner:
            fail(
                "ppo.minibatch_size",
                f"must be <= train_batch_size_per_learner ({self.train_batch_size_per_learner})",
            )
        return self


class RLlibConfig(RunConfig):
    """The RLlib trainer's run: every seat plays one shared policy (``training/rllib_backend.py``;
    ``configs/rllib.yaml``)."""

    run_name: RunName = Field("rllib", description="Names the run's directories (no '/').")
    env: RLlibEnvSection = Field(default_factory=RLlibEnvSection)
    ray: RaySection = Field(default_factory=RaySection)
    env_runners: EnvRunnersSection = Field(default_factory=EnvRunnersSection)
    learners: LearnersSection = Field(default_factory=LearnersSection)
    train: RLlibTrainSection = Field(default_factory=RLlibTrainSection)
    ppo: RLlibPPOSection = Field(default_factory=RLlibPPOSection)
    policy: PolicySection = Field(default_factory=PolicySection)
    eval: EvalSection = Field(default_factory=EvalSection)
    logging: LoggingSection = Field(default_factory=LoggingSection)

    def env_config(self) -> dict[str, Any]:
        """RLlib's ``env_config``: ``island_fortress_v0.env()``'s keyword arguments."""
        return {"num_players": self.env.num_players, "reward": self.env.reward, **self.env.options}

    @model_validator(mode="after")
    def _across_sections(self) -> RLlibConfig:
        runners = self.env_runners.num_env_runners
        if not self.ray.address and runners + 1 > self.ray.num_cpus:
            cpus = self.ray.num_cpus
            why = f"needs {runners + 1} CPUs (one per env runner plus the learner); ray.num_cpus is {cpus}"
            fail("env_runners.num_env_runners", why)
        check_rules("env", [self.env.num_players], self.env.options)
        return self
