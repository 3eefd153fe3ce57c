"""Mistake marks for the analysis, as a chess site gives them: where a seat's chance to win fell
over its own turn by more than the estimate's noise, what it played and what the policy
preferred there, in one sentence ("You played Take the Builder; the policy preferred Take the
Recruiter; your chance to win fell 15 points (52% to 37%)").

**Where.** The chances are estimated at the turn starts (``web.analysis``). A turn is the
decisions from one estimated position ``s`` to the next ``t``, all of one mover. Its fall is the
mover's chance at ``s`` less its chance at ``t``. It is marked when it is at least
``MISTAKE_POINTS`` (``BLUNDER_POINTS``: a blunder) *and* larger than the noise of the two
estimates: ``Z95 * sqrt(var_s + var_t + 2 m^2)``, the sampling variances of the two points and
the model error ``m`` of the curve (``analysis.model_error``), so a fall that the bands explain
is not called a mistake.

**Which move.** At each decision of the turn with more than one legal choice, the policy's
preferred move is asked: the first checkpoint the server offers (its most probable legal action on
the mover's own observation), else the heuristic agent on a redeal of what the mover cannot see
(``engine.visibility.redeal_unseen``), so the preference uses nothing the mover could not know. The
first decision where the move played differs is the one named; when the policy agrees with every
move of the turn, the sentence says so (the fall came from the draws or the other seats).

**Whose.** For a seat's own view (a person playing, a replay "as seen by" a seat) only that
seat's turns are marked: another seat's move in words, or the policy's view of it, would show its
hand. A spectator's analysis (every hand shown) marks every seat's turns.

Every draw (the heuristic's, the redeal's) comes from a generator spawned by name for the step
(``players.seeds.stream_key``), so the marks repeat exactly.
"""

from __future__ import annotations

import itertools
import math
from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING, Any

import numpy as np

from island_fortress_env.engine.visibility import redeal_unseen
from island_fortress_env.env.observation import action_mask
from island_fortress_env.players import make_agent
from island_fortress_env.players.seeds import stream_key
from island_fortress_env.stats import Z95
from island_fortress_env.views import narrate

if TYPE_CHECKING:
    from island_fortress_env.engine import State

MISTAKE_POINTS = 0.10
BLUNDER_POINTS = 0.25
MAX_MARKS = 200
_NO_OBSERVATION = np.zeros(0, dtype=np.float32)


def named_seed(name: str, step: int) -> int:
    """64 bits of the stream ``name`` for ``step``: the same marks every time."""
    sequence = np.random.SeedSequence(0, spawn_key=(stream_key(name), step))
    return int(sequence.generate_state(1, np.uint64)[0])


def heuristic_preference(state: State, seat: int, step: int) -> int:
    """The heuristic agent's move for ``seat`` on a redeal of what ``seat`` cannot see."""
    seen = redeal_unseen(state, seat, named_seed("analysis-mistake-redeal", step) >> 1)
    agent = make_agent("heuristic", seed=named_seed("analysis-mistake-heuristic", step) >> 32)
    return int(agent.act(_NO_OBSERVATION, action_mask(seen), seen))


def _who(names: Sequence[str], seat: int) -> tuple[str, str]:
    """How the sentence names the mover, and its possessive."""
    if seat < len(names) and names[seat] == "you":
        return "You", "your"
    return narrate.seat_name(names, seat), "its"


def find_marks(
    steps: Sequence[int],
    results: dict[int, tuple[list[float], int]],
    states: Sequence[State],
    actions: Sequence[int],
    viewer: int | None,
    names: Sequence[str],
    model: float,
    prefer: Callable[[State, int, int], int],
    policy_name: str,
    cancelled: Callable[[], bool] = lambda: False,
) -> list[dict[str, Any]]:
    """The marks of the turns between consecutive estimated ``steps`` (module doc): each
    ``{"step", "to", "seat", "kind", "fall", "before", "after", "played", "preferred", "at",
    "text"}``, ``at`` the decision named (None when the policy agreed throughout)."""
    marks: list[dict[str, Any]] = []
    ordered = sorted(s for s in steps if s in results)
    for s, t in itertools.pairwise(ordered):
        if cancelled() or len(marks) >= MAX_MARKS:
            break
        state = states[s]
        if state.is_terminal() or s >= len(actions):
            continue
        seat = state.current_player()
        if viewer is not None and seat != viewer:
            continue
        (before, n_s), (after, n_t) = results[s], results[t]
        fall = before[seat] - after[seat]
        noise = Z95 * math.sqrt(
            _variance(before[seat], n_s) + _variance(after[seat], n_t) + 2 * model * model
        )
        if fall < MISTAKE_POINTS or fall <= noise:
            continue
        at = played = preferred = None
        for k in range(s, min(t, len(actions))):
            here = states[k]
            if here.is_terminal() or here.current_player() != seat or len(here.legal_actions()) < 2:
                continue
            best = prefer(here, seat, k)
            if best != actions[k]:
                at = k
                played = narrate.action_words(here, actions[k])
                preferred = narrate.action_words(here, best)
                break
        who, whose = _who(names, seat)
        was, now = round(100 * before[seat]), round(100 * after[seat])
        fell = f"{whose} chance to win fell {round(100 * fall)} points ({was}% to {now}%)"
        if at is None:
            text = f"{who}: {policy_name} would have played the same; {fell}, by the draws or others' moves"
        else:
            text = f"{who} played {played}; {policy_name} preferred {preferred}; {fell}"
        marks.append(
            {
                "step": s,
                "to": t,
                "seat": seat,
                "kind": "blunder" if fall >= BLUNDER_POINTS else "mistake",
                "fall": round(fall, 4),
                "before": round(before[seat], 4),
                "after": round(after[seat], 4),
                "at": at,
                "played": played,
                "preferred": preferred,
                "text": text,
            }
        )
    return marks


def _variance(share: float, rollouts: int) -> float:
    """The sampling variance of a share estimated from ``rollouts`` playouts (0: exact)."""
    return share * (1 - share) / rollouts if rollouts > 0 else 0.0
