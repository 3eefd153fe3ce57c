"""``mixture:FILE``: a mixed strategy over agents, one member drawn for each game.

A mixture is what the meta-game of a population of policies is solved to (PSRO, Lanctot et al.,
2017): ``island-fortress tournament ... --out ladder.json`` writes the Nash mixture of its 2-player
meta-game there, and ``mixture:ladder.json`` plays it. FILE is a JSON object whose ``mixture`` (or
``meta_nash.mixture``, as the tournament writes it) maps agent specs to weights::

    {"mixture": {"checkpoints/a/final.zip": 0.6, "checkpoints/b/final.zip": 0.3, "heuristic": 0.1}}

A member is any agent spec but another mixture, written as on the command line (a relative path is
taken from the current directory). The weights are >= 0 with a positive sum, and are normalised;
members of weight 0 are left out. At every ``reset(seed)`` (a new game) the agent draws one member by
the weights from its own generator and that member plays the whole game: the same seed draws the
same member and the same game.
"""

from __future__ import annotations

import json
import math
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from island_fortress_env.agents.base import Agent
from island_fortress_env.players.specs import AgentKind, AgentSpec, AgentSpecError, parse_agent_spec

MIXTURE_KIND = AgentKind.MIXTURE.value
SEED_BOUND = 2**63  # a member's seed for a game is drawn below this


@dataclass(frozen=True)
class Member:
    """An agent of a mixture and its probability of playing a game."""

    spec: str
    weight: float


def is_mixture(spec: str | AgentSpec) -> bool:
    try:
        return parse_agent_spec(spec).kind is AgentKind.MIXTURE
    except AgentSpecError:
        return str(spec).startswith(f"{MIXTURE_KIND}:")


def mixture_path(spec: str | AgentSpec) -> Path:
    """FILE of ``mixture:FILE`` (a ``ValueError`` when there is none)."""
    parsed = parse_agent_spec(spec)
    if parsed.kind is not AgentKind.MIXTURE or parsed.path is None:
        raise ValueError("expected mixture:FILE, FILE a JSON file of agent specs and weights")
    return parsed.path


def _weights(path: Path, data: Any) -> tuple[Mapping[str, Any], dict[str, str]]:
    """The name -> weight object of a mixture file's JSON ``data``, and the spec each name stands
    for where it is not a spec itself: a tournament's result names its agents by their display
    names (``policy.zip``, ``heuristic#2``), and its ``agents`` rows give each name's spec."""
    specs: dict[str, str] = {}
    if isinstance(data, dict) and isinstance(data.get("meta_nash"), dict):
        rows = data.get("agents")
        for row in rows if isinstance(rows, list) else []:
            name, spec = (row.get("name"), row.get("spec")) if isinstance(row, dict) else (None, None)
            if isinstance(name, str) and isinstance(spec, str):
                specs[name] = spec
        data = data["meta_nash"]
    weights = data.get("mixture") if isinstance(data, dict) else None
    if not isinstance(weights, dict) or not weights:
        raise ValueError(
            f"{str(path)!r} has no mixture: expected a JSON object whose 'mixture' "
            "(or 'meta_nash.mixture', as the tournament writes it) maps agent specs to weights"
        )
    return weights, specs


def read_mixture(spec: str | AgentSpec) -> tuple[Member, ...]:
    """The members of ``mixture:FILE`` with their normalised weights, in the file's order (the
    weights of one agent entered twice added); a ``ValueError`` that says what is wrong with the
    spec or the file. The members' own specs are not checked here (``players.check_agent_spec``
    does)."""
    path = mixture_path(spec)
    if not path.is_file():
        what = "a directory, not a file" if path.exists() else "no such file"
        raise ValueError(f"{str(path)!r} is {what}")
    try:
        data = json.loads(path.read_text("utf-8"))
    except (OSError, UnicodeDecodeError, json.JSONDecodeError) as exc:
        raise ValueError(f"{str(path)!r} is not a readable JSON file ({exc})") from None
    weights, specs = _weights(path, data)
    merged: dict[str, float] = {}
    for name, weight in weights.items():
        if isinstance(weight, bool) or not isinstance(weight, int | float) or not math.isfinite(weight):
            raise ValueError(f"member {name!r}: the weight must be a number, got {weight!r}")
        if weight < 0:
            raise ValueError(f"member {name!r}: the weight must be >= 0, got {weight!r}")
        member = specs.get(name, name)
        if not member or is_mixture(member):
            raise ValueError(f"member {member!r}: a member is an agent spec, not empty or another mixture")
        merged[member] = merged.get(member, 0.0) + float(weight)
    total = sum(merged.values())
    if total <= 0:
        raise ValueError(f"{str(path)!r}: the weights sum to 0; at least one must be > 0")
    if not math.isfinite(total):
        raise ValueError(f"{str(path)!r}: the weights sum to more than a float holds; scale them down")
    return tuple(Member(m, w / total) for m, w in merged.items() if w > 0)


class MixtureAgent:
    """Plays ``members``' mixed strategy: one member, drawn by weight from the agent's own
    generator at every ``reset``, plays each game (greedy or not as that member plays)."""

    def __init__(
        self,
        members: tuple[Member, ...],
        make: Callable[[str, int | None], Agent],
        seed: int | None = None,
        name: str = MIXTURE_KIND,
    ) -> None:
        if not members:
            raise ValueError("a mixture needs at least one member")
        self.name = name
        self.members = members
        self.rng = np.random.default_rng(seed)
        self.agents = [make(m.spec, int(self.rng.integers(SEED_BOUND))) for m in members]
        self.p = np.array([m.weight for m in members], dtype=np.float64)
        self.p /= self.p.sum()
        self.current = 0  # the member playing this game
        self.reset()

    def reset(self, seed: int | None = None) -> None:
        """A new game: draw the member that plays it (and its own seed for the game)."""
        if seed is not None:
            self.rng = np.random.default_rng(seed)
        self.current = int(self.rng.choice(len(self.agents), p=self.p))
        self.agents[self.current].reset(seed=int(self.rng.integers(SEED_BOUND)))

    def act(self, observation: np.ndarray, action_mask: np.ndarray, state: Any = None) -> int:
        return self.agents[self.current].act(observation, action_mask, state)
