"""OpenEnv: serve Island Fortress with OpenEnv's server and play it with OpenEnv's client.

pip install -e ".[openenv]"
python examples/openenv_play.py --games 3 --players 3

A scripted agent stands in for a language model (nothing is downloaded): it reads the seat's text
and its numbered moves and answers "[k]". With --url it plays a server already running (e.g.
``island-fortress openenv-serve --port 8000``); without, it starts one on a free
loopback port for the run.
"""

from __future__ import annotations

import argparse
import contextlib
import sys

import numpy as np

from island_fortress_env.adapters.openenv import IslandFortressAction, IslandFortressEnv, make_app, serving


class ScriptedAgent:
    """Answers with a number from the moves it is shown, drawn from its own generator."""

    def __init__(self, seed: int) -> None:
        self.rng = np.random.default_rng(seed)

    def reply(self, text: str, moves: list[str]) -> str:
        return f"[{int(self.rng.integers(1, len(moves) + 1))}]"


def play(url: str, games: int, players: int, seed: int) -> int:
    agents = [ScriptedAgent(seed * 10 + seat) for seat in range(players)]
    with IslandFortressEnv(base_url=url, message_timeout_s=120.0).sync() as env:
        for g in range(games):
            result = env.reset(players=players, seed=seed + g)
            longest = 0
            while not result.done:
                obs = result.observation
                longest = max(longest, len(obs.text))
                reply = agents[obs.seat].reply(obs.text, obs.legal_moves)
                result = env.step(IslandFortressAction(reply=reply, seat=obs.seat))
            state = env.state()
            rewards = ", ".join(f"{r:+.2f}" for r in result.observation.rewards)
            print(
                f"game {g}: {state.step_count} moves, scores {state.scores}, rewards [{rewards}], "
                f"refused {state.refused_replies}, longest text {longest} characters"
            )
    return 0


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--games", type=int, default=3)
    parser.add_argument("--players", type=int, default=3, choices=(2, 3, 4))
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--url", default=None, help="a running server (default: start one on loopback)")
    args = parser.parse_args(argv)
    if args.games < 1 or args.seed < 0:
        parser.error("--games must be at least 1 and --seed at least 0")
    with contextlib.nullcontext(args.url) if args.url else serving(make_app(players=args.players)) as url:
        return play(url, args.games, args.players, args.seed)


if __name__ == "__main__":
    sys.exit(main())
