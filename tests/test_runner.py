"""players/runner.py: one loop plays every game, over the C++ core's batch or the Python engine's
(``vector.make``'s backends, ``tests/test_vector_backends.py``), with the same games, choices and
results."""

from __future__ import annotations

import numpy as np
import pytest

from island_fortress_env import core, vector
from island_fortress_env.engine import Game
from island_fortress_env.engine.actions import NUM_ACTIONS
from island_fortress_env.engine.results import game_result
from island_fortress_env.env.observation import OBS_SIZE
from island_fortress_env.players import make_agent
from island_fortress_env.players.mixture import Member, MixtureAgent
from island_fortress_env.players.runner import GameRunner, Games, Seating, play_seatings
from island_fortress_env.players.seat_policies import AgentSeats, BatchSeats, MixtureSeats, seat_policy

needs_core = pytest.mark.skipif(not core.available(), reason="the C++ core is not built")
SHIPPED = "checkpoints/policy-2-4p.zip"


# --------------------------------------------------------------------------- the runner


class Recorder:
    """A seat policy that plays at random and records what it is asked."""

    name = "recorder"

    def __init__(self) -> None:
        self.begun: list[tuple[int, int, int | None]] = []
        self.asked: list[tuple[int, int]] = []

    def begin(self, slot, seat, seed):
        self.begun.append((slot, seat, seed))

    def act(self, observations, masks, games: Games):
        assert len(observations) == len(masks) == len(games)
        assert np.array_equal(games.seats, games.batch.player[games.slots])
        self.asked.extend(zip(games.slots.tolist(), games.seats.tolist(), strict=True))
        return np.array([np.flatnonzero(m)[0] for m in masks], dtype=np.int64)


def test_the_runner_seats_each_policy_where_the_seating_says_and_returns_games_in_order(backend):
    a, b = Recorder(), Recorder()
    seatings = [
        Seating(2 + g % 3, 100 + g, tuple(a if s == g % (2 + g % 3) else b for s in range(2 + g % 3)), tag=g)
        for g in range(7)
    ]
    tables = vector.make(3, num_players=2, seed=0, backend=backend)
    finished = play_seatings(tables, seatings, keep_actions=True)
    assert [game.seating.tag for game in finished] == list(range(7))
    for game in finished:
        seating = game.seating
        assert game.final.players == seating.players and game.final.seed == seating.seed
        state = Game(num_players=seating.players).new_initial_state(seating.seed)
        for action in game.actions or []:
            state.apply_action(action)
        assert game_result(state, seating.seed, len(game.actions or [])) == game.final
    assert len(a.begun) == 7 and len(b.begun) == sum(1 + g % 3 for g in range(7))
    assert a.asked and b.asked


def test_the_runner_lets_go_of_policies_no_game_plays_any_more(monkeypatch):
    """A new policy object for every game (as a league's snapshots come and go): the runner holds
    only a bounded number of them, and every game is still played by its own."""
    from island_fortress_env.players import runner as runner_module

    monkeypatch.setattr(runner_module, "COMPACT_AT", 4)
    recorders = [Recorder() for _ in range(30)]
    seatings = [Seating(2, 300 + g, (recorders[g], BatchSeats("random")), tag=g) for g in range(30)]
    tables = vector.make(2, num_players=2, seed=0, backend="python")
    queue = iter(seatings)
    runner = runner_module.GameRunner(tables, lambda _slot: next(queue, None))
    seen = 0
    while runner.playing:
        runner.step()
        seen = max(seen, len(runner.policies))
    assert seen <= 12  # of the 60 seated over the run
    assert all(recorder.asked and {seat for _slot, seat in recorder.asked} == {0} for recorder in recorders)


def test_the_runner_says_where_a_policy_sits_and_each_slots_table_size():
    """``seated(policy)`` is where it plays in the games under way, ``players`` each slot's table
    size: a slot whose 4-player game is followed by a 2-player one holds no seat 2 or 3 of it."""
    from island_fortress_env.players.runner import GameRunner

    a, b = Recorder(), BatchSeats("random")
    seatings = iter([Seating(4, 11, (b, a, b, a), tag=0), Seating(2, 12, (a, b), tag=1)])
    runner = GameRunner(
        vector.make(1, num_players=2, seed=0, backend="python"), lambda _slot: next(seatings, None)
    )
    assert runner.seated(a).tolist() == [[False, True, False, True]]
    assert runner.seated(b).tolist() == [[True, False, True, False]] and runner.players.tolist() == [4]
    while not runner.step().finished:
        pass
    assert runner.seated(a).tolist() == [[True, False, False, False]] and runner.players.tolist() == [2]
    assert not runner.seated(Recorder()).any()  # seated nowhere
    while runner.playing:
        runner.step()
    assert not runner.seated(a).any() and runner.players.tolist() == [0]


def test_idle_slots_do_not_move_once_their_games_are_dealt():
    seatings = [Seating(2, 5, (BatchSeats("random"),) * 2, tag=0)]
    tables = vector.make(3, num_players=2, seed=0, backend="python")
    finished = play_seatings(tables, seatings)
    assert len(finished) == 1
    assert [tables.episodes(i) for i in range(3)] == [2, 1, 1]  # slot 0 dealt again, never played


def test_the_batchs_players_are_seeded_like_each_deal(backend):
    """The batch's heuristic plays like ``HeuristicAgent(seed=the deal's seed)``."""
    from island_fortress_env.baseline.heuristic import HeuristicAgent
    from island_fortress_env.env.observation import action_mask

    h = BatchSeats("heuristic")
    seatings = [Seating(3, 40 + g, (h, h, h), tag=g) for g in range(3)]
    tables = vector.make(2, num_players=3, seed=9, backend=backend)
    for game in play_seatings(tables, seatings, keep_actions=True):
        state = Game(num_players=3).new_initial_state(game.seating.seed)
        teacher = HeuristicAgent(seed=game.seating.seed)
        for action in game.actions or []:
            assert action == teacher.act(None, action_mask(state), state)
            state.apply_action(action)


def test_agent_seats_make_one_agent_per_seat_and_game_and_reseed_it():
    made = []

    def make(seed):
        agent = make_agent("random", seed)
        made.append(seed)
        return agent

    seats = AgentSeats(make, "random")
    seats.begin(0, 1, 5)
    seats.begin(0, 1, 6)  # the same slot and seat: re-seeded, not made again
    seats.begin(1, 1, 7)
    assert made == [5, 7]
    shared = AgentSeats(make, "random", shared=True)
    shared.begin(0, 0, 8), shared.begin(3, 2, 9)
    assert made == [5, 7, 8]


def test_a_mixture_draws_its_member_as_the_mixture_agent_does():
    """``MixtureSeats`` draws, for each seat of each game, the member ``MixtureAgent.reset(seed)``
    draws with that seed."""
    members = (Member("random", 0.3), Member("heuristic", 0.7))
    agent = MixtureAgent(members, make_agent, seed=0)

    class Named:
        def __init__(self, name):
            self.name = name

        def begin(self, slot, seat, seed):
            pass

    policy = MixtureSeats([(0.3, Named("random")), (0.7, Named("heuristic"))])
    for seed in range(40):
        agent.reset(seed=seed)
        policy.begin(0, 0, seed)
        assert policy.playing[(0, 0)] == agent.current


def test_seat_policies_follow_the_registry():
    from island_fortress_env.players.seat_policies import CheckpointSeats

    assert isinstance(seat_policy("heuristic", make_agent), AgentSeats)
    assert isinstance(seat_policy(SHIPPED, make_agent), CheckpointSeats)
    sampled = seat_policy(f"sample:{SHIPPED}", make_agent)
    assert isinstance(sampled, CheckpointSeats) and not sampled.agent.deterministic
    assert sampled.name == "sample:policy-2-4p"


@needs_core
def test_a_checkpoint_plays_in_a_batch_as_its_agent_plays_alone():
    """One forward pass for many games gives each game the moves the checkpoint's agent makes in
    it alone, greedy and sampled (each game's draws from its own generator)."""
    for spec in (SHIPPED, f"sample:{SHIPPED}"):
        policy = seat_policy(spec, make_agent)
        h = BatchSeats("heuristic")
        seatings = [
            Seating(
                2, 70 + g, (policy, h) if g % 2 else (h, policy), (11 + g, 0) if g % 2 else (0, 11 + g), tag=g
            )
            for g in range(6)
        ]
        for game in play_seatings(vector.VectorEnv(6, num_players=2, seed=0), seatings, keep_actions=True):
            g = game.seating.tag
            seat = 0 if g % 2 else 1
            alone = make_agent(spec, seed=11 + g)
            state = core.new_initial_state(Game(num_players=2), game.seating.seed)
            teacher = make_agent("heuristic", seed=game.seating.seed)
            for action in game.actions or []:
                if state.current_player() == seat:
                    assert action == alone.act(state.encode(seat), state.action_mask(), state)
                else:
                    assert action == teacher.act(None, state.action_mask(), state)
                state.apply_action(action)


# --------------------------------------------------------------------------- network pools


def _nets(count: int, **kwargs):
    import torch

    from island_fortress_env.agents.network import ActorCritic

    torch.manual_seed(5)
    return [ActorCritic(**kwargs).eval() for _ in range(count)]


def _rows(count: int, seed: int = 0):
    from island_fortress_env.engine.actions import NUM_ACTIONS
    from island_fortress_env.env.observation import OBS_SIZE

    rng = np.random.default_rng(seed)
    masks = rng.random((count, NUM_ACTIONS)) < 0.05
    masks[:, 0] = True  # every row has a legal action
    return rng.random((count, OBS_SIZE), dtype=np.float32), masks


@pytest.mark.parametrize("head_activation", ["relu", "tanh"])
def test_stacked_dense_networks_give_each_row_its_own_networks_outputs(head_activation):
    import torch

    from island_fortress_env.players.seat_policies import StackedNetworks

    nets = _nets(3, cnn_channels=0, hidden=24, head_activation=head_activation)
    assert StackedNetworks.fits(nets)
    obs, masks = _rows(11)
    member = np.array([2, 0, 2, 2, 1, 0, 2, 2, 2, 0, 2])  # uneven: padded rows must not leak
    with torch.no_grad():
        logits, values = StackedNetworks(nets)(torch.from_numpy(obs), torch.from_numpy(masks), member)
        for row, k in enumerate(member.tolist()):
            alone, value = nets[k](
                torch.from_numpy(obs[row : row + 1]), torch.from_numpy(masks[row : row + 1])
            )
            torch.testing.assert_close(logits[row], alone[0], rtol=1e-5, atol=1e-5)
            torch.testing.assert_close(values[row], value[0], rtol=1e-5, atol=1e-5)


def test_only_dense_networks_of_one_shape_are_stacked():
    from island_fortress_env.players.seat_policies import StackedNetworks

    dense = _nets(2, cnn_channels=0, hidden=8)
    assert not StackedNetworks.fits(_nets(2, cnn_channels=2, hidden=8))  # convolutions: one pass each
    assert not StackedNetworks.fits(dense + _nets(1, cnn_channels=0, hidden=16))
    assert not StackedNetworks.fits(_nets(1, cnn_channels=0, hidden=8, value_cnn_channels=0, value_hidden=8))
    assert not StackedNetworks.fits([])


@pytest.mark.parametrize("cnn_channels", [0, 2])
def test_a_network_pool_plays_each_game_with_its_members_network_and_mode(cnn_channels):
    """Greedy members' rows are their own network's argmax, whether the pool stacks the networks
    (dense) or passes them one at a time (convolutional); a sampled member's draws are legal and
    repeat from the same generator."""
    import torch

    from island_fortress_env.players.seat_policies import NetworkPoolSeats, NetworkSeats

    nets = _nets(3, cnn_channels=cnn_channels, hidden=8)
    obs, masks = _rows(40, seed=1)
    slots = np.arange(40)
    owner = {slot: ("a", "b", "c")[slot % 3] for slot in range(40)}

    def play(seed: int) -> np.ndarray:
        pool = NetworkPoolSeats(owner.__getitem__, torch.Generator().manual_seed(seed))
        pool.members = {
            "a": NetworkSeats(nets[0], greedy=True),
            "b": NetworkSeats(nets[1], greedy=False),
            "c": NetworkSeats(nets[2], greedy=True),
        }
        return pool.act(obs, masks, Games(None, slots, np.zeros(40, dtype=np.int64)))

    actions = play(3)
    with torch.no_grad():
        for k, name in ((0, "a"), (2, "c")):
            rows = [slot for slot in range(40) if owner[slot] == name]
            logits, _ = nets[k](torch.from_numpy(obs[rows]), torch.from_numpy(masks[rows]))
            assert actions[rows].tolist() == logits.argmax(dim=1).tolist()
    assert masks[slots, actions].all()
    assert np.array_equal(play(3), actions)


def test_each_step_is_a_record_of_what_every_game_saw_chose_and_scored(backend):
    """``step()`` is everything a caller reads: per moving slot the seat, the game's tag, the
    observation and mask it decided from, the action; every seat's score gains, which add up to
    the final scores; the finished games."""
    from island_fortress_env.players.runner import GameRunner

    tables = vector.make(2, num_players=3, seed=9, backend=backend)
    a, b = Recorder(), BatchSeats("heuristic")
    seatings = iter([Seating(3, 40 + g, (a, b, a), tag=f"game {g}") for g in range(3)])
    runner = GameRunner(tables, lambda _slot: next(seatings, None))
    scores: dict[str, np.ndarray] = {}
    finals = {}
    while runner.playing:
        before_obs, before_mask = tables.obs.copy(), tables.mask.copy()
        movers = tables.player.copy()
        step = runner.step()
        assert np.array_equal(step.seats, movers[step.slots])
        assert np.array_equal(step.observations, before_obs[step.slots])
        assert np.array_equal(step.masks, before_mask[step.slots])
        assert all(step.masks[k, action] for k, action in enumerate(step.actions.tolist()))
        for k, slot in enumerate(step.slots.tolist()):
            tag = step.tags[k]
            scores[tag] = scores.get(tag, np.zeros(4, dtype=np.int64)) + step.score_gains[slot]
        for game in step.finished:
            finals[game.seating.tag] = game.final
    assert sorted(finals) == ["game 0", "game 1", "game 2"]
    for tag, final in finals.items():
        assert scores[tag][:3].tolist() == list(final.score)


def test_sample_positions_are_decisions_of_whole_games_the_same_from_the_same_seed():
    from island_fortress_env.players.positions import sample_positions

    obs, masks = sample_positions(200, seed=3)
    assert obs.shape == (200, OBS_SIZE) and obs.dtype == np.float32
    assert masks.shape == (200, NUM_ACTIONS) and masks.dtype == np.bool_ and masks.any(axis=1).all()
    again = sample_positions(200, seed=3)
    assert np.array_equal(obs, again[0]) and np.array_equal(masks, again[1])
    assert not np.array_equal(obs, sample_positions(200, seed=4)[0])
    assert len(np.unique(obs, axis=0)) > 150  # spread over the games, not one position repeated
    assert sample_positions(0)[0].shape == (0, OBS_SIZE)


def _under_way(backend: str, players: int, seed: int, moves: int):
    """A game of ``players`` under way after ``moves`` first-legal moves, of ``backend``."""
    game = Game(num_players=players)
    state = core.new_initial_state(game, seed) if backend == "core" else game.new_initial_state(seed)
    for _ in range(moves):
        state.apply_action(state.legal_actions()[0])
    return state


@pytest.mark.skipif(not core.available(), reason="the C++ core is not built")
def test_the_runner_plays_seatings_that_start_from_a_state_on_either_backend():
    """Every seating continues its own state; both backends give the same finished games."""
    records = {}
    for backend in ("core", "python"):
        starts = [_under_way(backend, 3, seed, 30 + seed) for seed in range(5)]
        seatings = iter(
            Seating(3, 7 + k, (BatchSeats("heuristic"),) * 3, tag=k, start=start)
            for k, start in enumerate(starts)
        )
        runner = GameRunner(
            vector.make(2, num_players=4, seed=3, backend=backend),
            lambda _slot, queue=seatings: next(queue, None),
        )
        finished = runner.run()
        assert sorted(game.seating.tag for game in finished) == list(range(5))
        assert all(game.final.players == 3 and game.final.seed == 7 + game.seating.tag for game in finished)
        records[backend] = sorted((game.seating.tag, game.final) for game in finished)
    assert records["core"] == records["python"]
    wrong = Seating(2, 1, (BatchSeats("random"),) * 2, start=_under_way("core", 3, 1, 5))
    with pytest.raises(ValueError, match="2 players"):
        GameRunner(vector.make(1, num_players=2, seed=3, backend="core"), lambda _slot: wrong)
