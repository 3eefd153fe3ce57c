"""``island-fortress calibrate``: the best-response learner of ``island-fortress exploit``, run on a
small OpenSpiel game against a target whose exact best response OpenSpiel computes, to see how far
below the truth the learner lands (Timbers et al., *Approximate exploitability*, 2020, section 5).

    island-fortress calibrate --game leduc_poker --target uniform --decisions 20000 100000 --seeds 3
    island-fortress calibrate --game kuhn_poker --target cfr:10 --json
    island-fortress calibrate --game "goofspiel(num_cards=4,imp_info=True,points_order=descending)"

**The learner** is the exploit runs' own: masked PPO by ``training/ppo.py``'s ``ppo_update`` (the
clipped loss, the entropy bonus over the legal actions, the value loss, per-minibatch advantage
normalisation, gradient clipping, the early stop on approximate KL), the per-seat trajectories and
GAE of ``training/trajectories.py`` (``SeatTrajectories``), the actions drawn by the collectors'
``sample_actions``, and ``ActorCritic``'s dense torso and heads, with the settings of a best
response from scratch: ``research/exploit.py``'s ``SETTINGS`` and ``LEARNING_RATE["scratch"]``
over ``NativeConfig``'s defaults (3 epochs, minibatches of 1024 of rollouts of 8192 decisions,
entropy 0.003, target KL 0.03, gamma 0.997, lambda 0.95, the learning rate 2.5e-4 annealed to 0
over the budget, the update's dtype ``auto``). Every ``section.key=value`` given overrides them, as
for ``exploit``. What the small game makes different (``DIFFERENCES``):

* The network reads the game's information-state tensor (``information_state_tensor``) and has one
  logit per distinct action; ``SeatTrajectories`` stores rows of Island Fortress's widths, so the
  rows are zero-padded and ``SmallGameNetwork`` reads the first columns (the padded actions are
  never legal). The convolutional torso (``policy.cnn_channels``) needs the wall image: refused.
* The reward is the learner's return at the end of each game divided by the game's largest
  absolute return, in [-1, 1] like the win/loss of an Island Fortress game; no shaping.
* The games: ``train.games_per_collector`` x ``train.workers`` (96) at once in this process, where
  the exploit runs play them in worker processes; with ``train.pipelined`` each rollout is played
  by the weights from before the previous update, as pipelined workers play it.
* The learner sits in a seat drawn for each game; the target, a ``TabularPolicy``
  (``research/calibrate_games.py``), plays the other, sampled from its table.

**The measure.** For each budget of ``--decisions`` (the learner's decisions learned from) and each
seed ``--seed`` .. ``--seed+K-1``, one run from new weights. Its network is then read on every
information state and becomes two tabular policies: **greedy** (the most probable legal action, as
the exploit runs' final games play) and **sampled** (its softmax over the legal actions). Each is
valued exactly in each seat against the target (``expected_game_score.policy_value``: no sampling
noise); their mean over the two seats is the exploitability that best response shows, the figure
``exploit`` reports in win-rate terms. Beside OpenSpiel's exact exploitability (``exploitability``,
the mean of the two seats' exact best-response values) each run gives its **gap** (exact minus
learned: >= 0, a best response is best) and its **recovered** share (learned / exact: 0 is no
better than the target's own play, which a zero-sum game's two seats value at 0 in all; 1 is the
best response). Each budget gives the mean and a 95% t-interval over the seeds, beside the same
figures of each seed's initial weights, untrained (``start``: where the learner begins, about
uniform play, which can be worth less than the target's own play).

Random draws are named streams of each run's seed (``players.seeds``): the initial weights
(``weights``), the minibatches (``minibatches``) and the games' seats, chance outcomes and both
players' moves (``calibration-games``); the same seed gives the same figures.
"""

from __future__ import annotations

import copy
import math
import statistics
import time
from collections import deque
from collections.abc import Callable, Sequence
from dataclasses import asdict, dataclass
from typing import Any

import numpy as np
import torch
from torch.nn import functional

from island_fortress_env.agents.network import ActorCritic, torch_threads
from island_fortress_env.engine.actions import NUM_ACTIONS
from island_fortress_env.env.observation import OBS_SIZE
from island_fortress_env.players.seat_policies import sample_actions
from island_fortress_env.players.seeds import Stream, generator, stream_seed
from island_fortress_env.research.calibrate_games import (
    DEFAULT_BUDGETS,
    DEFAULT_GAME,
    DEFAULT_SEEDS,
    DEFAULT_TARGET,
    CalibrationError,
    ExactFigures,
    InformationStates,
    SmallGame,
    exact_figures,
    information_states,
    load_small_game,
    parse_target,
    policy_from,
    probabilities_of,
    seat_values,
    target_policy,
)
from island_fortress_env.research.exploit import LEARNING_RATE, SETTINGS
from island_fortress_env.training.config import NativeConfig, load_config
from island_fortress_env.training.ppo import ppo_update, update_dtype
from island_fortress_env.training.regularise import Regulariser
from island_fortress_env.training.trajectories import Rollout, SeatTrajectories
from island_fortress_env.training.weights import network_kwargs

RECENT_ROLLOUTS = 5  # the training return reported: over the games of the last rollouts

DIFFERENCES = (
    "observations: the game's information-state tensor, rows zero-padded to the trainer's widths",
    "network: ActorCritic's dense torso and heads, one input per tensor entry, one logit per action",
    "reward: the learner's return at the end / the game's largest absolute return, no shaping",
    "games: games_per_collector x workers at once in one process, pipelining kept (one update stale)",
    "seats: the learner in a seat drawn per game, the target's tabular policy sampled in the other",
)


def calibration_config(seed: int, decisions: int, overrides: Sequence[str] = ()) -> NativeConfig:
    """The trainer's settings of one calibration run: an exploit run's from scratch
    (``SETTINGS``, ``LEARNING_RATE["scratch"]``), its seed and budget, then ``overrides``. A bad
    override raises ``TrainConfigError``; one this learner does not take, ``CalibrationError``."""
    items = [
        *SETTINGS,
        f"ppo.learning_rate={LEARNING_RATE['scratch']}",
        f"seed={seed}",
        f"train.total_decisions={decisions}",
        "train.max_minutes=0",
        "ppo.anneal_over=decisions",
        "logging.progress_bar=false",
        *overrides,
    ]
    cfg: NativeConfig = load_config(None, items, schema=NativeConfig)
    check_config(cfg)
    return cfg


def check_config(cfg: NativeConfig) -> None:
    """The settings a small game's learner cannot take: a ``CalibrationError`` naming the key."""
    refused = {
        "policy.cnn_channels": (cfg.policy.cnn_channels, 0, "a small game has no wall image"),
        "policy.value_cnn_channels": (cfg.policy.value_cnn_channels, 0, "a small game has no wall image"),
        "policy.init_from": (cfg.policy.init_from, "", "a calibration run starts from new weights"),
        "pretrain.games": (cfg.pretrain.games, 0, "a small game has no teacher to imitate"),
        "train.algorithm": (cfg.train.algorithm, "ppo", "the learner calibrated is PPO"),
        "train.device": (cfg.train.device, "cpu", "a small game's update runs on the CPU"),
        "train.max_minutes": (cfg.train.max_minutes, 0.0, "the budget is --decisions"),
    }
    for key, (value, wanted, why) in refused.items():
        if value != wanted:
            raise CalibrationError(f"{key}={value!r}: calibrate takes only {wanted!r} ({why})")


class SmallGameNetwork(ActorCritic):
    """``ActorCritic`` over a small game's ``features`` tensor entries and ``actions`` actions,
    reading rows padded to the trainer's widths: the first ``features`` columns of the
    observation, the first ``actions`` of the mask; the padded actions' logits are the minimum
    (never legal, probability 0)."""

    def __init__(self, features: int, actions: int, **kwargs: Any) -> None:
        super().__init__(obs_size=features, num_actions=actions, **kwargs)
        self.features, self.actions = features, actions

    def forward(
        self, obs: torch.Tensor, mask: torch.Tensor | None = None
    ) -> tuple[torch.Tensor, torch.Tensor]:
        small_mask = None if mask is None else mask[:, : self.actions]
        logits, value = super().forward(obs[:, : self.features], small_mask)
        width = NUM_ACTIONS if mask is None else mask.shape[1]
        padded = functional.pad(logits, (0, width - self.actions), value=torch.finfo(logits.dtype).min)
        return padded, value


def new_network(small: SmallGame, cfg: NativeConfig) -> SmallGameNetwork:
    """The run's network, its initial weights drawn from the ``weights`` stream of its seed (torch's
    global generator is left as it was)."""
    kwargs = {k: v for k, v in network_kwargs(cfg).items() if k not in ("obs_size", "num_actions")}
    with torch.random.fork_rng(devices=[]):
        torch.manual_seed(stream_seed(cfg.seed, Stream.WEIGHTS))
        return SmallGameNetwork(small.obs_size, small.num_actions, **kwargs)


class TargetTable:
    """The target's moves by information state: its legal actions and their cumulative weights."""

    def __init__(self, small: SmallGame, target: Any, states: InformationStates) -> None:
        rows = probabilities_of(small, target)
        self.moves: dict[str, tuple[np.ndarray, np.ndarray]] = {}
        for key, row, mask in zip(states.keys, rows, states.masks, strict=True):
            legal = np.flatnonzero(mask)
            self.moves[key] = (legal, np.cumsum(row[legal]))


def draw(cumulative: np.ndarray, rng: np.random.Generator) -> int:
    """The index drawn by cumulative weights (the first whose running sum passes the draw)."""
    return int(np.searchsorted(cumulative, rng.random() * cumulative[-1], side="right"))


class SmallGameCollector:
    """``games`` games of the small game at once: the learner in one seat of each (drawn), the
    target in the other. Every learner decision goes to ``SeatTrajectories`` (seat id: the game's
    slot), its reward at the game's end; ``rng`` draws the seats, the chance outcomes and the
    target's moves, ``torch_generator`` the learner's moves."""

    def __init__(
        self,
        small: SmallGame,
        target: TargetTable,
        games: int,
        rng: np.random.Generator,
        torch_generator: torch.Generator,
    ) -> None:
        self.small, self.target, self.rng, self.torch_generator = small, target, rng, torch_generator
        self.book = SeatTrajectories()
        self.returns: list[float] = []  # the learner's return of each game finished, game units
        self.states: list[Any] = [None] * games
        self.seats = np.zeros(games, np.int64)
        for slot in range(games):
            self._deal(slot)

    def _deal(self, slot: int) -> None:
        self.states[slot] = self.small.game.new_initial_state()
        self.seats[slot] = self.rng.integers(2)
        self._advance(slot)

    def _advance(self, slot: int) -> None:
        """Play ``slot``'s game on to the learner's next decision: chance and the target move; a
        game that ends closes the learner's trajectory and the next game is dealt."""
        state, seat, rng = self.states[slot], int(self.seats[slot]), self.rng
        while not state.is_terminal() and (state.is_chance_node() or state.current_player() != seat):
            if state.is_chance_node():
                outcomes = state.chance_outcomes()
                pick = draw(np.cumsum([p for _, p in outcomes]), rng)
                state.apply_action(outcomes[pick][0])
            else:
                legal, cumulative = self.target.moves[state.information_state_string()]
                state.apply_action(int(legal[draw(cumulative, rng)]))
        if state.is_terminal():
            result = float(state.returns()[seat])
            slots = np.array([slot])
            self.book.reward_many(slots, np.array([result / self.small.utility_scale]))
            self.book.end_many(slots)
            self.returns.append(result)
            self._deal(slot)

    def _tick(self, net: torch.nn.Module) -> None:
        """Every game's learner decision, in one forward pass; then each game on to the next."""
        count = len(self.states)
        obs = np.zeros((count, OBS_SIZE), np.float32)
        masks = np.zeros((count, NUM_ACTIONS), np.bool_)
        for slot, state in enumerate(self.states):
            obs[slot, : self.small.obs_size] = state.information_state_tensor()
            masks[slot, state.legal_actions()] = True
        actions, logp, values = sample_actions(net, obs, masks, self.torch_generator)
        self.book.act_many(np.arange(count), obs, masks, actions, logp, values)
        for slot, action in enumerate(actions.tolist()):
            self.states[slot].apply_action(action)
            self._advance(slot)

    def collect(
        self, net: torch.nn.Module, decisions: int, gamma: float, lam: float
    ) -> tuple[Rollout, list[float]]:
        """Play until at least ``decisions`` learner decisions are closed; those, with GAE, and the
        returns of the games finished meanwhile."""
        net.eval()
        while self.book.num_finished < decisions:
            self._tick(net)
        returns, self.returns = self.returns, []
        return self.book.take(gamma, lam), returns


@dataclass(frozen=True)
class Trained:
    """A calibration run's network and what its training did."""

    net: SmallGameNetwork
    decisions: int  # learned from
    updates: int
    seconds: float
    training_return: float | None  # the learner's mean return over the last rollouts' games (sampled)


def train_best_response(small: SmallGame, target: TargetTable, cfg: NativeConfig) -> Trained:
    """Train a best response to ``target`` on ``small`` as ``train_native`` trains an exploiter:
    the learning rate annealed per update, ``ppo_update`` on each rollout, each rollout played by
    the weights before the previous update when ``train.pipelined``."""
    t, p = cfg.train, cfg.ppo
    tick = time.monotonic()
    with torch_threads(t.torch_threads):
        net = new_network(small, cfg)
        optimizer = torch.optim.Adam(net.parameters(), lr=p.learning_rate, eps=1e-5, fused=True)
        acting = copy.deepcopy(net)  # the weights the games are played by
        regulariser = Regulariser.for_run(cfg, net, 0, update_dtype(cfg) == "bfloat16")
        minibatches = generator(cfg.seed, Stream.MINIBATCHES, 0)
        seed = stream_seed(cfg.seed, Stream.CALIBRATION_GAMES)
        collector = SmallGameCollector(
            small,
            target,
            t.games_per_collector * max(1, t.workers),
            generator(cfg.seed, Stream.CALIBRATION_GAMES),
            torch.Generator().manual_seed(seed),
        )
        total_updates = max(1, -(-t.total_decisions // t.rollout_decisions))
        decisions = updates = 0
        recent: deque[list[float]] = deque(maxlen=RECENT_ROLLOUTS)
        while decisions < t.total_decisions:
            if p.anneal_lr:
                for group in optimizer.param_groups:
                    group["lr"] = p.learning_rate * max(0.0, 1.0 - updates / total_updates) ** p.anneal_power
            rollout, returns = collector.collect(acting, t.rollout_decisions, p.gamma, p.gae_lambda)
            if t.pipelined:  # the next rollout is played while this one updates: by these weights
                acting.load_state_dict(net.state_dict())
            ppo_update(net, optimizer, rollout, cfg, minibatches, regulariser)
            if not t.pipelined:
                acting.load_state_dict(net.state_dict())
            updates += 1
            decisions += len(rollout)
            if regulariser is not None:
                regulariser.after_update(net, decisions)
            recent.append(returns)
    games = [r for rollout_returns in recent for r in rollout_returns]
    mean = float(np.mean(games)) if games else None
    return Trained(net, decisions, updates, time.monotonic() - tick, mean)


def learned_rows(net: torch.nn.Module, states: InformationStates) -> tuple[np.ndarray, np.ndarray]:
    """The network read on every information state: (greedy, sampled) rows, states x actions,
    legal-only and summing to 1 (greedy: all on the most probable legal action)."""
    net.eval()
    with torch.no_grad():
        logits, _ = net(torch.from_numpy(states.obs), torch.from_numpy(states.masks))
    width = states.masks.shape[1]
    probs = torch.softmax(logits[:, :width].double(), dim=-1).numpy() * states.masks
    sampled = probs / probs.sum(axis=1, keepdims=True)
    greedy = np.zeros_like(sampled)
    greedy[np.arange(len(sampled)), np.argmax(np.where(states.masks, sampled, -1.0), axis=1)] = 1.0
    return greedy, sampled


@dataclass(frozen=True)
class PlayFigures:
    """A learned policy's exact figures against the target, in one play mode (game units)."""

    seat_values: tuple[float, float]  # its exact value in each seat
    value: float  # their mean: the exploitability this best response shows
    gap: float  # the exact exploitability minus value (>= 0)
    recovered: float | None  # value / the exact exploitability (None: the target is unexploitable)


def play_figures(values: tuple[float, float], exact: ExactFigures) -> PlayFigures:
    value = (values[0] + values[1]) / 2
    share = value / exact.exploitability if exact.exploitability > 1e-12 else None
    return PlayFigures(values, value, exact.exploitability - value, share)


@dataclass(frozen=True)
class CalibrationRun:
    """One best response: its seed and budget, its training and its exact figures."""

    seed: int
    budget: int  # train.total_decisions (0: the initial weights, untrained)
    decisions: int  # learned from (the budget rounded up to whole rollouts)
    updates: int
    seconds: float
    training_return: float | None
    greedy: PlayFigures
    sampled: PlayFigures


@dataclass(frozen=True)
class Spread:
    """A figure over the seeds: the mean, a 95% t-interval (None for one seed), the extremes."""

    mean: float
    ci95: tuple[float, float] | None
    min: float
    max: float


def spread(values: Sequence[float]) -> Spread:
    mean = statistics.fmean(values)
    ci = None
    if len(values) >= 2:
        from scipy import stats as scipy_stats  # open-spiel's own dependency

        quantile = float(scipy_stats.t.ppf(0.975, len(values) - 1))
        half = quantile * statistics.stdev(values) / math.sqrt(len(values))
        ci = (mean - half, mean + half)
    return Spread(mean, ci, min(values), max(values))


@dataclass(frozen=True)
class BudgetSummary:
    """A budget's runs over the seeds, greedy and sampled: value, gap and recovered share."""

    budget: int
    runs: int
    greedy: dict[str, Spread | None]
    sampled: dict[str, Spread | None]


def summarise(budget: int, runs: Sequence[CalibrationRun]) -> BudgetSummary:
    def of(mode: str) -> dict[str, Spread | None]:
        figures = [getattr(run, mode) for run in runs]
        shares = [f.recovered for f in figures]
        return {
            "value": spread([f.value for f in figures]),
            "gap": spread([f.gap for f in figures]),
            "recovered": None if None in shares else spread(shares),
        }

    return BudgetSummary(budget, len(runs), of("greedy"), of("sampled"))


@dataclass(frozen=True)
class Calibration:
    """A whole calibration: the game, the target, the exact figures, every run and each budget's
    summary; ``settings`` the learner's (the PPO section and the rollout's)."""

    game: str
    target: str
    histories: int
    information_states: int
    exact: ExactFigures
    start: BudgetSummary  # the initial weights of each seed, untrained (budget 0)
    settings: dict[str, Any]
    differences: tuple[str, ...]
    seeds: list[int]
    runs: list[CalibrationRun]
    budgets: list[BudgetSummary]

    def to_json(self) -> dict[str, Any]:
        return asdict(self)


def learner_settings(cfg: NativeConfig) -> dict[str, Any]:
    """What the learner read of ``cfg``: the PPO section, the rollout, the network, the dtype."""
    t = cfg.train
    return {
        "ppo": cfg.ppo.model_dump(),
        "rollout_decisions": t.rollout_decisions,
        "games_at_once": t.games_per_collector * max(1, t.workers),
        "pipelined": t.pipelined,
        "update_dtype": update_dtype(cfg),
        "torch_threads": t.torch_threads,
        "network": {k: v for k, v in network_kwargs(cfg).items() if k not in ("obs_size", "num_actions")},
    }


def calibrate(
    game: str = DEFAULT_GAME,
    target: str = DEFAULT_TARGET,
    budgets: Sequence[int] = DEFAULT_BUDGETS,
    seed: int = 0,
    seeds: int = DEFAULT_SEEDS,
    overrides: Sequence[str] = (),
    report: Callable[[str], None] | None = print,
) -> Calibration:
    """The calibration of ``game`` against ``target`` at each of ``budgets`` with seeds
    ``seed`` .. ``seed + seeds - 1``; ``report`` gets a line as each run ends (None: silent)."""
    spec = parse_target(target)
    if not budgets:
        raise CalibrationError("give one budget or more (--decisions D [D ...])")
    for budget in budgets:
        calibration_config(seed, budget, overrides)  # every setting checked before any work
    small = load_small_game(game)
    policy = target_policy(small, spec)
    exact = exact_figures(small, policy)
    states = information_states(small)
    table = TargetTable(small, policy, states)

    def valued(rows: np.ndarray) -> PlayFigures:
        return play_figures(seat_values(small, policy_from(small, rows), policy), exact)

    def measured(net: torch.nn.Module) -> tuple[PlayFigures, PlayFigures]:
        greedy, sampled = learned_rows(net, states)
        return valued(greedy), valued(sampled)

    starts = []
    for run_seed in range(seed, seed + seeds):
        untrained = new_network(small, calibration_config(run_seed, budgets[0], overrides))
        starts.append(CalibrationRun(run_seed, 0, 0, 0, 0.0, None, *measured(untrained)))
    runs: list[CalibrationRun] = []
    summaries: list[BudgetSummary] = []
    for budget in budgets:
        done: list[CalibrationRun] = []
        for run_seed in range(seed, seed + seeds):
            cfg = calibration_config(run_seed, budget, overrides)
            trained = train_best_response(small, table, cfg)
            greedy, sampled = measured(trained.net)
            run = CalibrationRun(
                run_seed, budget, trained.decisions, trained.updates, round(trained.seconds, 2),
                trained.training_return, greedy, sampled,
            )  # fmt: skip
            done.append(run)
            if report is not None:
                report(run_line(run, exact))
        runs += done
        summaries.append(summarise(budget, done))
    return Calibration(
        game=small.spec,
        target=spec.label,
        histories=small.histories,
        information_states=len(states.keys),
        exact=exact,
        start=summarise(0, starts),
        settings=learner_settings(calibration_config(seed, budgets[0], overrides)),
        differences=DIFFERENCES,
        seeds=list(range(seed, seed + seeds)),
        runs=runs,
        budgets=summaries,
    )


def _share(share: float | None) -> str:
    return "-" if share is None else f"{100 * share:.1f}%"


def run_line(run: CalibrationRun, exact: ExactFigures) -> str:
    g, s = run.greedy, run.sampled
    return (
        f"{run.budget:,} decisions, seed {run.seed}: greedy {g.value:.4f} (gap {g.gap:.4f}, "
        f"{_share(g.recovered)}), sampled {s.value:.4f} (gap {s.gap:.4f}, {_share(s.recovered)}) "
        f"of {exact.exploitability:.4f}; {run.updates} updates, {run.seconds:.0f} s"
    )
