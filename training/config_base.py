"""What the three trainers' configs share: the error, the field types, the ``Section`` base
(pydantic v2, strict: a value of the wrong type is refused, never coerced; an unknown key is
refused), the run's name and seed, and the ``reward``, ``pretrain``, ``policy``, ``eval`` and
``logging`` sections.

Every field states its type, its bounds or choices and its help once, in its declaration; the
checks that tie several fields together are ``model_validator``s of the model that holds them and
raise ``fail(key, why)`` with the full dotted key. ``training/config.py`` loads and reports.
"""

from __future__ import annotations

import contextlib
from typing import Annotated, Any, ClassVar, Literal, NoReturn, get_args

from pydantic import AfterValidator, BaseModel, BeforeValidator, ConfigDict, Field, model_validator

from island_fortress_env.players import AgentKind, AgentSpecError, check_agent_spec


class TrainConfigError(ValueError):
    """A training config that cannot be used; ``key`` is the dotted key it is about."""

    def __init__(self, message: str, key: str = "") -> None:
        super().__init__(message)
        self.key = key


def fail(key: str, why: str) -> NoReturn:
    raise TrainConfigError(f"{key}: {why}", key)


# ============================================================== field types


def _number_text(value: Any) -> Any:
    """YAML 1.1 reads ``1e-4`` (no dot) as a string: such a string is the number it spells."""
    if isinstance(value, str):
        with contextlib.suppress(ValueError):
            return float(value)
    return value


def _agent_spec(spec: str) -> str:
    try:
        check_agent_spec(spec)
    except AgentSpecError as exc:
        raise ValueError(str(exc)) from None
    return spec


def _run_name(name: str) -> str:
    if not name or "/" in name:
        raise ValueError("must be a non-empty name without '/'")
    return name


Float = Annotated[float, BeforeValidator(_number_text)]
"""A number: an integer is taken as a float, a string that spells a number as that number."""
Weight = Annotated[Float, Field(ge=0)]
"""A sampling weight (>= 0)."""
AgentSpecText = Annotated[str, AfterValidator(_agent_spec)]
"""An agent spec (``island-fortress evaluate --help``), checked as every command checks it."""
Gamma = Annotated[Float, Field(gt=0, le=1)]
"""PPO's discount per decision: in (0, 1]."""
Lambda = Annotated[Float, Field(ge=0, le=1)]
"""GAE's lambda: in [0, 1]."""
Opponent = Literal["random", "heuristic"]
"""An opponent kind of the trainers' evaluations."""
TableName = Literal["two", "three", "four"]
RunName = Annotated[str, AfterValidator(_run_name)]
"""Names the run's directories: not empty, no '/'."""

TABLE_NAMES: dict[int, TableName] = {2: "two", 3: "three", 4: "four"}  # table sizes: their config keys
TABLE_SIZES = tuple(TABLE_NAMES)  # the table sizes the native trainer plays, in TablesSection's order
assert set(get_args(Opponent)) == {AgentKind.RANDOM.value, AgentKind.HEURISTIC.value}


def opponent_list(*kinds: Opponent) -> list[Opponent]:
    """A list of evaluation opponents (a field's default)."""
    return list(kinds)


class Section(BaseModel):
    """A config section: strict types, unknown keys refused, values checked on assignment too."""

    model_config = ConfigDict(strict=True, extra="forbid", validate_assignment=True)


def check_rules(key: str, table_sizes: Any, options: dict[str, Any]) -> None:
    """The rules options at every table size played, validated by the rules engine itself."""
    from island_fortress_env.engine import GameConfig
    from island_fortress_env.engine.config import ConfigError

    for n in table_sizes:
        try:
            GameConfig.from_dict({"num_players": n, **options})
        except ConfigError as exc:
            fail(key, str(exc))


# ============================================================== sections every trainer shares


class RewardSection(Section):
    """The reward of the native and SB3 trainers (``training/shaping.py``)."""

    win: Float = Field(1.0, description="Zero-sum win/loss at the end (sole winner +1, losers -1/(n-1)).")
    vp: Float = Field(1.0, description="Score gained / 50, every step (dense shaping).")
    vp_relative: bool = Field(False, description="Own gain minus the other seats' mean gain (zero-sum).")


class PretrainSection(Section):
    """Behaviour-cloning warm start from a teacher's games (0 games: none; ``training/pretrain.py``):
    the heuristic by default, or any agent spec, such as a search player over the policy the run
    starts from (expert iteration)."""

    games: int = Field(0, ge=0, description="Teacher games imitated (0: no warm start).")
    teacher: AgentSpecText = Field("heuristic", description="The agent spec whose moves are imitated.")
    epochs: int = Field(4, ge=1, description="Passes over the teacher's decisions.")
    batch_size: int = Field(256, ge=1, description="Decisions per gradient step.")
    learning_rate: Float = Field(1.0e-3, gt=0, description="Adam's learning rate.")
    tables: dict[TableName, Weight] = Field(
        default_factory=dict,
        description="How the games split between table sizes ({two: w, three: w, four: w}; a size "
        "left out gets none); empty: the run's own table weights.",
    )
    max_share: Float = Field(
        1.0,
        gt=0,
        le=1,
        description="Of train.max_minutes (native trainer): the fit stops there, PPO gets the rest.",
    )

    @model_validator(mode="after")
    def _tables_not_all_zero(self) -> PretrainSection:
        if self.tables and sum(self.tables.values()) <= 0:
            fail("pretrain.tables", f"weights must not all be zero, got {self.tables}")
        return self

    def table_weights(self, run_tables: Any) -> dict[int, float]:
        """How the imitated games split between the table sizes: ``tables`` where given (a size
        left out gets none), else the run's own table weights (a ``TablesSection``)."""
        if not self.tables:
            return dict(run_tables.weights())
        return {n: float(self.tables.get(name, 0.0)) for n, name in TABLE_NAMES.items()}


class PolicySection(Section):
    """The network of the SB3 and RLlib trainers: ``network.ActorCritic``'s sizes."""

    cnn_channels: int = Field(
        32, ge=0, description="Channels of the torso's convolutions (0: a dense torso)."
    )
    hidden: int = Field(128, ge=1, description="Width of the torso's and the heads' hidden layers.")


class EvalSection(Section):
    """The evaluation of the SB3 and RLlib trainers' final policy (``evaluate_checkpoint``)."""

    games: int = Field(60, ge=0, description="Games per opponent kind, at the end of training.")
    opponents: list[Opponent] = Field(
        default_factory=lambda: opponent_list("random", "heuristic"), description="The opponent kinds played."
    )


class LoggingSection(Section):
    runs_dir: str = Field("runs", description="TensorBoard logs: <runs_dir>/<run_name>.")
    checkpoints_dir: str = Field("checkpoints", description="Checkpoints: <checkpoints_dir>/<run_name>/.")
    progress_bar: bool = Field(True, description="A progress bar (false: a line a minute).")


class RunConfig(Section):
    """What every trainer's run has: a name, a seed and the logging section. ``to_dict`` is a
    checkpoint's record of the config; ``RENAMED`` maps a refused dotted key to its new name."""

    RENAMED: ClassVar[dict[str, str]] = {}

    run_name: RunName = Field("run", description="Names the run's directories (no '/').")
    seed: int = Field(0, ge=0, description="Seeds every generator of the run.")

    def to_dict(self) -> dict[str, Any]:
        return self.model_dump()
