"""``island-fortress snapshot OUT.png``: a picture of a seeded game between heuristic players at a
chosen moment (the README's ``docs/table.png``).

    island-fortress snapshot OUT.png [--players 3] [--seed 3] [--round 5]
"""

from __future__ import annotations

import argparse

from island_fortress_env.engine.decisions import Decision
from island_fortress_env.engine.tables import PLAYER_COUNTS
from island_fortress_env.env.aec import raw_env
from island_fortress_env.players import make_agent
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
    env = raw_env(num_players=args.players)
    env.reset(seed=args.seed)
    state = env.game_state
    assert state is not None
    agents = [make_agent("heuristic", seed=agent_seed(args.seed, 0, p)) for p in range(args.players)]
    while not state.is_terminal() and not (
        state.round >= args.round and state.decision == Decision.BUILD_CELL
    ):
        p = state.current_player()
        obs = env.observe(env.possible_agents[p])
        env.step(agents[p].act(obs["observation"], obs["action_mask"], state))
    render_image(state, args.seat).save(args.out)
    print(f"{args.out}: round {state.round}, {state.decision_name()}")
    return 0
