"""A scripted text agent plays whole games through the text face of the game (``views.prompt``)
and the length of every text a seat gets for a decision is measured.

The agent reads only the text: it finds the numbers of the moves listed there
(``prompt.listed_numbers``) and answers "[k]" with one of them drawn at random; the reply is read
by ``prompt.parse_reply``, as a language model's would be. Printed: the games played, the replies
refused (0 expected), and the characters of a decision's text at 2, 3 and 4 players (min, median,
95th percentile, max) and how many texts had the oldest of what happened since the seat's last
move cut to fit ``prompt.TEXT_BUDGET``::

pip install -e ".[test]"    # the README's "Install with pip"; no library beyond the package's own
python examples/text_agent.py --games 100
"""

from __future__ import annotations

import argparse
import json
import sys

import numpy as np

from island_fortress_env.core import Game
from island_fortress_env.engine import tables
from island_fortress_env.players.seeds import stream_key
from island_fortress_env.views import prompt

AGENT_STREAM = stream_key("text-agent")


def text_agent(seed: int, game: int, seat: int) -> np.random.Generator:
    """The generator of the agent at ``seat`` in game ``game`` of a run seeded ``seed``."""
    return np.random.default_rng(np.random.SeedSequence(seed, spawn_key=(AGENT_STREAM, game, seat)))


def play(games: int, seed: int) -> tuple[dict[int, list[int]], dict[int, int], int]:
    """Play ``games`` games (table sizes 2, 3, 4 in turn, deal ``seed + game``): the length of
    every decision's text by table size, the texts whose history was cut to fit ``TEXT_BUDGET``
    by table size, and the count of replies refused."""
    lengths: dict[int, list[int]] = {n: [] for n in tables.PLAYER_COUNTS}
    cut = dict.fromkeys(tables.PLAYER_COUNTS, 0)
    refused = 0
    for game in range(games):
        n = tables.PLAYER_COUNTS[game % len(tables.PLAYER_COUNTS)]
        state = Game(num_players=n).new_initial_state(seed + game)
        agents = [text_agent(seed, game, seat) for seat in range(n)]
        while not state.is_terminal():
            seat = state.current_player()
            text = prompt.prompt(state, seat)
            lengths[n].append(len(text))
            cut[n] += "earlier sentence" in text
            numbers = prompt.listed_numbers(text)
            reply = f"[{agents[seat].choice(numbers)}]" if numbers else ""
            try:
                state.apply_action(prompt.parse_reply(state, reply))
            except prompt.ReplyError:
                refused += 1
                state.apply_action(state.legal_actions()[0])
    return lengths, cut, refused


def figures(lengths: list[int]) -> dict[str, int]:
    values = np.asarray(lengths)
    return {
        "decisions": len(values),
        "min": int(values.min()),
        "median": int(np.median(values)),
        "p95": int(np.percentile(values, 95)),
        "max": int(values.max()),
    }


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--games", type=int, default=100, help="games to play (default 100)")
    parser.add_argument("--seed", type=int, default=0, help="the first deal's seed (default 0)")
    parser.add_argument("--json", action="store_true", help="print the figures as JSON")
    args = parser.parse_args(argv)
    if args.games < 1:
        parser.error("--games must be at least 1")
    lengths, cut, refused = play(args.games, args.seed)
    table = {n: {**figures(v), "history_cut": cut[n]} for n, v in lengths.items() if v}
    if args.json:
        print(json.dumps({"games": args.games, "refused": refused, "characters": table}))
        return 0
    print(f"{args.games} games, {refused} replies refused; characters of a decision's text:")
    print("players  decisions    min  median    p95    max  history cut")
    for n, f in table.items():
        print(
            f"{n:>7}  {f['decisions']:>9}  {f['min']:>5}  {f['median']:>6}  {f['p95']:>5}  {f['max']:>5}"
            f"  {f['history_cut']:>11}"
        )
    return 0


if __name__ == "__main__":
    sys.exit(main())
