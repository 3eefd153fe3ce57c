"""The native trainer over real games: the same seed gives the same losses and weights however
the games are collected, every seat is credited its whole score and outcome, and the collectors
play the core's batch (or the Python engine's games) with the league's seats."""

from __future__ import annotations

from pathlib import Path

import pytest
import torch
from native_runs import tiny_config

from island_fortress_env import core, vector
from island_fortress_env.agents.network import ActorCritic
from island_fortress_env.engine.tables import MAX_PLAYERS
from island_fortress_env.training.collect import Collector
from island_fortress_env.training.league import GameKind
from island_fortress_env.training.trajectories import SeatTrajectories

ROOT = Path(__file__).resolve().parents[1]


@pytest.mark.parametrize(
    "collection",
    [
        ("train.workers=0", "train.pipelined=false", "train.update_dtype=float32"),
        # ... and a learning rate annealed along (1 - done) ** 2
        ("train.workers=0", "train.pipelined=false", "train.update_dtype=bfloat16", "ppo.anneal_power=2"),
        # worker processes, and a wall-clock cap that the learning rate does not anneal to
        ("train.workers=1", "train.pipelined=true", "train.max_minutes=60", "train.update_dtype=auto"),
        # two workers, as configs/default.yaml has it: their rollouts joined in a fixed order
        ("train.workers=2", "train.pipelined=true", "train.update_dtype=auto"),
        # two workers and the main process collecting in lockstep
        ("train.workers=2", "train.pipelined=false", "train.update_dtype=float32"),
        # the imitation warm start first, and evaluations between the updates
        ("train.workers=2", "pretrain.games=4", "eval.every=300", "eval.games=2", "eval.final_games=2"),
        # every game against a search player, its trees seeded per game and seat, in a worker
        ("train.workers=1", "train.pipelined=true", "league.share=1.0", "league.opponent=search:2"),
    ],
    ids=[
        "in-process",
        "bfloat16-update",
        "worker-process",
        "two-workers",
        "two-workers-lockstep",
        "warm-start",
        "search-opponent",
    ],
)
def test_two_runs_with_the_same_seed_give_the_same_losses_and_weights(tmp_path, collection):
    _assert_two_runs_agree(tmp_path, collection)


def test_without_the_core_a_run_steps_python_envs_and_still_gives_the_same_losses_and_weights(
    tmp_path, monkeypatch
):
    """Where the C++ core is not built the collectors, the warm start and the evaluations play
    the Python engine's games, with one warning: the run is as reproducible."""
    monkeypatch.setattr(core, "available", lambda: False)
    with pytest.warns(RuntimeWarning, match="C\\+\\+ core is not built"):
        _assert_two_runs_agree(
            tmp_path,
            ("train.workers=0", "pretrain.games=2", "eval.every=300", "eval.games=1", "eval.final_games=1"),
        )


def _assert_two_runs_agree(tmp_path: Path, collection: tuple[str, ...]) -> None:
    from island_fortress_env.agents.checkpoint import load_policy
    from island_fortress_env.training.plot_curves import read_scalars
    from island_fortress_env.training.ppo import train_native

    losses, rates, weights = [], [], []
    for run in ("a", "b"):
        cfg = tiny_config(
            tmp_path / run,
            "same",
            "pretrain.games=0",
            "eval.every=0",
            "eval.final_games=0",
            "train.total_decisions=600",
            *collection,
        )
        train_native(cfg)
        scalars = read_scalars(tmp_path / run / "runs" / "same")
        losses.append([scalars[k] for k in ("losses/policy_loss", "losses/value_loss", "losses/entropy")])
        rates.append([lr for _, lr in scalars["charts/learning_rate"]])
        weights.append(load_policy(tmp_path / run / "ckpt" / "same" / "final.zip")[0].state_dict())
    assert losses[0] == losses[1]
    assert all(torch.equal(weights[0][k], weights[1][k]) for k in weights[0])
    # ppo.anneal_over=decisions: to 0 over the 2 updates of 300 decisions, whatever the clock
    lr = cfg.ppo.learning_rate
    assert rates[0] == rates[1] == pytest.approx([lr, lr / 2**cfg.ppo.anneal_power])


class _CreditLedger(SeatTrajectories):
    """Also sums, per seat of each game (episode, seat), every reward credited to one of its
    decisions (the collector's seat ids name a slot's seat, whichever game it is in)."""

    def __init__(self, collector: Collector) -> None:
        super().__init__()
        self.collector = collector
        self.playing: dict = {}  # seat id -> (episode, seat) of its latest decision
        self.credited: dict = {}
        self.decisions: dict = {}

    def act_many(self, seats, *args) -> None:
        super().act_many(seats, *args)
        slots = self.collector.runner.slots  # acting: each slot's game is the one deciding
        for sid in seats.tolist():
            key = (slots[sid // MAX_PLAYERS].current.tag.episode, sid % MAX_PLAYERS)
            self.playing[sid] = key
            self.decisions[key] = self.decisions.get(key, 0) + 1

    def reward_many(self, seats, rewards) -> None:
        for sid, reward in zip(seats.tolist(), rewards.tolist(), strict=True):
            if self.has_pending(sid):
                key = self.playing[sid]
                self.credited[key] = self.credited.get(key, 0.0) + reward
        super().reward_many(seats, rewards)


@pytest.mark.parametrize(
    "vp, win, relative", [(1.0, 0.0, False), (0.0, 1.0, False), (0.5, 1.0, False), (0.5, 1.0, True)]
)
def test_in_real_games_every_seat_is_credited_its_whole_score_and_outcome(vp, win, relative, backend):
    """Over a finished game, the rewards credited to a seat's decisions add up to its final score
    (scaled) plus its zero-sum outcome, whoever moved when points were scored or the game ended.
    With ``reward.vp_relative`` the score part is the margin over the other seats' mean score, and
    the seats' totals sum to zero."""
    from island_fortress_env.engine.scoring import win_loss_returns
    from island_fortress_env.env.aec import SCORE_SCALE

    cfg = tiny_config(
        Path("/nonexistent"),
        "c",
        "league.share=0.0",
        "train.games_per_collector=2",
        f"reward.vp={vp}",
        f"reward.win={win}",
        f"reward.vp_relative={str(relative).lower()}",
    )
    collector = Collector(cfg, 0, SeatTrajectories, backend=backend)
    collector.book = ledger = _CreditLedger(collector)
    finals = {}
    record = collector._record

    def remember(game, finished):
        final = finished.final
        winners = [p for p in range(final.players) if final.win[p] > 0]
        finals[game.episode] = (list(final.score), win_loss_returns(final.players, winners), final.players)
        record(game, finished)

    collector._record = remember
    collector.collect(ActorCritic(cnn_channels=4, hidden=16), 2500)
    assert finals, "at least one game finished"
    for episode, (scores, outcome, n) in finals.items():
        for seat in range(n):
            key = (episode, seat)
            assert ledger.decisions[key] > 0
            points = scores[seat] - ((sum(scores) - scores[seat]) / (n - 1) if relative else 0)
            expected = vp * points / SCORE_SCALE + win * outcome[seat]
            assert ledger.credited.get(key, 0.0) == pytest.approx(expected, abs=1e-9), (episode, seat)
        if relative:
            assert sum(ledger.credited[(episode, s)] for s in range(n)) == pytest.approx(0.0, abs=1e-9)


@pytest.mark.skipif(not core.available(), reason="the C++ core is not built")
def test_the_core_collectors_league_seats_are_the_heuristics_and_the_learners_decisions_its_own():
    """Replayed in the Python engine from its seed, every move of a heuristic league game's
    frozen seats is the heuristic's (one player per game, seeded by the game's seed), the game
    ends as the batch's did, and the learner's trajectory holds exactly its own moves."""
    from island_fortress_env.baseline.heuristic import HeuristicAgent
    from island_fortress_env.engine import Game
    from island_fortress_env.env.observation import action_mask

    league = ("league.share=1.0", "league.snapshot=0.0", "league.random=0.0", "league.heuristic=1.0")
    cfg = tiny_config(Path("/nonexistent"), "c", *league, "train.games_per_collector=3")
    collector = Collector(cfg, 0, SeatTrajectories)
    collector.runner.keep_actions = True
    collector.book = ledger = _CreditLedger(collector)
    ended = []
    record = collector._record
    collector._record = lambda game, finished: ended.append((game, finished)) or record(game, finished)
    collector.collect(ActorCritic(cnn_channels=4, hidden=16), 700)
    assert len(ended) >= 2
    for game, finished in ended:
        assert game.kind is GameKind.HEURISTIC and len(game.learners) == 1
        seed = finished.final.seed
        replayed = Game(num_players=game.players).new_initial_state(seed)
        heuristic, learner_moves = HeuristicAgent(seed=seed), 0
        for action in finished.actions:
            if replayed.current_player() in game.learners:
                learner_moves += 1
            else:
                assert action == heuristic.act(None, action_mask(replayed), replayed)
            replayed.apply_action(action)
        assert replayed.is_terminal() and tuple(replayed.score) == finished.final.score
        assert ledger.decisions[(game.episode, game.learners[0])] == learner_moves


@pytest.mark.skipif(not core.available(), reason="the C++ core is not built")
def test_the_core_collector_draws_each_new_games_table_size():
    """A slot of the batch plays the tables drawn for its successive games, of the sizes the
    ``tables`` weights allow."""
    cfg = tiny_config(
        Path("/nonexistent"), "c", "league.share=0.0", "tables.three=0", "train.games_per_collector=2"
    )
    collector = Collector(cfg, 0, SeatTrajectories)
    runner = collector.runner
    played = {
        slot: [runner.slots[slot].current.tag.players, runner.slots[slot].following.players]
        for slot in (0, 1)
    }
    deal = collector._next_game

    def dealt(slot: int):
        seating = deal(slot)
        played[slot].append(seating.players)
        return seating

    runner.next_seating = dealt
    collector.collect(ActorCritic(cnn_channels=4, hidden=16), 6000)
    assert sum(map(len, played.values())) >= 8
    assert {n for sizes in played.values() for n in sizes} == {2, 4}
    assert any(len(set(sizes)) == 2 for sizes in played.values())
    for slot, sizes in played.items():  # the batch's game is of the size drawn for it (the last
        # size drawn is the next game's, dealt when this one ends)
        assert collector.batch.games[slot].num_players == sizes[-2] == runner.slots[slot].current.tag.players


@pytest.mark.skipif(not core.available(), reason="the C++ core is not built")
def test_with_the_core_the_collectors_play_its_batch_without_a_warning():
    import warnings

    from island_fortress_env.training import collect

    with warnings.catch_warnings():
        warnings.simplefilter("error")
        collectors = collect.Collectors(tiny_config(Path("/nonexistent"), "c"), SeatTrajectories)
    assert isinstance(collectors.local.batch, vector.VectorEnv)


def test_without_the_core_the_collectors_play_python_envs_and_say_so(monkeypatch):
    from island_fortress_env.training import collect

    cfg = tiny_config(Path("/nonexistent"), "c")
    monkeypatch.setattr(core, "available", lambda: False)
    with pytest.warns(RuntimeWarning, match="Python engine") as caught:
        collectors = collect.Collectors(cfg, SeatTrajectories)
    assert collectors.local.batch.backend == "python" and len(caught) == 1
