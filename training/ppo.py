"""Multi-agent self-play masked PPO for Island Fortress, the whole algorithm in one file.

    island-fortress train --config configs/default.yaml [section.key=value ...] [--resume CKPT]

In the spirit of CleanRL's ``ppo.py``, read top to bottom:

1. **Per-seat bookkeeping** (``SeatTrajectories``). One shared policy plays every learning seat
   of many games. Each learning seat of each game is its own trajectory: a decision's reward is
   everything that seat receives from that decision until the seat decides again (its own score
   changes on other seats' moves included), the zero-sum win/loss is added to its last decision,
   and the game's end closes every seat's trajectory whoever made the last move. GAE runs along
   each seat trajectory (``gae``); a trajectory cut by the end of a rollout is bootstrapped with
   the value of its next decision, which joins the next rollout.
2. **Collection** (``Collector``). A collector holds ``games_per_collector`` raw AEC envs
   (``island_fortress_v0.raw_env``) of mixed table sizes and advances them all through
   ``observe``/``step``: every tick, the pending decisions of all learning seats go through
   **one** forward pass, actions are sampled from the masked logits (illegal actions have
   probability 0), and frozen seats (league opponents) are played by their own agents.
   The main process is one collector; ``train.workers`` more run in worker processes.
3. **League**. A ``league.share`` of new games seats one learner against frozen players of one
   kind: a snapshot of the learner (prioritised fictitious self-play, see ``League``), the
   heuristic or the random player. Every seat of the other games learns.
4. **Update** (``ppo_update``): clipped PPO on the rollout, advantages normalised per minibatch,
   entropy bonus over the legal actions only, global gradient clipping, optional annealed
   learning rate and early stop on approximate KL. With ``train.update_dtype`` bfloat16 the
   torso's forward pass runs under autocast (the heads, hence the log-probabilities, in float32).
5. **Evaluation** (``greedy_evaluation``): the greedy policy against the heuristic and the random
   player at 2, 3 and 4 players, and an OpenSkill rating against fixed anchors, every
   ``eval.every`` decisions. With ``eval.keep_best`` the weights of the best periodic evaluation
   (mean win rate against the heuristic over the table sizes) are kept as ``best.zip``, as SB3's
   ``EvalCallback`` keeps ``best_model``; the final evaluation plays the kept policy on other deals.

Everything is logged to TensorBoard under ``runs/<run_name>``; native checkpoints (weights +
metadata + optimizer state) go to ``checkpoints/<run_name>/``.
"""

from __future__ import annotations

import contextlib
import itertools
import multiprocessing as mp
import time
from collections import defaultdict
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np
import torch
from torch import nn

from island_fortress_env.agents.base import RandomAgent
from island_fortress_env.agents.network import ActorCritic
from island_fortress_env.engine.actions import NUM_ACTIONS
from island_fortress_env.engine.scoring import win_loss_returns
from island_fortress_env.env.aec import raw_env
from island_fortress_env.env.observation import OBS_SIZE
from island_fortress_env.training.config import NativeConfig, run_metadata
from island_fortress_env.training.selfplay import game_figures
from island_fortress_env.training.shaping import score_gain_reward

TABLE_SIZES = (2, 3, 4)
OPPONENT_KINDS = ("snapshot", "heuristic", "random")
SELF_PLAY = "self"  # the kind of a game in which every seat learns


# ============================================================== 1. per-seat bookkeeping


@dataclass
class _Decision:
    obs: np.ndarray
    mask: np.ndarray
    action: int
    logprob: float
    value: float
    reward: float = 0.0
    next_value: float = 0.0
    done: bool = False


@dataclass
class _Trajectory:
    finished: list[_Decision] = field(default_factory=list)  # not yet handed to an update
    pending: _Decision | None = None  # the last decision; its reward may still grow


class SeatTrajectories:
    """The trajectories of every learning seat, keyed by any hashable (e.g. (game, episode, seat)).

    ``act`` records a decision (and closes the seat's previous one, bootstrapped with this
    decision's value); ``reward`` adds to the seat's latest decision (a reward before the seat's
    first decision has no decision to go to and is dropped); ``end`` closes the seat's last
    decision as terminal. ``take`` hands out every closed decision with its GAE advantage.
    """

    def __init__(self) -> None:
        self._seats: dict[Any, _Trajectory] = {}
        self.num_finished = 0

    def act(
        self, key: Any, obs: np.ndarray, mask: np.ndarray, action: int, logprob: float, value: float
    ) -> None:
        traj = self._seats.setdefault(key, _Trajectory())
        if traj.pending is not None:
            traj.pending.next_value = value
            traj.finished.append(traj.pending)
            self.num_finished += 1
        traj.pending = _Decision(obs, mask, action, logprob, value)

    def reward(self, key: Any, reward: float) -> None:
        traj = self._seats.get(key)
        if traj is not None and traj.pending is not None:
            traj.pending.reward += reward

    def end(self, key: Any) -> None:
        traj = self._seats.get(key)
        if traj is None:
            return
        if traj.pending is not None:
            traj.pending.done = True
            traj.pending.next_value = 0.0
            traj.finished.append(traj.pending)
            self.num_finished += 1
            traj.pending = None

    def take(self, gamma: float, gae_lambda: float) -> dict[str, np.ndarray]:
        """Every closed decision (seat by seat, in order) with ``advantages`` and ``returns``;
        they are forgotten here, pending decisions stay."""
        rows: list[_Decision] = []
        advantages: list[np.ndarray] = []
        for key in list(self._seats):
            traj = self._seats[key]
            if traj.finished:
                rows.extend(traj.finished)
                advantages.append(gae(traj.finished, gamma, gae_lambda))
                traj.finished = []
            if traj.pending is None:
                del self._seats[key]  # the seat's game is over
        self.num_finished = 0
        adv = np.concatenate(advantages) if advantages else np.zeros(0, np.float32)
        values = np.array([d.value for d in rows], dtype=np.float32)
        return {
            "obs": np.stack([d.obs for d in rows]) if rows else np.zeros((0, OBS_SIZE), np.float32),
            "masks": np.stack([d.mask for d in rows]) if rows else np.zeros((0, NUM_ACTIONS), bool),
            "actions": np.array([d.action for d in rows], dtype=np.int64),
            "logprobs": np.array([d.logprob for d in rows], dtype=np.float32),
            "values": values,
            "advantages": adv.astype(np.float32),
            "returns": (adv + values).astype(np.float32),
        }


def gae(segment: Sequence[_Decision], gamma: float, gae_lambda: float) -> np.ndarray:
    """Generalised advantage estimates along one seat's consecutive closed decisions.

    The last one's successor (if it is not terminal) is the seat's pending decision, outside the
    segment: its advantage is the one-step TD error, bootstrapped with that decision's value.
    """
    out = np.zeros(len(segment), dtype=np.float32)
    running = 0.0
    for i in range(len(segment) - 1, -1, -1):
        d = segment[i]
        not_done = 0.0 if d.done else 1.0
        delta = d.reward + gamma * d.next_value * not_done - d.value
        running = delta + gamma * gae_lambda * not_done * (running if i + 1 < len(segment) else 0.0)
        out[i] = running
    return out


# ============================================================== 2. acting


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


class NetAgent:
    """An in-memory policy behind the agent interface (greedy by default), for evaluation."""

    def __init__(self, net: nn.Module, greedy: bool = True, seed: int = 0, name: str = "policy") -> None:
        self.net, self.greedy, self.name = net, greedy, name
        self.generator = torch.Generator().manual_seed(seed)

    def reset(self, seed: int | None = None) -> None:
        if seed is not None:
            self.generator.manual_seed(seed)

    def act(self, observation: np.ndarray, action_mask: np.ndarray, state: Any = None) -> int:
        actions, _, _ = sample_actions(
            self.net,
            observation.reshape(1, -1),
            action_mask.astype(bool).reshape(1, -1),
            self.generator,
            self.greedy,
        )
        return int(actions[0])


# ============================================================== 3. collection


@dataclass
class _Game:
    """One table of a collector: its env and who plays each seat."""

    env: Any
    episode: int
    kind: str  # SELF_PLAY or an OPPONENT_KINDS entry
    learners: tuple[int, ...]
    frozen: dict[int, Any]  # seat -> agent (heuristic / random) or snapshot id (int)
    snapshot: int | None = None
    decisions: int = 0


def make_heuristic(seed: int) -> Any:
    from island_fortress_env.agents.heuristic import HeuristicAgent

    return HeuristicAgent(seed=seed)


class Collector:
    """Plays ``num_games`` games at once and turns every learning seat's decisions into PPO data."""

    def __init__(self, cfg: NativeConfig, rank: int) -> None:
        self.cfg = cfg
        self.rank = rank
        seed = np.random.SeedSequence([cfg.seed, rank])
        self.rng = np.random.default_rng(seed)
        self.generator = torch.Generator().manual_seed(int(seed.generate_state(1)[0]))
        weights = cfg.tables.weights()
        self.table_sizes = [n for n in TABLE_SIZES if weights[n] > 0]
        w = np.array([weights[n] for n in self.table_sizes], dtype=np.float64)
        self.table_p = w / w.sum()
        lg = cfg.league
        kw = np.array([lg.snapshot, lg.heuristic, lg.random], dtype=np.float64)
        self.kind_p = kw / kw.sum() if kw.sum() > 0 else kw
        self.envs: dict[tuple[int, int], Any] = {}
        self.encoders: dict[int, Any] = {}
        self.snapshots: dict[int, nn.Module] = {}
        self.snapshot_p: dict[int, float] = {}
        self.book = SeatTrajectories()
        self.records: list[dict[str, Any]] = []
        self.heuristic = make_heuristic(int(self.rng.integers(2**31)))
        self.random = RandomAgent(seed=int(self.rng.integers(2**31)))
        self._episodes = 0
        self.games = [self._new_game(slot) for slot in range(cfg.train.games_per_collector)]

    # -- league
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

    def _draw_kind(self) -> str:
        if self.rng.random() >= self.cfg.league.share:
            return SELF_PLAY
        kind = OPPONENT_KINDS[int(self.rng.choice(len(OPPONENT_KINDS), p=self.kind_p))]
        if kind == "snapshot" and not self.snapshot_p:
            return SELF_PLAY  # no snapshot yet: the learner plays itself
        return kind

    def _new_game(self, slot: int) -> _Game:
        n = int(self.table_sizes[int(self.rng.choice(len(self.table_sizes), p=self.table_p))])
        env = self.envs.get((slot, n))
        if env is None:
            env = self.envs[(slot, n)] = raw_env(num_players=n, **self.cfg.env.options)
            # One observation encoder per table size: its caches (bounded per encoder, keyed by
            # what a position is made of) then serve every game instead of one copy per game.
            env.encoder = self.encoders.setdefault(n, env.encoder)
        env.reset(seed=int(self.rng.integers(2**63 - 1)))
        self._episodes += 1
        kind = self._draw_kind()
        if kind == SELF_PLAY:
            return _Game(env, self._episodes, kind, tuple(range(n)), {})
        learner = int(self.rng.integers(n))
        snapshot = None
        if kind == "snapshot":
            ids = list(self.snapshot_p)
            p = np.array([self.snapshot_p[i] for i in ids])
            snapshot = ids[int(self.rng.choice(len(ids), p=p / p.sum()))]
            player: Any = snapshot
        else:
            player = self.heuristic if kind == "heuristic" else self.random
        frozen = {s: player for s in range(n) if s != learner}
        return _Game(env, self._episodes, kind, (learner,), frozen, snapshot)

    # -- playing
    def _step(self, slot: int, game: _Game, action: int) -> None:
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

    def _record(self, game: _Game) -> None:
        from island_fortress_env.training.evaluate import final_ranks

        state = game.env.game_state
        ranks = final_ranks(state)
        rec: dict[str, Any] = {
            "episode": game.episode,
            "players": state.n,
            "kind": game.kind,
            "snapshot": game.snapshot,
            "length": game.decisions,
        }
        figures = [game_figures(state, s) for s in game.learners]
        rec["figures"] = figures
        if game.kind != SELF_PLAY:
            learner = game.learners[0]
            # pairwise: 1 per frozen seat finished behind the learner, 0.5 per tie
            rec["ahead"] = float(
                np.mean(
                    [
                        1.0 if ranks[learner] < ranks[s] else 0.5 if ranks[learner] == ranks[s] else 0.0
                        for s in game.frozen
                    ]
                )
            )
        self.records.append(rec)

    def collect(self, net: nn.Module, decisions: int) -> tuple[dict[str, np.ndarray], list[dict[str, Any]]]:
        """Play until at least ``decisions`` learner decisions are closed; return them with GAE."""
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
        batch = self.book.take(cfg.ppo.gamma, cfg.ppo.gae_lambda)
        records, self.records = self.records, []
        return batch, records

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


def _mp_context() -> Any:
    """Worker processes start from a clean interpreter (forkserver where there is one): never a
    fork of a process that already runs torch threads."""
    return mp.get_context("forkserver" if "forkserver" in mp.get_all_start_methods() else "spawn")


def _starmap(func: Callable[..., Any], jobs: Sequence[tuple], processes: int) -> list[Any]:
    """``[func(*job) for job in jobs]``, on up to ``processes`` worker processes when that helps.

    The pool is closed and joined, not terminated: its workers exit on their own (no leaked
    semaphores at interpreter exit)."""
    if processes <= 1 or len(jobs) <= 1:
        return [func(*job) for job in jobs]
    with _mp_context().Pool(min(processes, len(jobs))) as pool:
        results = pool.starmap(func, jobs, chunksize=1)
        pool.close()
        pool.join()
    return results


def _split(games: int, processes: int) -> list[range]:
    """``range(games)`` cut into contiguous parts, one per process (the first ones a game longer
    when ``processes`` does not divide ``games``); empty parts are left out."""
    k = max(processes, 1)
    sizes = [games // k + (i < games % k) for i in range(k)]
    return [range(a, a + n) for a, n in zip(itertools.accumulate(sizes, initial=0), sizes, strict=False) if n]


def _worker(cfg: NativeConfig, rank: int, pipe: Any) -> None:
    """A worker process: one collector, driven by the main process over ``pipe``."""
    torch.set_num_threads(1)
    collector = Collector(cfg, rank)
    net = ActorCritic(**network_kwargs(cfg))
    while True:
        message = pipe.recv()
        if message is None:
            return
        state_dict, snapshots, probabilities, decisions = message
        net.load_state_dict(state_dict)
        collector.set_snapshots(snapshots, probabilities)
        pipe.send(collector.collect(net, decisions))


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
        ctx = _mp_context()
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
        share = -(-decisions // (len(self.pipes) + (self.local is not None)))
        probabilities = league.probabilities()
        new = {sid: sd for sid, sd in league.state_dicts().items() if sid not in self.sent}
        self.sent |= set(new)
        state_dict = {k: v.detach().clone() for k, v in net.state_dict().items()}
        for pipe in self.pipes:
            pipe.send((state_dict, new, probabilities, share))
        if self.local is not None:
            self.local.set_snapshots(new, probabilities)
            self._local_job = (net, share)
        self.outstanding = True

    def finish(self) -> tuple[dict[str, np.ndarray], list[dict[str, Any]]]:
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
        batch = {k: np.concatenate([p[0][k] for p in parts]) for k in parts[0][0]}
        records = [r for p in parts for r in p[1]]
        return batch, records

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


# ============================================================== league


class League:
    """Frozen snapshots of the learner and how often each still beats it.

    Sampling rule (prioritised fictitious self-play): snapshot ``i`` is drawn with weight
    ``(1 - p_i) ** priority_power + floor``, where ``p_i = (ahead_i + 1) / (games_i + 2)`` is the
    learner's smoothed rate of finishing ahead of that snapshot's seats (a tie counts half).
    The newest ``pool_size`` snapshots are kept.
    """

    def __init__(self, pool_size: int, priority_power: float, floor: float) -> None:
        self.pool_size, self.power, self.floor = pool_size, priority_power, floor
        self.pool: dict[int, dict[str, Any]] = {}  # id -> {"state_dict", "step", "ahead", "games"}
        self._next_id = 0

    def add(self, net: nn.Module, step: int) -> int:
        sid = self._next_id
        self._next_id += 1
        sd = {k: v.detach().clone() for k, v in net.state_dict().items()}
        self.pool[sid] = {"state_dict": sd, "step": step, "ahead": 0.0, "games": 0}
        while len(self.pool) > self.pool_size:
            del self.pool[min(self.pool)]
        return sid

    def record(self, sid: int, ahead: float) -> None:
        if sid in self.pool:
            self.pool[sid]["ahead"] += ahead
            self.pool[sid]["games"] += 1

    def win_rate(self, sid: int) -> float:
        entry = self.pool[sid]
        return (entry["ahead"] + 1.0) / (entry["games"] + 2.0)

    def probabilities(self) -> dict[int, float]:
        w = {sid: (1.0 - self.win_rate(sid)) ** self.power + self.floor for sid in self.pool}
        total = sum(w.values())
        return {sid: v / total for sid, v in w.items()} if total > 0 else {}

    def state_dicts(self) -> dict[int, dict]:
        return {sid: e["state_dict"] for sid, e in self.pool.items()}


# ============================================================== 4. the PPO update


def bfloat16_is_native() -> bool:
    """Whether this CPU computes bfloat16 in hardware (AVX512-BF16 or AMX)."""
    checks = ("_is_avx512_bf16_supported", "_is_amx_tile_supported")
    return any(getattr(torch.cpu, check, lambda: False)() for check in checks)


def update_dtype(cfg: NativeConfig) -> str:
    """``train.update_dtype`` with ``auto`` resolved for this CPU: the dtype of the update's torso."""
    name = cfg.train.update_dtype
    if name == "auto":
        return "bfloat16" if bfloat16_is_native() else "float32"
    return name


def ppo_update(
    net: ActorCritic,
    optimizer: torch.optim.Optimizer,
    batch: Mapping[str, np.ndarray],
    cfg: NativeConfig,
    rng: np.random.Generator,
) -> dict[str, float]:
    p = cfg.ppo
    net.train()
    b = {k: torch.from_numpy(v) for k, v in batch.items()}
    n = len(b["actions"])
    bf16 = update_dtype(cfg) == "bfloat16"  # autocast: the torso in bfloat16, the heads in float32
    stats: dict[str, list[float]] = defaultdict(list)
    for _epoch in range(p.n_epochs):
        order = rng.permutation(n)
        for start in range(0, n - p.minibatch_size + 1, p.minibatch_size):
            idx = torch.from_numpy(order[start : start + p.minibatch_size])
            mask = b["masks"][idx]
            with torch.autocast("cpu", dtype=torch.bfloat16, enabled=bf16):
                logits, value = net(b["obs"][idx], mask)
            logp_all = torch.log_softmax(logits, dim=-1)
            logp = logp_all.gather(1, b["actions"][idx].unsqueeze(-1)).squeeze(-1)
            log_ratio = logp - b["logprobs"][idx]
            ratio = log_ratio.exp()
            with torch.no_grad():
                approx_kl = ((ratio - 1) - log_ratio).mean()  # the k3 estimator
                stats["clip_fraction"].append(float(((ratio - 1).abs() > p.clip_coef).float().mean()))
            adv = b["advantages"][idx]
            adv = (adv - adv.mean()) / (adv.std() + 1e-8)
            pg_loss = torch.max(-adv * ratio, -adv * ratio.clamp(1 - p.clip_coef, 1 + p.clip_coef)).mean()
            v_loss = 0.5 * ((value - b["returns"][idx]) ** 2).mean()
            probs = logp_all.exp()
            entropy = -(probs * torch.where(mask, logp_all, torch.zeros_like(logp_all))).sum(-1).mean()
            loss = pg_loss - p.ent_coef * entropy + p.vf_coef * v_loss
            optimizer.zero_grad()
            loss.backward()
            nn.utils.clip_grad_norm_(net.parameters(), p.max_grad_norm)
            optimizer.step()
            stats["policy_loss"].append(pg_loss.item())
            stats["value_loss"].append(v_loss.item())
            stats["entropy"].append(entropy.item())
            stats["approx_kl"].append(float(approx_kl))
        if p.target_kl > 0 and np.mean(stats["approx_kl"][-max(1, n // p.minibatch_size) :]) > p.target_kl:
            break
    out = {k: float(np.mean(v)) for k, v in stats.items()}
    values, returns = batch["values"], batch["returns"]
    var = float(np.var(returns))
    out["explained_variance"] = float("nan") if var == 0 else 1.0 - float(np.var(returns - values)) / var
    return out


# ============================================================== 5. evaluation


ANCHORS = {"random": 15.0, "heuristic": 25.0}  # fixed OpenSkill mu of the anchor players
PERIODIC_EVAL_SEED, FINAL_EVAL_SEED = 77_777, 88_888  # offsets from the run's seed: different deals
BEST = "best.zip"


def selection_score(result: Mapping[str, float]) -> float:
    """What ``eval.keep_best`` maximises: the mean greedy win rate against the heuristic over the
    table sizes evaluated (-1 without heuristic games)."""
    rates = [v for k, v in result.items() if k.startswith("win_rate_vs_heuristic_")]
    return float(np.mean(rates)) if rates else -1.0


def previous_best_score(path: Path) -> float:
    """The selection score recorded in a run's best.zip (-1 when there is none), for ``--resume``."""
    from island_fortress_env.agents.checkpoint import read_metadata

    if not path.is_file():
        return -1.0
    return float(read_metadata(path).get("selection", {}).get("score", -1.0))


def play_evaluation_table(
    state_dict: Mapping[str, torch.Tensor],
    network: Mapping[str, Any],
    players: int,
    kind: str,
    games: range,
    seed: int,
    env_options: Mapping[str, Any],
) -> tuple[float, list[list[int]]]:
    """The greedy policy in seat rotation against ``players - 1`` agents of ``kind``, games number
    ``games`` of the table: its win count (shared wins split) and every game's final ranks in agent
    order (policy first). Game ``g`` is the same whichever part of the table it is played in."""
    from island_fortress_env import island_fortress_v0
    from island_fortress_env.players import make_agent
    from island_fortress_env.training.evaluate import agent_seed, final_ranks, play_game

    torch.set_num_threads(1)
    net = ActorCritic(**network)
    net.load_state_dict(state_dict)
    net.eval()
    policy = NetAgent(net, greedy=True)
    env = island_fortress_v0.env(num_players=players, **dict(env_options))
    wins, ranks = 0.0, []
    for g in games:
        agents = [policy] + [make_agent(kind, seed=agent_seed(seed, g, i)) for i in range(1, players)]
        seat_of = [(i + g) % players for i in range(players)]
        state = play_game(env, agents, seat_of, seed + 1000 * players + g)
        if seat_of[0] in state.winners:
            wins += 1.0 / len(state.winners)
        by_seat = final_ranks(state)
        ranks.append([by_seat[s] for s in seat_of])
    return wins, ranks


def greedy_evaluation(
    net: nn.Module,
    network: Mapping[str, Any],
    games: int,
    seed: int,
    opponents: Iterable[str],
    env_options: Mapping[str, Any],
    processes: int = 1,
    tables: Iterable[int] = TABLE_SIZES,
) -> dict[str, float]:
    """The greedy policy against ``n - 1`` copies of each opponent kind at each table size
    (seats rotated; each table's games split over ``processes``, the same figures for any number),
    plus its OpenSkill rating (Plackett-Luce, ranked by final position) against anchors whose
    ratings stay fixed (``ANCHORS``)."""
    from openskill.models import PlackettLuce

    state_dict = {k: v.detach().clone() for k, v in net.state_dict().items()}
    tables_played = [(n, kind) for n in tables for kind in opponents]
    parts = _split(games, processes)
    jobs = [
        (state_dict, dict(network), n, kind, part, seed, dict(env_options))
        for n, kind in tables_played
        for part in parts
    ]
    results = _starmap(play_evaluation_table, jobs, processes)
    model = PlackettLuce()
    rating = model.rating(name="policy")
    anchors = {k: model.rating(mu=mu, sigma=1.0, name=k) for k, mu in ANCHORS.items()}
    out: dict[str, float] = {}
    for t, (n, kind) in enumerate(tables_played):
        played = results[t * len(parts) : (t + 1) * len(parts)]
        out[f"win_rate_vs_{kind}_{n}p"] = sum(wins for wins, _ in played) / max(games, 1)
        for game_ranks in (ranks for _, part_ranks in played for ranks in part_ranks):
            teams = [[rating]] + [[anchors[kind]] for _ in range(n - 1)]
            rating = model.rate(teams, ranks=[float(r) for r in game_ranks])[0][0]
    out["openskill_mu"] = rating.mu
    out["openskill_ordinal"] = rating.ordinal()
    return out


# ============================================================== the run


def checkpoint_metadata(cfg: NativeConfig, decisions: int, updates: int, elapsed: float) -> dict[str, Any]:
    return run_metadata(
        cfg,
        cfg.env.options,
        ("numpy",),
        trainer="native-ppo",
        num_timesteps=decisions,  # decisions learned from
        updates=updates,
        update_dtype=update_dtype(cfg),
        elapsed_seconds=round(elapsed, 1),
    )


def network_kwargs(cfg: NativeConfig) -> dict[str, Any]:
    kwargs = {
        "obs_size": OBS_SIZE,
        "num_actions": NUM_ACTIONS,
        "cnn_channels": cfg.policy.cnn_channels,
        "hidden": cfg.policy.hidden,
        "head_activation": cfg.policy.head_activation,
    }
    if cfg.policy.value_hidden:  # the value head's own torso
        kwargs["value_cnn_channels"] = cfg.policy.value_cnn_channels
        kwargs["value_hidden"] = cfg.policy.value_hidden
    return kwargs


def load_same_network(path: str, network: Mapping[str, Any]) -> tuple[ActorCritic, dict[str, Any]]:
    """A native checkpoint and its metadata, if its whole network (a value torso included) is
    ``network``, in ``network_kwargs``' terms; any difference is a ``CheckpointError`` naming both.
    Checkpoints from before ``head_activation`` existed have relu heads."""
    from island_fortress_env.agents.checkpoint import CheckpointError, load_policy

    net, meta = load_policy(path)
    saved = {"head_activation": "relu", **meta["network"]}
    if saved != dict(network):
        raise CheckpointError(
            f"checkpoint {path!r}: network {saved} does not match the config's {dict(network)}"
        )
    return net, meta


# SB3 MaskablePPO policy parameter -> ActorCritic parameter (prefix renames; policy.py's layout)
SB3_TO_NATIVE = {
    "features_extractor.torso.": "torso.",
    "mlp_extractor.policy_net.0.": "policy_head.0.",
    "action_net.": "policy_head.2.",
    "mlp_extractor.value_net.0.": "value_head.0.",
    "value_net.": "value_head.2.",
}


def initial_weights(path: str, network: Mapping[str, Any]) -> dict[str, torch.Tensor]:
    """The weights of checkpoint ``path`` for an ``ActorCritic(**network)``: a native checkpoint's
    as they are, an SB3 one's renamed (``SB3_TO_NATIVE``; its heads are tanh). A checkpoint of
    another architecture is refused with a ``CheckpointError``."""
    from island_fortress_env.agents.checkpoint import (
        NATIVE_FORMAT,
        CheckpointError,
        load_model,
        read_metadata,
    )

    if read_metadata(path).get("format") == NATIVE_FORMAT:
        return load_same_network(path, network)[0].state_dict()
    model, _meta = load_model(path)
    out: dict[str, torch.Tensor] = {}
    for key, value in model.policy.state_dict().items():
        for old, new in SB3_TO_NATIVE.items():
            if key.startswith(old):
                out[new + key[len(old) :]] = value
    target = ActorCritic(**network).state_dict()
    shapes_ok = set(out) == set(target) and all(out[k].shape == target[k].shape for k in target)
    if not shapes_ok or network["head_activation"] != "tanh":
        raise CheckpointError(
            f"checkpoint {path!r}: its SB3 policy does not convert to ActorCritic({dict(network)}); "
            "it needs the same cnn_channels and hidden, and policy.head_activation=tanh"
        )
    return out


def warm_start(net: ActorCritic, cfg: NativeConfig, writer: Any) -> dict[str, Any]:
    """Behaviour cloning of heuristic games at every table size in use (``training/pretrain.py``)."""
    from island_fortress_env.training.pretrain import collect_demonstrations, imitate

    pre = cfg.pretrain
    weights = cfg.tables.weights()
    total = sum(weights.values())
    processes = 1 + cfg.train.workers
    reward = (cfg.reward.win, cfg.reward.vp, cfg.reward.vp_relative)
    jobs = []  # (players, options, games, seed): each table size's games split over the processes
    for n in TABLE_SIZES:
        games = round(pre.games * weights[n] / total)
        for part, chunk in enumerate(_split(games, processes)):
            seed = cfg.seed * 100_003 + 50_000 + 1000 * n + 100 * part
            jobs.append((n, dict(cfg.env.options), len(chunk), seed, "heuristic", *reward))
    print(
        f"imitation: playing {sum(j[2] for j in jobs)} heuristic games "
        f"at tables {sorted({j[0] for j in jobs})} "
        f"in {processes} process(es)",
        flush=True,
    )
    parts = _starmap(collect_demonstrations, jobs, processes)
    data = {k: np.concatenate([p[k] for p in parts]) for k in parts[0]}
    return imitate(
        net,
        data,
        pre.epochs,
        pre.batch_size,
        pre.learning_rate,
        seed=cfg.seed,
        progress=cfg.logging.progress_bar,
        writer=writer,
    )


def _log_records(writer: Any, records: list[dict[str, Any]], step: int, league: League) -> None:
    """The game figures of the games finished in a rollout (the learner's seats)."""
    if not records:
        return
    by_kind: dict[str, list[float]] = defaultdict(list)
    figures: list[dict[str, Any]] = []
    for r in records:
        figures.extend(r["figures"])
        if r["kind"] != SELF_PLAY:
            by_kind[f"{r['kind']}_{r['players']}p"].append(r["figures"][0]["win"])
        if r["snapshot"] is not None:
            league.record(r["snapshot"], r["ahead"])
    for key, wins in sorted(by_kind.items()):
        writer.add_scalar(f"game/win_rate_vs_{key}", float(np.mean(wins)), step)
    for key in ("score", "rounds", "jade_spent", "favors_played", "blocks_built"):
        writer.add_scalar(f"game/{key}", float(np.mean([f[key] for f in figures])), step)
    for comp in figures[0]["components"]:
        writer.add_scalar(
            f"game/score_{comp}", float(np.mean([f["components"][comp] for f in figures])), step
        )
    writer.add_scalar("game/length", float(np.mean([r["length"] for r in records])), step)
    writer.add_scalar("game/games", len(records), step)


def train_native(cfg: NativeConfig, resume: str | None = None) -> Path:
    """Run the training described by ``cfg``; returns the final checkpoint's path."""
    from torch.utils.tensorboard import SummaryWriter
    from tqdm import tqdm

    from island_fortress_env.agents.checkpoint import load_policy, load_training_state, save_policy

    t = cfg.train
    torch.manual_seed(cfg.seed)
    torch.set_num_threads(t.torch_threads)
    rng = np.random.default_rng(np.random.SeedSequence([cfg.seed, 999]))
    net = ActorCritic(**network_kwargs(cfg))
    optimizer = torch.optim.Adam(net.parameters(), lr=cfg.ppo.learning_rate, eps=1e-5)
    decisions = updates = 0
    elapsed_before = 0.0
    if resume:
        loaded, meta = load_same_network(resume, network_kwargs(cfg))
        net.load_state_dict(loaded.state_dict())
        decisions = int(meta.get("num_timesteps", 0))
        updates = int(meta.get("updates", 0))
        elapsed_before = float(meta.get("elapsed_seconds", 0.0))
        state = load_training_state(resume)
        if state is not None:
            optimizer.load_state_dict(state["optimizer"])
            rng = np.random.default_rng(np.random.SeedSequence([cfg.seed, 999, updates]))
    ckpt_dir = Path(cfg.logging.checkpoints_dir) / cfg.run_name
    writer = SummaryWriter(str(Path(cfg.logging.runs_dir) / cfg.run_name))
    best_score = previous_best_score(ckpt_dir / BEST) if resume and cfg.eval.keep_best else -1.0
    last_eval = -1  # decisions at the last periodic evaluation
    start = time.monotonic()

    def elapsed() -> float:
        return elapsed_before + time.monotonic() - start

    def save(name: str, **extra: Any) -> Path:
        meta = checkpoint_metadata(cfg, decisions, updates, elapsed())
        meta["training_seconds"] = round(loop_seconds, 2)  # collecting + updating, since this process started
        return save_policy(
            ckpt_dir / name,
            net,
            network_kwargs(cfg),
            {**meta, **extra},
            training_state={"optimizer": optimizer.state_dict()},
        )

    def evaluation(policy: nn.Module, games: int, seed_offset: int) -> dict[str, float]:
        return greedy_evaluation(
            policy,
            network_kwargs(cfg),
            games,
            cfg.seed + seed_offset,
            cfg.eval.opponents,
            cfg.env.options,
            processes=1 + t.workers,
        )

    def evaluate_now() -> dict[str, float]:
        """The periodic greedy evaluation of the current weights, logged; with ``eval.keep_best``
        the weights are kept as best.zip when they beat every earlier evaluation."""
        nonlocal best_score, last_eval
        result = evaluation(net, cfg.eval.games, PERIODIC_EVAL_SEED)
        last_eval = decisions
        for key, value in result.items():
            writer.add_scalar(f"eval/{key}", value, decisions)
            if key.startswith("win_rate_vs_heuristic"):
                writer.add_scalar(f"eval_time/{key}", value, int(elapsed()))
        score = selection_score(result)
        if cfg.eval.keep_best and score > best_score:
            best_score = score
            selection = {"decisions": decisions, "games": cfg.eval.games, "score": score}
            save(BEST, selection=selection)
        return result

    if not resume and cfg.policy.init_from:
        net.load_state_dict(initial_weights(cfg.policy.init_from, network_kwargs(cfg)))
    if not resume and cfg.pretrain.games > 0:
        report = warm_start(net, cfg, writer)
        writer.add_scalar("pretrain/final_accuracy", report["epochs"][-1]["accuracy"], 0)

    league = League(cfg.league.pool_size, cfg.league.priority_power, cfg.league.floor)
    league.add(net, decisions)
    collectors = Collectors(cfg)
    next_snapshot = decisions + cfg.league.snapshot_every
    next_checkpoint = decisions + t.checkpoint_every
    next_eval = decisions + cfg.eval.every if cfg.eval.every else None
    total_updates = max(1, -(-t.total_decisions // t.rollout_decisions))
    bar = tqdm(
        total=t.total_decisions,
        initial=min(decisions, t.total_decisions),
        unit="dec",
        dynamic_ncols=True,
        desc="training",
        disable=not cfg.logging.progress_bar,
    )
    last_line = time.monotonic()
    loop_seconds = 0.0
    try:
        while decisions < t.total_decisions:
            if t.max_minutes and elapsed() - elapsed_before >= 60 * t.max_minutes:
                bar.write(f"train.max_minutes={t.max_minutes} reached: stopping at {decisions} decisions")
                break
            if cfg.ppo.anneal_lr:  # to 0 at total_decisions (or the wall-clock cap if nearer)
                done = updates / total_updates
                if cfg.ppo.anneal_over == "minutes":
                    done = max(done, (elapsed() - elapsed_before) / (60 * t.max_minutes))
                frac = max(0.0, 1.0 - done) ** cfg.ppo.anneal_power
                for group in optimizer.param_groups:
                    group["lr"] = cfg.ppo.learning_rate * frac
            tick = time.monotonic()
            if not collectors.outstanding:
                collectors.start(net, t.rollout_decisions, league)
            batch, records = collectors.finish()
            if t.pipelined:  # the next rollout is collected while this one is learned from
                collectors.start(net, t.rollout_decisions, league)
            collect_s = time.monotonic() - tick
            stats = ppo_update(net, optimizer, batch, cfg, rng)
            update_s = time.monotonic() - tick - collect_s
            loop_seconds += time.monotonic() - tick
            updates += 1
            learned = len(batch["actions"])
            decisions += learned
            bar.update(min(learned, t.total_decisions - bar.n))  # the bar ends full, not past it
            for key, value in stats.items():
                writer.add_scalar(f"losses/{key}", value, decisions)
            writer.add_scalar("charts/learning_rate", optimizer.param_groups[0]["lr"], decisions)
            writer.add_scalar("charts/decisions_per_second", learned / (time.monotonic() - tick), decisions)
            writer.add_scalar("charts/collect_seconds", collect_s, decisions)
            writer.add_scalar("charts/update_seconds", update_s, decisions)
            writer.add_scalar("charts/league_pool", len(league.pool), decisions)
            _log_records(writer, records, decisions, league)
            bar.set_postfix_str(
                f"kl {stats['approx_kl']:.3f} ent {stats['entropy']:.2f} "
                f"ev {stats['explained_variance']:.2f}",
                refresh=False,
            )
            if not cfg.logging.progress_bar and time.monotonic() - last_line >= 60:
                last_line = time.monotonic()
                print(
                    f"{decisions} decisions, {elapsed() / 60:.1f} min, "
                    f"{len(batch['actions']) / (last_line - tick):.0f} "
                    f"decisions/s, entropy {stats['entropy']:.2f}",
                    flush=True,
                )
            if decisions >= next_snapshot:
                league.add(net, decisions)
                next_snapshot += cfg.league.snapshot_every
            if decisions >= next_checkpoint:
                save(f"step_{decisions}.zip")
                save("latest.zip")
                next_checkpoint += t.checkpoint_every
            # A final evaluation (other deals, more games) covers the last weights, so they get no
            # periodic one here; with keep_best, the one after the loop lets them compete for best.zip.
            final_follows = decisions >= t.total_decisions and cfg.eval.final_games > 0
            if next_eval is not None and decisions >= next_eval and cfg.eval.games > 0 and not final_follows:
                result = evaluate_now()
                bar.write(
                    f"{decisions} decisions, {elapsed() / 60:.1f} min: "
                    + ", ".join(f"{k} {v:.2f}" for k, v in result.items())
                )
                next_eval += cfg.eval.every
    except BaseException:  # a crash or Ctrl-C: keep what was learned, resumable with --resume
        save("latest.zip")
        raise
    finally:
        bar.close()
        collectors.close()
    final = save("final.zip")
    save("latest.zip")
    kept, kept_net = final, net
    if cfg.eval.keep_best:
        if last_eval != decisions:  # the last weights compete too (and so best.zip exists)
            evaluate_now()
        kept = ckpt_dir / BEST
        kept_net, meta = load_policy(kept)
        chosen = meta["selection"]
        print(
            f"\nkept {kept}: the weights after {chosen['decisions']} decisions, mean greedy win rate "
            f"{chosen['score']:.3f} against the heuristic over the table sizes in the periodic "
            f"evaluations ({chosen['games']} games per table); the last weights are in {final}"
        )
    if cfg.eval.final_games > 0:
        # Other deals than the periodic evaluations': the kept policy was not chosen on these.
        result = evaluation(kept_net, cfg.eval.final_games, FINAL_EVAL_SEED)
        for key, value in result.items():
            writer.add_scalar(f"final_eval/{key}", value, decisions)
        games = cfg.eval.final_games
        print(f"\nfinal greedy evaluation of {kept.name} ({games} games per table, seats rotated):")
        for key, value in result.items():
            print(f"  {key:<28} {value:.3f}")
    writer.close()
    return kept
