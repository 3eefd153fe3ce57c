"""Island Fortress through TextArena's own loop: ``ta.make``, ``env.reset(num_players=n)``,
``env.get_observation()``, ``env.step(action=text)``, ``env.close()``, with its default wrappers
(``LLMObservationWrapper``, ``ActionFormattingWrapper``) and agents of TextArena's ``Agent`` class.

The agents here are scripted, standing in for a model (nothing is downloaded): each reads only
the text it is given, finds the numbers of the moves listed there (``views.prompt.listed_numbers``)
and answers as a model would, "I choose [k]". To play a model, put one of TextArena's agents in
their place (``ta.agents.OpenRouterAgent(model_name=...)``, ``ta.agents.HFLocalAgent(...)``).

pip install -e ".[textarena]"    # the README's "Install with pip" (no torch needed)
python examples/textarena_play.py --games 3    # a 2-, a 3- and a 4-player game
python examples/textarena_play.py --env IslandFortress-v0-train --players 4
"""

from __future__ import annotations

import argparse
import sys

import numpy as np
import textarena as ta

import island_fortress_env.adapters.textarena as island_fortress_textarena
from island_fortress_env.engine import tables
from island_fortress_env.players.seeds import stream_key
from island_fortress_env.views.prompt import listed_numbers

AGENT_STREAM = stream_key("textarena-agent")


class ScriptedAgent(ta.Agent):
    """A TextArena agent that answers with a move number listed in the text it reads, at random
    (its generator spawned by name from the run's seed, the game and the seat)."""

    def __init__(self, seed: int, game: int, seat: int) -> None:
        self.rng = np.random.default_rng(np.random.SeedSequence(seed, spawn_key=(AGENT_STREAM, game, seat)))

    def __call__(self, observation: str) -> str:
        if not isinstance(observation, str):  # an unwrapped env gives TextArena's message tuples
            observation = "\n".join(message for _, message, _ in observation)
        numbers = listed_numbers(observation)
        if not numbers:
            return "I see no move to make."
        return f"I choose [{self.rng.choice(numbers)}]."


def play_game(env_id: str, players: int, seed: int, game: int) -> tuple[dict, dict, int]:
    """One whole game through TextArena's loop: its rewards, game info and steps taken."""
    env = ta.make(env_id)
    agents = [ScriptedAgent(seed, game, seat) for seat in range(players)]
    env.reset(num_players=players, seed=seed + game)
    done, steps = False, 0
    while not done:
        player_id, observation = env.get_observation()
        done, _info = env.step(action=agents[player_id](observation))
        steps += 1
    rewards, game_info = env.close()
    return rewards, game_info, steps


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument(
        "--env", default=island_fortress_textarena.ENV_ID, choices=island_fortress_textarena.ENV_IDS
    )
    parser.add_argument("--games", type=int, default=3, help="games to play (default 3)")
    parser.add_argument(
        "--players",
        type=int,
        choices=tables.PLAYER_COUNTS,
        help="players per game (default: 2, 3, 4 in turn)",
    )
    parser.add_argument("--seed", type=int, default=0, help="the first deal's seed (default 0)")
    args = parser.parse_args(argv)
    if args.games < 1:
        parser.error("--games must be at least 1")
    for game in range(args.games):
        players = args.players or tables.PLAYER_COUNTS[game % len(tables.PLAYER_COUNTS)]
        rewards, game_info, steps = play_game(args.env, players, args.seed, game)
        reason = game_info[0]["reason"]
        print(f"game {game + 1}: {players} players, {steps} steps, rewards {rewards}: {reason}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
