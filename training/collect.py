"""Collection for the native trainer (``training/ppo.py``): the games a rollout is played in.

A ``Collector`` holds ``train.games_per_collector`` raw AEC envs (``island_fortress_v0.raw_env``)
of mixed table sizes and advances them all through ``observe``/``step``: every tick, the pending
decisions of all learning seats go through **one** forward pass, actions are sampled from the
masked logits (illegal actions have probability 0), and the frozen seats of league games
(``training/league.py``) are played by their own agents or snapshots. Every learning seat's
decisions and rewards go to the trainer's per-seat trajectories.

``Collectors`` are the collectors of a run: ``train.workers`` worker processes, each driven over
a pipe, plus the main process's own when the run is not pipelined. Their rollouts are joined in
rank order, so a seeded run gives the same batches whichever worker finishes first.
"""

from __future__ import annotations

import contextlib
import itertools
import multiprocessing as mp
from collections import defaultdict
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import numpy as np
import torch
from torch import nn

from island_fortress_env.agents.base import RandomAgent
from island_fortress_env.agents.network import ActorCritic
from island_fortress_env.engine.scoring import win_loss_returns
from island_fortress_env.env.aec import raw_env
from island_fortress_env.training.config import TABLE_SIZES, NativeConfig
from island_fortress_env.training.figures import game_figures
from island_fortress_env.training.league import (
    GameKind,
    League,
    draw_game_kind,
    draw_snapshot,
    opponent_probabilities,
)
from island_fortress_env.training.shaping import score_gain_reward
from island_fortress_env.training.weights import network_kwargs

if TYPE_CHECKING:
    from island_fortress_env.training.ppo import Rollout


def sample_actions(
    net: nn.Module, obs: np.ndarray, masks: np.ndarray, generator: torch.Generator, greedy: bool = False
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """One forward pass for a batch of decisions: (actions, log-probabilities, values).

    Sampled from the masked softmax with ``generator`` (illegal actions have probability 0),
    or the argmax over legal actions when ``greedy``.
    """
    with torch.no_grad():
        logits, values = net(torch.from_numpy(obs), torch.from_numpy(masks))
        logp = torch.log_softmax(logits, dim=-1)
        if greedy:
            actions = logits.argmax(dim=-1)
        else:
            actions = torch.multinomial(logp.exp(), 1, generator=generator).squeeze(-1)
        chosen = logp.gather(1, actions.unsqueeze(-1)).squeeze(-1)
    return actions.numpy(), chosen.numpy(), values.numpy()


@dataclass
class Game:
    """One table of a collector: its env and who plays each seat."""

    env: Any
    episode: int
    kind: GameKind
    learners: tuple[int, ...]
    frozen: dict[int, Any]  # seat -> agent (heuristic / random) or snapshot id (int)
    snapshot: int | None = None
    decisions: int = 0


@dataclass
class FinishedGame:
    """A game finished during a rollout, as the trainer logs it."""

    episode: int
    players: int
    kind: GameKind
    snapshot: int | None  # the snapshot that played the frozen seats, if any
    length: int  # decisions taken, every seat's
    figures: list[dict[str, Any]]  # ``game_figures`` of each learning seat
    # League games: the learner's pairwise result against the frozen seats (1 per seat finished
    # behind it, 0.5 per tie, averaged); None in self-play games.
    ahead: float | None = None


class Collector:
    """Plays ``games_per_collector`` games at once and turns every learning seat's decisions into
    PPO data. Collector ``rank`` draws from its own generators, seeded by (``seed``, ``rank``)."""

    def __init__(self, cfg: NativeConfig, rank: int) -> None:
        from island_fortress_env.training.ppo import SeatTrajectories  # ppo.py imports this module

        self.cfg = cfg
        self.rank = rank
        seed = np.random.SeedSequence([cfg.seed, rank])
        self.rng = np.random.default_rng(seed)
        self.generator = torch.Generator().manual_seed(int(seed.generate_state(1)[0]))
        weights = cfg.tables.weights()
        self.table_sizes = [n for n in TABLE_SIZES if weights[n] > 0]
        w = np.array([weights[n] for n in self.table_sizes], dtype=np.float64)
        self.table_p = w / w.sum()
        self.kind_p = opponent_probabilities(cfg.league)
        self.envs: dict[tuple[int, int], Any] = {}
        self.encoders: dict[int, Any] = {}
        self.snapshots: dict[int, nn.Module] = {}
        self.snapshot_p: dict[int, float] = {}
        self.book = SeatTrajectories()
        self.finished: list[FinishedGame] = []
        self.heuristic = make_heuristic(int(self.rng.integers(2**31)))
        self.random = RandomAgent(seed=int(self.rng.integers(2**31)))
        self._episodes = 0
        self.games = [self._new_game(slot) for slot in range(cfg.train.games_per_collector)]

    def set_snapshots(self, state_dicts: Mapping[int, dict], probabilities: Mapping[int, float]) -> None:
        """Add new snapshots (id -> state dict); new games draw from ``probabilities``' ids."""
        for sid, sd in state_dicts.items():
            net = ActorCritic(**network_kwargs(self.cfg))
            net.load_state_dict(sd)
            net.eval()
            self.snapshots[sid] = net
        # A snapshot that left the pool stays until the games it plays in are over; new games
        # draw only from the pool.
        playing = {game.snapshot for game in self.games}
        self.snapshots = {
            sid: net for sid, net in self.snapshots.items() if sid in probabilities or sid in playing
        }
        self.snapshot_p = dict(probabilities)

    def _new_game(self, slot: int) -> Game:
        n = int(self.table_sizes[int(self.rng.choice(len(self.table_sizes), p=self.table_p))])
        env = self.envs.get((slot, n))
        if env is None:
            env = self.envs[(slot, n)] = raw_env(num_players=n, **self.cfg.env.options)
            # One observation encoder per table size: its caches (bounded per encoder, keyed by
            # what a position is made of) then serve every game instead of one copy per game.
            env.encoder = self.encoders.setdefault(n, env.encoder)
        env.reset(seed=int(self.rng.integers(2**63 - 1)))
        self._episodes += 1
        kind = draw_game_kind(self.rng, self.cfg.league.share, self.kind_p, bool(self.snapshot_p))
        if kind is GameKind.SELF_PLAY:
            return Game(env, self._episodes, kind, tuple(range(n)), {})
        learner = int(self.rng.integers(n))
        snapshot = None
        if kind is GameKind.SNAPSHOT:
            snapshot = draw_snapshot(self.rng, self.snapshot_p)
            player: Any = snapshot
        else:
            player = self.heuristic if kind is GameKind.HEURISTIC else self.random
        frozen = {s: player for s in range(n) if s != learner}
        return Game(env, self._episodes, kind, (learner,), frozen, snapshot)

    def _step(self, slot: int, game: Game, action: int) -> None:
        """Apply ``action`` and hand every learning seat its reward; at the end, close the game."""
        env = game.env
        state = env.game_state
        before = state.score[:]
        env.step(action)
        game.decisions += 1
        reward = self.cfg.reward
        terminal = state.is_terminal()
        outcome = win_loss_returns(state.n, state.winners) if terminal else None
        for seat in game.learners:
            r = reward.vp * score_gain_reward(before, state.score, seat, reward.vp_relative)
            if outcome is not None:
                r += reward.win * outcome[seat]
            self.book.reward((self.rank, game.episode, seat), r)
            if terminal:
                self.book.end((self.rank, game.episode, seat))
        if terminal:
            self._record(game)
            self.games[slot] = self._new_game(slot)

    def _record(self, game: Game) -> None:
        from island_fortress_env.training.evaluate import final_ranks

        state = game.env.game_state
        figures = [game_figures(state, s) for s in game.learners]
        ahead = None
        if game.kind is not GameKind.SELF_PLAY:
            ranks = final_ranks(state)
            learner = game.learners[0]
            # pairwise: 1 per frozen seat finished behind the learner, 0.5 per tie
            ahead = float(
                np.mean(
                    [
                        1.0 if ranks[learner] < ranks[s] else 0.5 if ranks[learner] == ranks[s] else 0.0
                        for s in game.frozen
                    ]
                )
            )
        self.finished.append(
            FinishedGame(game.episode, state.n, game.kind, game.snapshot, game.decisions, figures, ahead)
        )

    def collect(self, net: nn.Module, decisions: int) -> tuple[Rollout, list[FinishedGame]]:
        """Play until at least ``decisions`` learner decisions are closed; return them with GAE,
        and the games finished meanwhile."""
        cfg = self.cfg
        net.eval()
        while self.book.num_finished < decisions:
            pending: list[int] = []
            frozen: dict[int, list[int]] = defaultdict(list)
            for slot in range(len(self.games)):
                while True:  # play the hand-written seats until a network must decide
                    game = self.games[slot]
                    env = game.env
                    seat = env.game_state.current_player()
                    player = game.frozen.get(seat)
                    if player is None:
                        pending.append(slot)
                        break
                    if isinstance(player, int):
                        frozen[player].append(slot)
                        break
                    o = env.observe(env.agent_selection)
                    self._step(slot, game, player.act(o["observation"], o["action_mask"], env.game_state))
            self._decide(net, pending, learn=True)
            for sid, slots in frozen.items():
                self._decide(self.snapshots[sid], slots, learn=False)
        rollout = self.book.take(cfg.ppo.gamma, cfg.ppo.gae_lambda)
        finished, self.finished = self.finished, []
        return rollout, finished

    def _decide(self, net: nn.Module, slots: list[int], learn: bool) -> None:
        if not slots:
            return
        obs_list, masks = [], []
        for slot in slots:
            env = self.games[slot].env
            o = env.observe(env.agent_selection)
            obs_list.append(o["observation"])
            masks.append(o["action_mask"].astype(bool))
        obs, mask = np.stack(obs_list), np.stack(masks)
        actions, logprobs, values = sample_actions(net, obs, mask, self.generator)
        for i, slot in enumerate(slots):
            game = self.games[slot]
            if learn:
                seat = game.env.game_state.current_player()
                self.book.act(
                    (self.rank, game.episode, seat),
                    obs[i],
                    mask[i],
                    int(actions[i]),
                    float(logprobs[i]),
                    float(values[i]),
                )
            self._step(slot, game, int(actions[i]))


def make_heuristic(seed: int) -> Any:
    from island_fortress_env.agents.heuristic import HeuristicAgent

    return HeuristicAgent(seed=seed)


# ============================================================== processes


def mp_context() -> Any:
    """Worker processes start from a clean interpreter (forkserver where there is one): never a
    fork of a process that already runs torch threads."""
    return mp.get_context("forkserver" if "forkserver" in mp.get_all_start_methods() else "spawn")


def starmap(func: Callable[..., Any], jobs: Sequence[tuple], processes: int) -> list[Any]:
    """``[func(*job) for job in jobs]``, on up to ``processes`` worker processes when that helps.

    The pool is closed and joined, not terminated: its workers exit on their own (no leaked
    semaphores at interpreter exit)."""
    if processes <= 1 or len(jobs) <= 1:
        return [func(*job) for job in jobs]
    with mp_context().Pool(min(processes, len(jobs))) as pool:
        results = pool.starmap(func, jobs, chunksize=1)
        pool.close()
        pool.join()
    return results


def split(games: int, processes: int) -> list[range]:
    """``range(games)`` cut into contiguous parts, one per process (the first ones a game longer
    when ``processes`` does not divide ``games``); empty parts are left out."""
    k = max(processes, 1)
    sizes = [games // k + (i < games % k) for i in range(k)]
    return [range(a, a + n) for a, n in zip(itertools.accumulate(sizes, initial=0), sizes, strict=False) if n]


@dataclass
class CollectJob:
    """What the main process sends a worker for one rollout."""

    weights: dict[str, torch.Tensor]  # the learner's
    new_snapshots: dict[int, dict[str, torch.Tensor]]  # snapshots the collector has not had yet
    snapshot_probabilities: dict[int, float]  # the league's draw of a snapshot for new games
    decisions: int  # closed decisions to collect


def _worker(cfg: NativeConfig, rank: int, pipe: Any) -> None:
    """A worker process: one collector, driven by the main process over ``pipe`` (a
    ``CollectJob`` in, a rollout and its finished games out; ``None`` ends it)."""
    torch.set_num_threads(1)
    collector = Collector(cfg, rank)
    net = ActorCritic(**network_kwargs(cfg))
    while True:
        job: CollectJob | None = pipe.recv()
        if job is None:
            return
        net.load_state_dict(job.weights)
        collector.set_snapshots(job.new_snapshots, job.snapshot_probabilities)
        pipe.send(collector.collect(net, job.decisions))


class Collectors:
    """The collectors of a run: the main process's own plus ``workers`` worker processes.

    ``start`` hands the current weights and the league to every collector, ``finish`` gathers
    their rollouts. Without ``pipelined`` the main process collects its share between the two
    (lockstep). With ``pipelined`` only the workers collect, and the main process runs the PPO
    update on rollout ``k`` while they collect rollout ``k + 1`` with the weights from before that
    update: both cores stay busy, and the data is one update old (its log-probabilities are those
    of the policy that acted, so PPO's ratio and clipping stay exact).
    """

    def __init__(self, cfg: NativeConfig) -> None:
        self.pipelined = cfg.train.pipelined
        self.local = None if self.pipelined else Collector(cfg, 0)
        self.pipes: list[Any] = []
        self.procs: list[Any] = []
        ctx = mp_context()
        for rank in range(1, cfg.train.workers + 1):
            parent, child = ctx.Pipe()
            proc = ctx.Process(target=_worker, args=(cfg, rank, child), daemon=True)
            proc.start()
            child.close()  # the worker holds it now: its death ends our recv() with EOFError
            self.pipes.append(parent)
            self.procs.append(proc)
        self.sent: set[int] = set()
        self.outstanding = False
        self._local_job: tuple[nn.Module, int] | None = None

    def start(self, net: nn.Module, decisions: int, league: League) -> None:
        """Every collector starts a rollout of its share of ``decisions`` with ``net``'s weights
        and the league's snapshots as they are now."""
        share = -(-decisions // (len(self.pipes) + (self.local is not None)))
        probabilities = league.probabilities()
        new = {sid: sd for sid, sd in league.state_dicts().items() if sid not in self.sent}
        self.sent |= set(new)
        weights = {k: v.detach().clone() for k, v in net.state_dict().items()}
        for pipe in self.pipes:
            pipe.send(CollectJob(weights, new, probabilities, share))
        if self.local is not None:
            self.local.set_snapshots(new, probabilities)
            self._local_job = (net, share)
        self.outstanding = True

    def finish(self) -> tuple[Rollout, list[FinishedGame]]:
        """The rollouts of every collector, joined in rank order, and the games they finished."""
        from island_fortress_env.training.ppo import Rollout

        parts = []
        if self.local is not None and self._local_job is not None:
            parts.append(self.local.collect(*self._local_job))
            self._local_job = None
        for rank, pipe in enumerate(self.pipes, start=1):
            try:
                parts.append(pipe.recv())
            except EOFError:
                raise RuntimeError(f"collector worker {rank} died (see its traceback above)") from None
        self.outstanding = False
        rollout = Rollout.concatenate([part[0] for part in parts])
        finished = [game for part in parts for game in part[1]]
        return rollout, finished

    def close(self) -> None:
        if self.outstanding and self.pipes:
            try:
                for pipe in self.pipes:
                    pipe.recv()
            except (EOFError, OSError):
                pass
        for pipe in self.pipes:
            with contextlib.suppress(BrokenPipeError, OSError):
                pipe.send(None)
        for proc in self.procs:
            proc.join(timeout=10)
            if proc.is_alive():
                proc.terminate()
