"""Search learning's games (``training/search_learning.py``): one iteration's games, every learning
seat's move the batched Gumbel search's over the current network, and what is learned from them.

``SearchSelfPlay`` is made once a run: the learner (``players.search.SearchSeats`` over
``Evaluator.of_network(net)``, the run's live network, so every iteration searches with the
weights of the last update), the batch of C++ core games, the frozen players of league games.
``play(iteration)`` plays ``search_learning.games_per_iteration`` games to their end through
``players.runner`` (``train.games_per_collector`` at once; every game each learning seat is to
move in searched together, their leaves valued by one network call a simulation step), each
game's table size drawn by the ``tables`` weights and its seats by the league as the PPO
collectors draw them (``league.share`` of the games seat one learner against frozen players).

For each decision of a learning seat it records the observation, the mask, the search's improved
policy (Gumbel AlphaZero's target: softmax(logits + sigma(completed Q)) over the legal actions,
zeros elsewhere; a decision with one legal action has that action's 1), the move played (the
sequential halving's survivor: the games are the search's own play), the seat, and once its game
has ended the return that followed: the reward the PPO trainer credits (``training/shaping.py``:
``reward.vp`` x the score gained / 50 from this decision to the seat's next one, ``reward.win`` x
the zero-sum win/loss added to its last) discounted by ``ppo.gamma`` per decision of the seat, the
value PPO's value head learns (its GAE return) in the same units.

Every draw is named (``players.seeds``): iteration ``k``'s tables, seats and deals from the run
seed's ``search-games`` stream at ``k``, the learning seats' trees from ``search-trees`` at
``(k, game, seat)``, the frozen seats' from ``search-opponents``; so an iteration depends on the
seed, ``k`` and the weights alone, and a resumed run plays the games an unbroken one would.
"""

from __future__ import annotations

import time
from dataclasses import dataclass, fields

import numpy as np
import torch
from torch import nn

from island_fortress_env import vector
from island_fortress_env.agents.network import ActorCritic
from island_fortress_env.core.search import SearchResult
from island_fortress_env.engine.actions import NUM_ACTIONS
from island_fortress_env.engine.scoring import win_loss_returns
from island_fortress_env.engine.tables import MAX_PLAYERS
from island_fortress_env.env.observation import OBS_SIZE
from island_fortress_env.players import make_agent
from island_fortress_env.players.runner import Finished, GameRunner, Games, Seating, SeatPolicy
from island_fortress_env.players.search import Evaluator, SearchSeats
from island_fortress_env.players.seat_policies import BatchSeats, NetworkPoolSeats, NetworkSeats, seat_policy
from island_fortress_env.players.seeds import Stream, generator, stream_seed
from island_fortress_env.players.specs import SAMPLED
from island_fortress_env.training.collect import FinishedGame
from island_fortress_env.training.config import TABLE_SIZES, NativeConfig
from island_fortress_env.training.figures import result_figures
from island_fortress_env.training.league import (
    GameKind,
    League,
    draw_game_kind,
    draw_snapshot,
    fixed_opponent_kind,
    opponent_probabilities,
)
from island_fortress_env.training.shaping import gain_rewards
from island_fortress_env.training.weights import network_kwargs

DEAL_BOUND = 2**63  # a game's deal seed is drawn below this


@dataclass
class SearchDecisions:
    """The learning seats' decisions of an iteration, one row each, in the order they were made."""

    obs: np.ndarray  # float32 (n, OBS_SIZE)
    masks: np.ndarray  # bool (n, NUM_ACTIONS): the legal actions
    targets: np.ndarray  # float32 (n, NUM_ACTIONS): the search's improved policy, 0 outside the mask
    actions: np.ndarray  # int64: the move played, the sequential halving's survivor
    returns: np.ndarray  # float32: the seat's discounted return from this decision (module doc)
    games: np.ndarray  # int64: the game's number in its iteration
    seats: np.ndarray  # int64: the seat that decided
    players: np.ndarray  # int64: the game's table size

    def __len__(self) -> int:
        return len(self.actions)

    @classmethod
    def empty(cls) -> SearchDecisions:
        return cls(
            obs=np.zeros((0, OBS_SIZE), np.float32),
            masks=np.zeros((0, NUM_ACTIONS), np.bool_),
            targets=np.zeros((0, NUM_ACTIONS), np.float32),
            actions=np.zeros(0, np.int64),
            returns=np.zeros(0, np.float32),
            games=np.zeros(0, np.int64),
            seats=np.zeros(0, np.int64),
            players=np.zeros(0, np.int64),
        )

    def choices(self) -> np.ndarray:
        """bool[n]: the decisions with more than one legal action (the others teach no policy)."""
        return self.masks.sum(axis=1) > 1


@dataclass
class IterationGames:
    """An iteration's games: the decisions learned from, the finished games' records (as the PPO
    trainer logs them) and what the searches cost."""

    decisions: SearchDecisions
    finished: list[FinishedGame]
    network_rows: int  # rows the searches valued, every simulation step's
    network_calls: int
    seconds: float


@dataclass(frozen=True)
class SearchGame:
    """One game of an iteration: its number, who plays each seat, and (a snapshot game) which."""

    number: int
    players: int
    kind: GameKind
    learners: tuple[int, ...]
    snapshot: int | None = None

    def frozen(self) -> list[int]:
        return [s for s in range(self.players) if s not in self.learners]


@dataclass
class _Searched:
    """The decisions of one search call (``SearchSeats.on_search``), before their returns."""

    obs: np.ndarray
    masks: np.ndarray
    targets: np.ndarray
    actions: np.ndarray
    games: np.ndarray
    seats: np.ndarray
    players: np.ndarray
    scores: np.ndarray  # int64 (k, MAX_PLAYERS): every seat's score when the seat decided


@dataclass(frozen=True)
class _Final:
    """A finished game's every seat's final score and zero-sum win/loss."""

    scores: np.ndarray  # int64 (MAX_PLAYERS,)
    outcome: np.ndarray  # float64 (MAX_PLAYERS,)


class SearchSelfPlay:
    """A run's games for search learning (module doc): ``play(iteration)`` each iteration."""

    def __init__(self, cfg: NativeConfig, net: nn.Module, league: League) -> None:
        s, t = cfg.search_learning, cfg.train
        self.cfg, self.league = cfg, league
        self.learner = SearchSeats(
            simulations=s.simulations, name="learner", gumbel=True, evaluator=Evaluator.of_network(net),
            considered=s.considered, gumbel_scale=s.gumbel_scale, threads=t.core_threads,
            on_search=self._searched,
        )  # fmt: skip
        self.net = net
        self.heuristic, self.random = BatchSeats("heuristic"), BatchSeats("random")
        self.agent: SeatPolicy | None = None  # league.opponent's search player, if it is one
        if cfg.league.opponent and fixed_opponent_kind(cfg.league.opponent) is GameKind.AGENT:
            self.agent = seat_policy(cfg.league.opponent, make_agent)
        self.generator = torch.Generator()  # the snapshots' sampling, re-seeded every iteration
        self.snapshots = NetworkPoolSeats(self._snapshot_of, self.generator)
        weights = cfg.tables.weights()
        self.table_sizes = [n for n in TABLE_SIZES if weights[n] > 0]
        w = np.array([weights[n] for n in self.table_sizes], dtype=np.float64)
        self.table_p = w / w.sum()
        self.kind_p = opponent_probabilities(cfg.league)
        slots = min(s.games_per_iteration, t.games_per_collector)
        self.batch = vector.make(slots, threads=t.core_threads, backend="core", **cfg.env.options)
        self._runner: GameRunner | None = None
        self._searched_rows: list[_Searched] = []
        self._scores = np.zeros((slots, MAX_PLAYERS), np.int64)  # each slot's game's scores so far
        self._rows = self._calls = 0

    # ---------------------------------------------------------------- seating

    def _snapshot_of(self, slot: int) -> int | None:
        assert self._runner is not None
        return self._runner.current(slot).tag.snapshot  # type: ignore[union-attr]

    def _sync_snapshots(self) -> None:
        """The league's pool as the snapshot seats' members (each in its play mode)."""
        members: dict[int, NetworkSeats] = {}
        for sid, snapshot in self.league.pool.items():
            seats = self.snapshots.members.get(sid)
            if seats is None:
                net = ActorCritic(**network_kwargs(self.cfg))
                net.load_state_dict(snapshot.state_dict)
                net.eval()
                mode = self.league.modes.get(sid, SAMPLED)
                seats = NetworkSeats(net, greedy=mode.greedy, generator=self.generator,
                                     name=f"snapshot {sid}", threshold=mode.threshold)  # fmt: skip
            members[sid] = seats
        self.snapshots.members = members

    def _seating(self, iteration: int, number: int, rng: np.random.Generator) -> Seating:
        """Game ``number`` of ``iteration``: its table size, its seats (every seat the learner's, or
        one learner against frozen players of one kind: ``league.py``'s draws) and its deal."""
        players = int(self.table_sizes[int(rng.choice(len(self.table_sizes), p=self.table_p))])
        snapshot_p = self.league.probabilities()
        kind = draw_game_kind(rng, self.cfg.league.share, self.kind_p, bool(snapshot_p))
        snapshot = None
        if kind is GameKind.SELF_PLAY:
            learners = tuple(range(players))
        else:
            learners = (int(rng.integers(players)),)
            snapshot = draw_snapshot(rng, snapshot_p) if kind is GameKind.SNAPSHOT else None
        frozen = {
            GameKind.HEURISTIC: self.heuristic,
            GameKind.RANDOM: self.random,
            GameKind.AGENT: self.agent,
            GameKind.SNAPSHOT: self.snapshots,
        }.get(kind)
        policies = tuple(self.learner if s in learners else frozen for s in range(players))
        seed = self.cfg.seed
        seeds = tuple(
            stream_seed(seed, Stream.SEARCH_TREES if s in learners else Stream.SEARCH_OPPONENTS,
                        iteration, number, s)
            for s in range(players)
        )  # fmt: skip
        game = SearchGame(number, players, kind, learners, snapshot)
        deal = int(rng.integers(DEAL_BOUND))
        return Seating(players, deal, policies, seeds, tag=game)  # type: ignore[arg-type]

    # ---------------------------------------------------------------- playing

    def _searched(
        self, games: Games, observations: np.ndarray, masks: np.ndarray, result: SearchResult
    ) -> None:
        """``SearchSeats.on_search``: keep the searched decisions with every seat's score now."""
        assert self._runner is not None
        slots = games.slots
        tags = [self._runner.current(int(slot)).tag for slot in slots.tolist()]  # type: ignore[union-attr]
        self._searched_rows.append(
            _Searched(
                obs=np.array(observations, np.float32),
                masks=np.array(masks, np.bool_),
                targets=np.array(result.policy, np.float32),
                actions=np.array(result.actions, np.int64),
                games=np.array([tag.number for tag in tags], np.int64),
                seats=np.array(games.seats, np.int64),
                players=np.array([tag.players for tag in tags], np.int64),
                scores=self._scores[slots].copy(),
            )
        )
        self._rows += self.learner.search.rows
        self._calls += self.learner.search.steps

    def play(self, iteration: int) -> IterationGames:
        """Iteration ``iteration``'s games, played to their end with the network as it is now."""
        start = time.monotonic()
        cfg = self.cfg
        rng = generator(cfg.seed, Stream.SEARCH_GAMES, iteration)
        self.generator.manual_seed(stream_seed(cfg.seed, Stream.SEARCH_OPPONENTS, iteration))
        self._sync_snapshots()
        self.net.eval()
        dealt = iter(range(cfg.search_learning.games_per_iteration))

        def next_seating(_slot: int) -> Seating | None:
            number = next(dealt, None)
            return None if number is None else self._seating(iteration, number, rng)

        self._searched_rows, self._rows, self._calls = [], 0, 0
        self._scores[:] = 0
        finals: dict[int, _Final] = {}
        records: list[FinishedGame] = []
        self._runner = runner = GameRunner(self.batch, next_seating)
        while runner.playing:
            step = runner.step()
            self._scores += step.score_gains[:, :MAX_PLAYERS]
            for game in step.finished:
                finals[game.seating.tag.number] = _final(game)
                records.append(_record(game.seating.tag, game))
                self._scores[game.slot] = 0
        self._runner = None
        decisions = _with_returns(self._searched_rows, finals, cfg)
        self._searched_rows = []
        records.sort(key=lambda record: record.episode)
        return IterationGames(decisions, records, self._rows, self._calls, time.monotonic() - start)


def _final(game: Finished) -> _Final:
    final = game.final
    scores = np.zeros(MAX_PLAYERS, np.int64)
    scores[: final.players] = final.score
    winners = [seat for seat in range(final.players) if final.win[seat] > 0]
    outcome = np.zeros(MAX_PLAYERS, np.float64)
    outcome[: final.players] = win_loss_returns(final.players, winners)
    return _Final(scores, outcome)


def _record(game: SearchGame, finished: Finished) -> FinishedGame:
    """The finished game's figures as the PPO trainer logs them (``ppo.log_games``); in a league
    game the learner's pairwise result against the frozen seats (1 ahead, 0.5 tied, 0 behind)."""
    final = finished.final
    ahead = None
    if game.kind is not GameKind.SELF_PLAY:
        rank, me = final.rank, game.learners[0]
        ahead = float(np.mean([1.0 if rank[me] < rank[s] else 0.5 if rank[me] == rank[s] else 0.0
                               for s in game.frozen()]))  # fmt: skip
    figures = result_figures(final, game.learners)
    return FinishedGame(
        game.number, game.players, game.kind, game.snapshot, int(final.length), figures, ahead
    )


def _with_returns(parts: list[_Searched], finals: dict[int, _Final], cfg: NativeConfig) -> SearchDecisions:
    """The decisions in the order they were made, each with the return that followed it (module
    doc): a seat's reward for a decision is what it scored until its next decision (its last:
    until the end, plus the win/loss), discounted by ``ppo.gamma`` per decision of the seat."""
    if not parts:
        return SearchDecisions.empty()
    joined = {f.name: np.concatenate([getattr(p, f.name) for p in parts]) for f in fields(_Searched)}
    n = len(joined["actions"])
    games, seats, scores = joined["games"], joined["seats"], joined["scores"]
    # each row's next decision of the same seat of the same game (-1: its last)
    order = np.lexsort((np.arange(n), seats, games))
    following = np.full(n, -1, np.int64)
    same = (games[order][1:] == games[order][:-1]) & (seats[order][1:] == seats[order][:-1])
    following[order[:-1][same]] = order[1:][same]
    last = following < 0
    final_scores = np.stack([finals[int(g)].scores for g in games])
    outcome = np.array([finals[int(g)].outcome[int(s)] for g, s in zip(games, seats, strict=True)])
    after = np.where(last[:, None], final_scores, scores[np.maximum(following, 0)])
    reward = cfg.reward
    shaped = gain_rewards(after - scores, joined["players"], reward.vp_relative)[np.arange(n), seats]
    rewards = reward.vp * shaped + np.where(last, reward.win * outcome, 0.0)
    returns = np.zeros(n, np.float64)
    gamma = cfg.ppo.gamma
    for row in order[::-1].tolist():  # a seat's later decisions come first in this order
        nxt = int(following[row])
        returns[row] = rewards[row] + (gamma * returns[nxt] if nxt >= 0 else 0.0)
    kept = {
        name: joined[name] for name in ("obs", "masks", "targets", "actions", "games", "seats", "players")
    }
    return SearchDecisions(**kept, returns=returns.astype(np.float32))
