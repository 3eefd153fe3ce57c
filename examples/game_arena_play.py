"""Game Arena: Island Fortress through kaggle-environments' OpenSpiel runner and its LLM harness.

pip install -e ".[gamearena]"
python examples/game_arena_play.py --games 2 --players 3

Each seat is ``core_harness.create_agent_fn`` over the game's harness, as the arena runs a
language model; a scripted model stands in for one (reached through litellm as a custom provider:
nothing is downloaded or sent). It reads only its prompt and answers a number from the numbered
moves in it; every tenth answer is refused first, to show the harness asking again.
"""

from __future__ import annotations

import argparse
import logging
import re
import sys

import numpy as np

from island_fortress_env.adapters import game_arena  # first: it keeps litellm off the network

NUMBERED = re.compile(r"^\[(\d+)\] ", re.MULTILINE)


class ScriptedModel:
    """Answers from the prompt alone, with its own seeded generator; counts the refusals it got."""

    def __init__(self, seed: int) -> None:
        self.rng = np.random.default_rng(seed)
        self.calls = 0
        self.refused = 0

    def __call__(self, prompt: str) -> str:
        self.calls += 1
        if "Your previous reply was refused" in prompt:
            self.refused += 1
        elif self.calls % 10 == 0:
            return "Let me think about the wall first."  # no move: the harness asks again
        return f"Reasoning about the board.\n[{self.rng.choice(NUMBERED.findall(prompt))}]"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--games", type=int, default=2)
    parser.add_argument("--players", type=int, default=3, choices=(2, 3, 4))
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args(argv)
    if args.games < 1 or args.seed < 0:
        parser.error("--games must be at least 1 and --seed at least 0")
    game_arena.core_harness.set_telemetry_exporter(lambda module, **kwargs: None)  # no Kaggle proxy to log to
    logging.getLogger(game_arena.core_harness.__name__).setLevel(
        logging.ERROR
    )  # a line per refused reply otherwise
    for g in range(args.games):
        models = [ScriptedModel(args.seed * 100 + g * 10 + seat) for seat in range(args.players)]
        agents = [
            game_arena.agent(game_arena.scripted_model(f"example-{g}-{seat}", model))
            for seat, model in enumerate(models)
        ]
        env = game_arena.make(players=args.players, rng_seed=args.seed + g)  # a fixed deal: reproducible
        env.run(agents)
        rewards = ", ".join(f"{state.reward:+.2f}" for state in env.state)
        refused = sum(model.refused for model in models)
        print(
            f"game {g}: {len(env.steps) - 2} moves, rewards [{rewards}], "
            f"replies refused and asked again {refused}"
        )
    return 0


if __name__ == "__main__":
    sys.exit(main())
