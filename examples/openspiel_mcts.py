"""OpenSpiel: load Island Fortress with pyspiel and let OpenSpiel's IS-MCTS play a random bot.

pip install -e ".[openspiel]"    # the README's "Install with pip" (no torch needed)
python examples/openspiel_mcts.py --games 2 --simulations 20
"""

from __future__ import annotations

import argparse

import numpy as np
import pyspiel
from open_spiel.python.algorithms import ismcts, mcts

import island_fortress_env.adapters.openspiel  # noqa: F401  (registers python_island_fortress)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--games", type=int, default=2)
    parser.add_argument("--simulations", type=int, default=20)
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args()

    game = pyspiel.load_game("python_island_fortress", {"players": 2, "rng_seed": args.seed})
    rng = np.random.RandomState(args.seed)
    search = ismcts.ISMCTSBot(
        game=game,
        evaluator=mcts.RandomRolloutEvaluator(n_rollouts=1, random_state=rng),
        uct_c=2.0,
        max_simulations=args.simulations,
        random_state=rng,
        use_observation_string=True,  # the game offers observations, not information states
    )  # each simulation samples a world with state.resample_from_infostate (hidden cards redealt)
    total = np.zeros(2)
    for g in range(args.games):
        bots = [search, pyspiel.make_uniform_random_bot(1, args.seed + g)]
        if g % 2:  # swap seats every other game
            bots = [pyspiel.make_uniform_random_bot(0, args.seed + g), search]
        state = game.new_initial_state()
        while not state.is_terminal():
            state.apply_action(bots[state.current_player()].step(state))
        returns = state.returns()
        mcts_seat = g % 2
        total += [returns[mcts_seat], returns[1 - mcts_seat]]
        print(f"game {g}: IS-MCTS in seat {mcts_seat}, returns {returns}")
    mean = total / args.games
    print(f"mean return over {args.games} games: IS-MCTS {mean[0]:+.2f}, random {mean[1]:+.2f}")


if __name__ == "__main__":
    main()
