"""Game records: a finished game as a small JSON file that replays exactly.

The game is deterministic given the rules options and the seed, so a record is just those
plus the action ids in order, the agents' names and the final result::

    {"format": "island-fortress-game-record", "version": 1, "action_table": "3f2a...",
     "rules": {"num_players": 3}, "seed": 12, "agents": ["heuristic", "random", "random"],
     "actions": [7, 9, 5, ...], "scores": [41, 18, 22], "winners": [0]}

``seed`` is the seed given to ``env.reset(seed=...)`` of ``island_fortress_v0``; ``rules`` the
environment's rules options (``num_players`` plus the variants that differ from the standard
game); ``action_table`` a digest of the action table, so a record made with another action
encoding is refused instead of replayed wrongly.

    from island_fortress_env import records
    record = records.load("game.json")        # parsed, checked and replayed: RecordError if not
    final = records.replay(record)            # the final engine state
    for state, action in record.steps(): ...  # every decision: the state and the action taken
    records.save(record, "copy.json")

``load`` and ``replay`` refuse a record that does not replay (an illegal action, a game that
ends early or late, other final scores) with a ``RecordError`` naming the step.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from island_fortress_env.engine import IllegalActionError
from island_fortress_env.engine.actions import ACTION_FAMILIES

if TYPE_CHECKING:
    from island_fortress_env.engine import State

FORMAT = "island-fortress-game-record"
VERSION = 1


class RecordError(ValueError):
    """A game record that cannot be read or does not replay."""


def action_table_digest() -> str:
    """A short digest of the action table (every family's name, first id and size)."""
    table = json.dumps([(f.name, f.start, f.size) for f in ACTION_FAMILIES])
    return hashlib.sha256(table.encode()).hexdigest()[:16]


def initial_state(rules: dict[str, Any], seed: int) -> State:
    """The engine state that ``env.reset(seed=seed)`` starts from with these rules options."""
    from island_fortress_env.env.aec import raw_env  # the env owns how a reset seed becomes a game

    env = raw_env(**rules)
    env.reset(seed=seed)
    assert env.game_state is not None
    return env.game_state


@dataclass(frozen=True)
class GameRecord:
    """One game: rules options, reset seed, action ids, agent names per seat, the result."""

    rules: dict[str, Any]
    seed: int
    actions: tuple[int, ...]
    agents: tuple[str, ...]
    scores: tuple[int, ...]
    winners: tuple[int, ...]
    action_table: str = field(default_factory=action_table_digest)
    source: str = field(default="game record", compare=False)  # for error messages: the file

    @classmethod
    def from_game(
        cls, rules: dict[str, Any], seed: int, actions: Sequence[int], agents: Sequence[str], final: State
    ) -> GameRecord:
        """The record of a finished game played from ``env.reset(seed=seed)``."""
        if not final.is_terminal():
            raise RecordError("a game record is written at the end of a game; this game is not over")
        return cls(
            rules=dict(rules),
            seed=int(seed),
            actions=tuple(int(a) for a in actions),
            agents=tuple(agents),
            scores=tuple(final.score),
            winners=tuple(final.winners),
        )

    @property
    def num_players(self) -> int:
        return int(self.rules.get("num_players", 3))

    def to_dict(self) -> dict[str, Any]:
        return {
            "format": FORMAT,
            "version": VERSION,
            "action_table": self.action_table,
            "rules": dict(self.rules),
            "seed": self.seed,
            "agents": list(self.agents),
            "actions": list(self.actions),
            "scores": list(self.scores),
            "winners": list(self.winners),
        }

    @classmethod
    def from_dict(cls, data: Any, source: str = "game record") -> GameRecord:
        """Parse and type-check (without replaying); a ``RecordError`` names the bad field."""

        def fail(why: str) -> RecordError:
            return RecordError(f"{source}: {why}")

        if not isinstance(data, dict) or data.get("format") != FORMAT:
            raise fail(f'not an Island Fortress game record (no "format": "{FORMAT}")')
        if data.get("version") != VERSION:
            raise fail(f"record format version {data.get('version')!r} is not supported (this is {VERSION})")
        missing = sorted({"rules", "seed", "agents", "actions", "scores", "winners"} - set(data))
        if missing:
            raise fail(f"missing field(s) {missing}")
        table = data.get("action_table")
        if table != action_table_digest():
            raise fail(
                f"made with another action table ({table!r}, this version's is {action_table_digest()!r}); "
                "its action ids mean other moves here"
            )

        def ints(name: str) -> tuple[int, ...]:
            value = data[name]
            if not isinstance(value, list) or not all(
                isinstance(v, int) and not isinstance(v, bool) for v in value
            ):
                raise fail(f"{name!r} must be a list of integers")
            return tuple(value)

        rules, seed, agents = data["rules"], data["seed"], data["agents"]
        if not isinstance(rules, dict):
            raise fail("'rules' must be an object of rules options")
        if isinstance(seed, bool) or not isinstance(seed, int) or seed < 0:
            raise fail(f"'seed' must be an integer >= 0, not {seed!r}")
        if not isinstance(agents, list) or not all(isinstance(a, str) for a in agents):
            raise fail("'agents' must be a list of names")
        return cls(
            rules=dict(rules),
            seed=seed,
            actions=ints("actions"),
            agents=tuple(agents),
            scores=ints("scores"),
            winners=ints("winners"),
            action_table=table,
            source=source,
        )

    def initial_state(self) -> State:
        try:
            state = initial_state(self.rules, self.seed)
        except (ValueError, TypeError) as exc:  # ConfigError and DeckError are ValueErrors
            raise RecordError(f"{self.source}: rules {self.rules!r}: {exc}") from None
        if len(self.agents) != state.n:
            raise RecordError(f"{self.source}: {len(self.agents)} agent names for {state.n} players")
        return state

    def steps(self) -> Iterator[tuple[State, int]]:
        """Replay: yield (state before the action, action) for every recorded action; the
        state is live (clone it to keep it). Raises ``RecordError`` naming a step that fails."""
        state = self.initial_state()
        total = len(self.actions)
        for step, action in enumerate(self.actions, start=1):
            if state.is_terminal():
                raise RecordError(
                    f"{self.source}: step {step} of {total}: the game is already over, "
                    f"yet {total - step + 1} more action(s) are recorded"
                )
            yield state, action
            try:
                state.apply_action(action)
            except IllegalActionError as exc:
                raise RecordError(f"{self.source}: step {step} of {total} does not replay: {exc}") from None
        if not state.is_terminal():
            raise RecordError(
                f"{self.source}: the {total} recorded actions end before the game is over "
                f"(round {state.round}, waiting on {state.decision_name()!r})"
            )
        if tuple(state.score) != self.scores or tuple(state.winners) != self.winners:
            raise RecordError(
                f"{self.source}: the replay ends with scores {list(state.score)} and winners "
                f"{list(state.winners)}, but the record says {list(self.scores)} and {list(self.winners)}"
            )


def replay(record: GameRecord) -> State:
    """Replay a record to its final state, checking every step and the result."""
    live = None
    for live, _action in record.steps():  # noqa: B007 (the live state, advanced past each action)
        pass
    assert live is not None  # steps() raises on a record without actions
    return live


def states(record: GameRecord) -> list[State]:
    """Every state of the game: ``states[0]`` the start, ``states[i]`` after ``i`` actions."""
    out: list[State] = []
    live = None
    for live, _action in record.steps():
        out.append(live.clone())
    assert live is not None
    out.append(live.clone())
    return out


def dumps(record: GameRecord) -> str:
    return json.dumps(record.to_dict(), separators=(",", ":"))


def save(record: GameRecord, path: str | Path) -> Path:
    """Write the record as JSON (a few KB); returns the path."""
    path = Path(path)
    try:
        path.write_text(dumps(record) + "\n", encoding="utf-8")
    except OSError as exc:
        raise RecordError(f"game record {str(path)!r}: cannot be written ({exc.strerror or exc})") from None
    return path


def load(path: str | Path, check: bool = True) -> GameRecord:
    """Read a record; with ``check`` (default) replay it and refuse one that does not replay."""
    source = f"game record {str(path)!r}"
    try:
        text = Path(path).read_text(encoding="utf-8")
    except OSError as exc:
        raise RecordError(f"{source}: cannot be read ({exc.strerror or exc})") from None
    except UnicodeDecodeError:
        raise RecordError(f"{source}: is not a text (UTF-8) file") from None
    try:
        data = json.loads(text)
    except json.JSONDecodeError as exc:
        raise RecordError(f"{source}: is not valid JSON ({exc.msg} at line {exc.lineno})") from None
    record = GameRecord.from_dict(data, source)
    if check:
        replay(record)
    return record
