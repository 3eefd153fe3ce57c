"""``island-fortress snapshot OUT.png``: a picture of a seeded game between heuristic players at a
chosen moment (``docs/table.png``), played through the runner.

    island-fortress snapshot OUT.png [--players 3] [--seed 3] [--round 5]
"""

from __future__ import annotations

import argparse

from island_fortress_env import vector
from island_fortress_env.cli.arguments import UsageError
from island_fortress_env.engine.decisions import Decision
from island_fortress_env.engine.tables import PLAYER_COUNTS
from island_fortress_env.players import make_agent
from island_fortress_env.players.runner import GameRunner, Seating
from island_fortress_env.players.seat_policies import seat_policy
from island_fortress_env.players.seeds import agent_seed
from island_fortress_env.views.picture import render_image


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.description = (
        "Save a picture of a seeded game between heuristic players (used for docs/table.png)."
    )
    parser.add_argument("out")
    parser.add_argument("--players", type=int, default=3, choices=PLAYER_COUNTS)
    parser.add_argument("--seed", type=int, default=3)
    parser.add_argument(
        "--round", type=int, default=5, help="stop at this round's first Build Wall cell choice"
    )
    parser.add_argument("--seat", type=int, default=None, help="the viewing seat (default: spectator)")


def run(args: argparse.Namespace) -> int:
    """Plays the game through the runner (a batch of one, the Python engine's: the picture draws
    its state) until the chosen moment, then draws it."""
    batch = vector.make(1, num_players=args.players, backend="python")
    heuristic = seat_policy("heuristic", make_agent)
    seeds = tuple(agent_seed(args.seed, 0, p) for p in range(args.players))
    dealt = iter([Seating(args.players, args.seed, (heuristic,) * args.players, seeds)])
    runner = GameRunner(batch, lambda _slot: next(dealt, None))
    state = batch.state(0)
    while not (state.round >= args.round and state.decision == Decision.BUILD_CELL):
        if runner.step().finished:
            raise UsageError(
                f"--round {args.round}: the game ended in round {state.round}, before that round's "
                "first Build Wall cell choice"
            )
        state = batch.state(0)
    render_image(state, args.seat).save(args.out)
    print(f"{args.out}: round {state.round}, {state.decision_name()}")
    return 0
