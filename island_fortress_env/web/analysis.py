"""Analysis of a position, off the request path: a checkpoint's top actions, and each seat's
chance to win estimated by rollouts.

**Chance to win.** From the position, ``rollouts`` games are played to the end (through
``players.runner``, on a batch of the position's backend) by fast playouts (``random``: uniform
legal moves; ``heuristic``: the heuristic agent at every seat) and each seat's share of the wins
is counted (a win shared by k tied winners counts 1/k). For a
seat's own view (a person playing) every rollout starts from a **redeal** of what that seat
cannot see (``engine.visibility.redeal_unseen``: the other hands, the cards others are choosing
from and the deck dealt again in the same counts, others' sealed bids drawn again, the engine's
generator reseeded), so the estimate uses nothing the seat may not know. A spectator's (a replay, a game
between agents) rollouts start from the true position. Every draw comes from a generator
seeded by the rollout's number, the same at every position (common random numbers: the curve
moves with the position more than with the draws), so an estimate repeats exactly.

**How sure.** Each estimate comes with a 95% band: its Wilson score interval over the rollouts
(a win shared by k counts 1/k, so the interval is a close approximation there), the
between-playout variance, widened by the **model error** ``m`` (``model_error``): a playout is a
model of how the game goes on, not the game, and heuristic playouts in particular are nearly
deterministic, so their rollouts agree with each other (a tight Wilson interval) while a small
change of the position flips them all (the curve swings 0-100% between neighbouring turns).
``m`` is measured on the curve itself: the mean square of the jumps between consecutive
estimated positions, halved (a jump is the difference of two errors), less the sampling variance
the points already explain; when the curve has fewer than ``MIN_JUMPS`` jumps, the measured
prior of its playouts (``PRIOR_MODEL_ERROR``) stands in. Each side of the band is the Wilson side
and ``Z95 * m`` added in quadrature, so a curve that swings more than its rollouts explain shows
bands as wide as its swings. The page names the method, the count and ``m``. The default counts
(``DEFAULT_ROLLOUTS``) keep the sampling part within about +-6 points for random playouts and
+-12 for heuristic ones.

**Mistakes** (``web.mistakes``): once every point is in, the turns whose mover's chance fell by
more than the bands explain, each with what was played and what the policy preferred.

**Top actions.** A trained checkpoint's probabilities for the seat to move
(``CheckpointAgent.probabilities`` on that seat's observation).

Estimates run in one background thread (``Analyst``), a job per request of a list of
positions; the browser polls the job and draws each point as it comes. A newer job for the
same game and viewer cancels the older one. Requests of play are never queued behind it. One
client (an address) has at most ``MAX_PENDING_PER_CLIENT`` jobs waiting or running; beyond it a
new job is refused (429), so nobody fills the queue that others' analyses wait in.
"""

from __future__ import annotations

import itertools
import math
import random
import secrets
import threading
import time
from collections import OrderedDict
from collections.abc import Callable, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from island_fortress_env import vector
from island_fortress_env.engine.scoring import win_share
from island_fortress_env.engine.visibility import redeal_unseen
from island_fortress_env.env.observation import ObservationEncoder, action_mask
from island_fortress_env.players import make_agent, parse_agent_spec
from island_fortress_env.players.runner import GameRunner, Seating, SeatPolicy
from island_fortress_env.players.seat_policies import BatchSeats
from island_fortress_env.players.seeds import Stream, stream_seed
from island_fortress_env.stats import Z95, wilson
from island_fortress_env.views import narrate
from island_fortress_env.web.errors import BadRequest, NotFound, TooMany, shown
from island_fortress_env.web.mistakes import find_marks, heuristic_preference

if TYPE_CHECKING:
    from island_fortress_env.engine import State

PLAYOUTS = ("random", "heuristic")
# Rollouts per position by default: on the core's batch a random playout takes ~0.5 ms and a
# heuristic one ~3 ms (2-core host, from move 60 of a 3-player game).
DEFAULT_ROLLOUTS = {"random": 256, "heuristic": 64}
MAX_ROLLOUTS = 1024
MAX_POINTS = 600  # positions in one job
KEPT_JOBS = 32
MAX_PENDING_PER_CLIENT = 4  # jobs waiting or running for one client
KEPT_ESTIMATES = 20_000
TOP_ACTIONS = 6
MIN_JUMPS = 6  # jumps between estimated positions needed to measure the model error
# The model error of each playout where a curve is too short to measure it: the rms jump between
# consecutive turn starts of the first third of two heuristic games, halved in variance (32
# heuristic and 256 random playouts a position: 0.09-0.13 and 0.05-0.06), less the sampling part.
PRIOR_MODEL_ERROR = {"random": 0.03, "heuristic": 0.08}
ROLLOUT_SLOTS = 256  # rollouts a batch plays at once


def playout_policy(playout: str) -> SeatPolicy:
    """The seat policy of ``playout`` (``PLAYOUTS``): the batch's own random or heuristic player."""
    return BatchSeats(playout)


def win_chances(
    state: State,
    viewer: int | None,
    playout: str,
    rollouts: int,
    seed: int,
    cancelled: Callable[[], bool] = lambda: False,
) -> tuple[list[float], int]:
    """Each seat's share of the wins over ``rollouts`` playouts from ``state`` (redealt for
    ``viewer``; the true state for ``None``), played through ``players.runner`` on a batch of
    ``state``'s backend, ``ROLLOUT_SLOTS`` at a time. Rollout ``i`` draws its redeal and its
    players' seed from its own stream of ``seed``. Returns the shares and the rollouts done
    (fewer when ``cancelled`` turned true)."""
    n = state.n
    if state.is_terminal():
        return [win_share(state.winners, p) for p in range(n)], 0
    policies = (playout_policy(playout),) * n
    numbers = iter(range(rollouts))

    def next_seating(_slot: int) -> Seating | None:
        i = next(numbers, None)
        if i is None:
            return None
        draw = random.Random(stream_seed(seed, Stream.WIN_CHANCES, i))
        start = redeal_unseen(state, viewer, draw.getrandbits(63)) if viewer is not None else state
        return Seating(n, draw.getrandbits(63), policies, start=start)

    batch = vector.make(min(rollouts, ROLLOUT_SLOTS), num_players=n, backend=vector.backend_of(state))
    runner = GameRunner(batch, next_seating)
    wins = [0.0] * n
    done = 0
    while runner.playing and not cancelled():
        for game in runner.step().finished:
            for p in range(n):
                wins[p] += game.final.win[p]
            done += 1
    return [w / max(done, 1) for w in wins], done


def model_error(points: Sequence[tuple[Sequence[float], int]], playout: str) -> float:
    """The model error ``m`` of a curve (module doc): ``points`` are its estimates in step
    order, each (the seats' shares, the rollouts; 0 rollouts: a finished game, left out)."""
    live = [(c, n) for c, n in points if n > 0]
    jumps = [
        (a[p] - b[p], a[p] * (1 - a[p]) / na + b[p] * (1 - b[p]) / nb)
        for (a, na), (b, nb) in itertools.pairwise(live)
        for p in range(len(a))
    ]
    if len(jumps) < MIN_JUMPS * (len(live[0][0]) if live else 1):
        return PRIOR_MODEL_ERROR.get(playout, 0.0)
    square = sum(d * d for d, _ in jumps) / len(jumps)
    sampled = sum(v for _, v in jumps) / len(jumps)
    return math.sqrt(max(0.0, (square - sampled) / 2))


def band(share: float, n: int, model: float, z: float = Z95) -> tuple[float, float]:
    """The 95% band of an estimate: its Wilson interval, each side widened by ``z * model`` in
    quadrature (module doc); a finished game's result (``n`` 0) is exact."""
    if n <= 0:
        return share, share
    low, high = wilson(share, n, z)
    wide = z * model
    return (
        max(0.0, share - math.hypot(share - low, wide)),
        min(1.0, share + math.hypot(high - share, wide)),
    )


def top_actions(agent: Any, state: State, encoder: ObservationEncoder, k: int = TOP_ACTIONS) -> list[dict]:
    """The ``k`` most probable legal actions of a checkpoint for the seat to move, in words."""
    seat = state.current_player()
    probs = agent.probabilities(encoder.encode(state, seat), action_mask(state))
    legal = sorted(state.legal_actions(), key=lambda a: -probs[a])[:k]
    out = []
    for a in legal:
        choice = narrate.describe_choice(state, a)
        out.append({"action": a, "label": choice.label, "cost": choice.cost, "probability": float(probs[a])})
    return out


@dataclass
class Job:
    """Chances to win at a list of positions, filled in by the background thread."""

    id: str
    source: str  # which game or record, and whose view
    viewer: int | None
    playout: str
    rollouts: int
    steps: tuple[int, ...]
    results: dict[int, tuple[list[float], int]] = field(default_factory=dict)  # chances, rollouts
    marks: list[dict[str, Any]] | None = None  # the mistakes, once every point is in
    done: bool = False
    error: str | None = None
    cancelled: bool = False
    started: float = field(default_factory=time.monotonic)
    seconds: float = 0.0
    client: str = ""  # who asked (an address): the queue is shared fairly

    @property
    def pending(self) -> bool:
        return not self.done and not self.cancelled

    def model(self) -> float:
        """The model error of the curve so far (``model_error``)."""
        return model_error([self.results[s] for s in sorted(self.results)], self.playout)

    def to_json(self) -> dict[str, Any]:
        model = self.model()
        method = (
            f"{self.rollouts} {self.playout} playouts per position, "
            + (
                "from redeals of what this seat cannot see"
                if self.viewer is not None
                else "from the true position"
            )
            + "; the band is the 95% Wilson interval widened by the playouts' model error "
            + f"(+-{round(100 * Z95 * model)} points, measured from the curve's own jumps)"
        )
        points = []
        for s in self.steps:
            if s not in self.results:
                continue
            chances, done = self.results[s]
            bands = [band(c, done, model) for c in chances]
            points.append(
                {
                    "step": s,
                    "chances": chances,
                    "low": [round(lo, 4) for lo, _ in bands],
                    "high": [round(hi, 4) for _, hi in bands],
                    "rollouts": done,
                }
            )
        return {
            "job": self.id,
            "viewer": self.viewer,
            "playout": self.playout,
            "rollouts": self.rollouts,
            "method": method,
            "model_error": round(model, 4),
            "steps": list(self.steps),
            "points": points,
            "marks": self.marks,
            "done": self.done,
            "cancelled": self.cancelled,
            "error": self.error,
            "seconds": round(self.seconds, 3),
        }


class Analyst:
    """The background analysis: one worker thread for rollouts, a cache of estimates, and the
    checkpoints loaded for their top actions."""

    def __init__(self, checkpoints: Sequence[str] = ()) -> None:
        self._pool = ThreadPoolExecutor(max_workers=1, thread_name_prefix="analysis")
        self._jobs: OrderedDict[str, Job] = OrderedDict()
        self._latest: dict[str, Job] = {}
        self._cache: OrderedDict[tuple[Any, ...], tuple[list[float], int]] = OrderedDict()
        self._lock = threading.Lock()
        self.checkpoints = tuple(checkpoints)
        self._agents: dict[str, Any] = {}
        self._agent_lock = threading.Lock()

    def close(self) -> None:
        with self._lock:
            for job in self._jobs.values():
                job.cancelled = True
        self._pool.shutdown(wait=True, cancel_futures=True)

    def start(
        self,
        source: str,
        states: Sequence[State],
        steps: Any,
        viewer: int | None,
        playout: Any,
        rollouts: Any,
        client: str = "",
        actions: Sequence[int] = (),
        names: Sequence[str] = (),
    ) -> Job:
        """Queue the estimates at ``steps`` (indexes into ``states``) for ``client``; see the
        module doc. With ``actions`` (``actions[i]`` taken at ``states[i]``) and the seats'
        ``names``, the mistakes are marked once the estimates are in (``web.mistakes``)."""
        if playout not in PLAYOUTS:
            raise BadRequest(f"'playout' must be one of {list(PLAYOUTS)}, not {shown(playout)}")
        if isinstance(rollouts, bool) or not isinstance(rollouts, int) or not 1 <= rollouts <= MAX_ROLLOUTS:
            raise BadRequest(f"'rollouts' must be an integer 1..{MAX_ROLLOUTS}, not {shown(rollouts)}")
        if not isinstance(steps, list) or not 1 <= len(steps) <= MAX_POINTS:
            raise BadRequest(f"'steps' must list 1..{MAX_POINTS} positions")
        for s in steps:
            if isinstance(s, bool) or not isinstance(s, int) or not 0 <= s < len(states):
                raise BadRequest(f"step {shown(s)} is not a position of this game (0..{len(states) - 1})")
        job = Job(
            id=secrets.token_urlsafe(9),
            source=f"{source}|{viewer}",
            viewer=viewer,
            playout=playout,
            rollouts=rollouts,
            steps=tuple(dict.fromkeys(steps)),
            client=client,
        )
        picked = {s: states[s] for s in job.steps}
        with self._lock:
            waiting = [
                j for j in self._jobs.values() if j.pending and j.client == client and j.source != job.source
            ]
            if len(waiting) >= MAX_PENDING_PER_CLIENT:
                raise TooMany(
                    f"{len(waiting)} analyses of yours are still running or waiting (at most "
                    f"{MAX_PENDING_PER_CLIENT}); wait for one to finish"
                )
            older = self._latest.get(job.source)
            if older is not None:
                older.cancelled = True
            self._latest[job.source] = job
            self._jobs[job.id] = job
            while len(self._jobs) > KEPT_JOBS:  # the oldest finished job goes first
                gone = self._jobs.pop(
                    next((k for k, j in self._jobs.items() if not j.pending), next(iter(self._jobs)))
                )
                gone.cancelled = True
                if self._latest.get(gone.source) is gone:
                    del self._latest[gone.source]
        history = (tuple(states), tuple(actions), tuple(names)) if actions else None
        self._pool.submit(self._run, job, picked, history)
        return job

    def get(self, job_id: Any) -> Job:
        job = self._jobs.get(job_id) if isinstance(job_id, str) else None
        if job is None:
            raise NotFound(f"no analysis {shown(job_id)}")
        return job

    def _run(
        self,
        job: Job,
        picked: dict[int, State],
        history: tuple[tuple[State, ...], tuple[int, ...], tuple[str, ...]] | None = None,
    ) -> None:
        begin = time.monotonic()
        try:
            for step in job.steps:
                if job.cancelled:
                    break
                key = (job.source, step, job.playout, job.rollouts)
                with self._lock:
                    found = self._cache.get(key)
                if found is None:
                    # One seed for every position: rollout i draws the same numbers wherever it
                    # starts (common random numbers), so neighbouring points differ by their
                    # positions more than by the draws.
                    chances, done = win_chances(
                        picked[step],
                        job.viewer,
                        job.playout,
                        job.rollouts,
                        seed=0,
                        cancelled=lambda: job.cancelled,
                    )
                    if done < job.rollouts and not picked[step].is_terminal():
                        break  # cancelled part-way: not an estimate of the asked size
                    with self._lock:
                        self._cache[key] = chances, done
                        while len(self._cache) > KEPT_ESTIMATES:
                            self._cache.popitem(last=False)
                    found = chances, done
                job.results[step] = found
                job.seconds = time.monotonic() - begin
            if history is not None and not job.cancelled and len(job.results) == len(job.steps):
                states, actions, names = history
                prefer, policy = self.preference()
                job.marks = find_marks(
                    job.steps, job.results, states, actions, job.viewer, names, job.model(),
                    prefer, policy, cancelled=lambda: job.cancelled,
                )  # fmt: skip
        except Exception as exc:  # reported to the browser, not raised in a worker nobody joins
            job.error = f"{type(exc).__name__}: {exc}"
        finally:
            job.seconds = time.monotonic() - begin
            job.done = True

    # ------------------------------------------------------------------ top actions

    def agent(self, spec: Any) -> Any:
        """A checkpoint offered by this server, loaded once."""
        if not isinstance(spec, str) or spec not in self.checkpoints:
            offered = ", ".join(self.checkpoints) or "none"
            raise BadRequest(f"unknown checkpoint {shown(spec)}: this server offers {offered}")
        with self._agent_lock:
            agent = self._agents.get(spec)
            if agent is None:
                agent = self._agents[spec] = make_agent(spec, seed=0)
            return agent

    def preference(self) -> tuple[Callable[[State, int, int], int], str]:
        """The policy the mistakes are judged by, and its name in the sentences: the first
        checkpoint offered (its most probable legal action on the mover's observation), else
        the heuristic on a redeal of what the mover cannot see (``web.mistakes``)."""
        if not self.checkpoints:
            return (lambda state, seat, step: heuristic_preference(state, seat, step)), "the heuristic"
        spec = self.checkpoints[0]
        agent = self.agent(spec)
        encoders: dict[int, ObservationEncoder] = {}

        def prefer(state: State, seat: int, step: int) -> int:
            encoder = encoders.setdefault(id(state.game), ObservationEncoder(state.game))
            mask = action_mask(state)
            with self._agent_lock:
                probs = agent.probabilities(encoder.encode(state, seat), mask)
            legal = state.legal_actions()
            return int(max(legal, key=lambda a: probs[a]))

        return prefer, f"the policy ({parse_agent_spec(spec).label})"

    def top_actions(self, spec: Any, state: State, encoder: ObservationEncoder) -> list[dict]:
        agent = self.agent(spec)
        with self._agent_lock:  # one forward pass at a time per server: torch runs on 1 thread
            return top_actions(agent, state, encoder)
