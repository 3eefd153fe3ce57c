"""Where one agent departs from another: at each of A's decisions, what would B have played?

    pip install torch==2.13.0 && pip install -e ".[train]"    # the README's "Install with pip"
    python examples/departures.py checkpoints/br-2p/final.zip checkpoints/policy-2-4p.zip

A (say a best response from ``island-fortress exploit``) plays greedy against ``players - 1``
copies of B (its target), seats rotated, one game per deal. At each of A's decisions B is asked
what it would have played in A's place (the same observation, mask and state), and the two choices
are counted by action family (``ACTION_FAMILIES``: bids, roles, wall cells, Governor blocks...):
the families where they differ most are where A's edge over B lies. Agents are agent specs, as for
``island-fortress evaluate``.
"""

from __future__ import annotations

import argparse
from collections import Counter

from island_fortress_env import island_fortress_v0
from island_fortress_env.engine.actions import family_of
from island_fortress_env.players import make_agent


def departures(a_spec: str, b_spec: str, players: int, games: int, seed: int) -> tuple[Counter, Counter]:
    """(A's decisions, those where B would have chosen otherwise), each counted by action family."""
    a, b = make_agent(a_spec, seed=seed), make_agent(b_spec, seed=seed)
    decisions: Counter = Counter()
    differ: Counter = Counter()
    for game in range(games):
        env = island_fortress_v0.env(num_players=players)
        env.reset(seed=seed + game)
        a_seat = f"player_{game % players}"
        for agent in env.agent_iter():
            obs, _reward, terminated, truncated, _info = env.last()
            if terminated or truncated:
                env.step(None)
                continue
            view = (obs["observation"], obs["action_mask"], env.unwrapped.game_state)
            action = b.act(*view)
            if agent == a_seat:
                mine = a.act(*view)
                family = family_of(mine).name
                decisions[family] += 1
                differ[family] += mine != action
                action = mine
            env.step(action)
    return decisions, differ


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("a", help="the agent whose decisions are counted (e.g. a best response)")
    parser.add_argument("b", help="the agent it is compared with, in every other seat (its target)")
    parser.add_argument("--players", type=int, default=2, choices=(2, 3, 4))
    parser.add_argument("--games", type=int, default=20)
    parser.add_argument("--seed", type=int, default=1000, help="the first deal (default 1000)")
    args = parser.parse_args()
    decisions, differ = departures(args.a, args.b, args.players, args.games, args.seed)
    print(f"{'family':<20} {'decisions':>9} {'B differs':>9}")
    for family, n in decisions.most_common():
        print(f"{family:<20} {n:>9} {100 * differ[family] / n:>8.1f}%")


if __name__ == "__main__":
    main()
