"""Named bot levels for the game setup, weakest first, with their ladder rating where the project
measured one.

The levels are agent specs the server offers beside its ``--agents``: random, the heuristic, the
shipped policy (``checkpoints/policy-2-4p-v3.zip``) in its default play mode (``threshold:0.05:``,
``players.specs.shipped_policy_spec``), and the search player guided by that policy at 16, 64 and
256 simulations a decision. A level is offered where it can be played here: the policy and the
search levels need the shipped checkpoint and torch.

``LADDER`` is the 2-player ladder of docs/STRENGTH.md ("The ladder": one OpenSkill rating over 36
pairings of 10 games, ordered by the ordinal ``mu - 3 sigma``), each agent by the label the app
shows (``search:64`` is the search over the shipped policy); a test keeps the two equal. An agent
not on it is shown without a rating.
"""

from __future__ import annotations

import importlib.util
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from island_fortress_env.players import AgentKind, AgentSpecError, check_agent_spec, parse_agent_spec
from island_fortress_env.players.specs import CHECKPOINT_KINDS, SHIPPED_POLICY, shipped_policy_spec

LADDER_SOURCE = "docs/STRENGTH.md, the 2-player ladder (OpenSkill ordinal, mu - 3 sigma)"


@dataclass(frozen=True)
class Rating:
    ordinal: float
    mu: float
    sigma: float


# Agent label -> its rating on the ladder (docs/STRENGTH.md).
LADDER: dict[str, Rating] = {
    "search:64": Rating(50.1, 59.0, 3.0),
    "policy-2-4p-v3": Rating(43.5, 52.1, 2.9),
    "threshold:0.05:policy-2-4p-v3": Rating(42.8, 51.6, 2.9),
    "policy-2-4p": Rating(34.2, 43.0, 3.0),
    "policy-2-4p-v2": Rating(30.0, 39.1, 3.0),
    "baseline-3p": Rating(17.6, 27.4, 3.3),
    "heuristic": Rating(6.3, 16.8, 3.5),
    "mcts:50": Rating(3.4, 15.4, 4.0),
    "random": Rating(-19.3, -5.0, 4.8),
}


@dataclass(frozen=True)
class Level:
    name: str  # "Casual"
    spec: str  # the agent spec ("heuristic"); the shipped policy's is its path
    about: str  # how it plays, in a few words


def _policy_spec(agents: Sequence[str]) -> str:
    """The shipped policy in its default play mode, its file named as ``agents`` name it, if one
    of them plays it; else by a path relative to the working directory when it is under it, else
    absolute."""
    for spec in agents:
        try:
            parsed = parse_agent_spec(spec)
        except AgentSpecError:
            continue
        path = parsed.path if parsed.kind in CHECKPOINT_KINDS else None
        if path is not None and path.resolve() == SHIPPED_POLICY.resolve():
            return shipped_policy_spec(path)
    try:
        return shipped_policy_spec(SHIPPED_POLICY.relative_to(Path.cwd()))
    except ValueError:
        return shipped_policy_spec(SHIPPED_POLICY)


def _torch_importable() -> bool:
    try:
        return importlib.util.find_spec("torch") is not None
    except ImportError:  # an import hook that refuses torch
        return False


def _playable(spec: str) -> bool:
    """The level's agent plays here: its spec checks out, and a level played by the shipped
    checkpoint (played or searching over it) finds torch to read it with."""
    try:
        parsed = parse_agent_spec(spec)
        if parsed.kind in (*CHECKPOINT_KINDS, AgentKind.SEARCH) and not _torch_importable():
            return False
        check_agent_spec(spec)
    except AgentSpecError:
        return False
    return True


def named_levels(agents: Sequence[str] = ()) -> list[Level]:
    """The named levels that can be played here, weakest first (module doc)."""
    policy = _policy_spec(agents)
    levels = [
        Level("Beginner", "random", "random legal moves"),
        Level("Casual", "heuristic", "a hand-written heuristic with a short look-ahead"),
        Level("Strong", policy, "the shipped trained policy, drawing among its likely moves; instant"),
        Level("Expert", "search:16", "the shipped policy searching 16 simulations a move"),
        Level("Master", "search:64", "the shipped policy searching 64 simulations a move (slower)"),
        Level("Grandmaster", "search:256", "256 simulations a move: the strongest, a second or so a move"),
    ]
    return [level for level in levels if _playable(level.spec)]


def rating_of(spec: str) -> Rating | None:
    try:
        return LADDER.get(parse_agent_spec(spec).label)
    except AgentSpecError:
        return None


def offered(agents: Sequence[str], levels: Sequence[Level]) -> list[dict[str, Any]]:
    """What the game setup offers: the named levels, then the other ``agents`` of the server,
    each with its label and its ladder rating (None when it is not on the ladder)."""
    out = []
    seen = set()
    for level in levels:
        out.append(_entry(level.spec, level.name, level.about))
        seen.add(level.spec)
    for spec in agents:
        if spec not in seen:
            out.append(_entry(spec, None, "offered by this server"))
            seen.add(spec)
    return out


def _entry(spec: str, name: str | None, about: str) -> dict[str, Any]:
    rating = rating_of(spec)
    label = parse_agent_spec(spec).label
    return {
        "spec": spec,
        "label": label,
        "level": name,
        "about": about,
        "rating": None
        if rating is None
        else {"ordinal": rating.ordinal, "mu": rating.mu, "sigma": rating.sigma},
    }
