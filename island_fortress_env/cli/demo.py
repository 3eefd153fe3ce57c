"""A demo game through the public PettingZoo API, told in words and drawn after every round.

Each seat is named one way throughout, "A (heuristic)"; what happens is told by
``views.narrate.Narrator`` (with ``verbose``, every decision and every event; otherwise the
rounds, the petitions, the role cards played, the scores, Workers lost and the end), and the
game closes with the final scores and where each seat's points came from. Everything is printed
with its control characters escaped (``printable_lines``): an agent's name may come from a file.
"""

from __future__ import annotations

import argparse

from island_fortress_env.cli.arguments import UsageError, agent_spec, seed_value
from island_fortress_env.engine.events import EventKind
from island_fortress_env.engine.tables import PLAYER_COUNTS
from island_fortress_env.env.aec import env as make_env
from island_fortress_env.env.records import printable, printable_lines
from island_fortress_env.players import AGENTS_HELP, make_agent
from island_fortress_env.players.seeds import agent_seed
from island_fortress_env.views.narrate import Narrator, action_words, final_score_lines, seat_name
from island_fortress_env.views.text import render_text

# What a demo tells without ``verbose``: the course of the game, not every step of a move.
SHOWN = frozenset(
    (
        EventKind.SETUP,
        EventKind.ROUND,
        EventKind.PETITION,
        EventKind.ROLE,
        EventKind.WORKERS,
        EventKind.REPLACED,
        EventKind.ROW_COMPLETE,
        EventKind.SCORE,
        EventKind.WALL_COMPLETE,
        EventKind.GOVERNOR_LOST,
        EventKind.GAME_OVER,
    )
)


def say(text: str = "") -> None:
    print(printable_lines(text))


def run_demo(
    players: int = 3, seed: int = 7, agents: list[str] | None = None, verbose: bool = False
) -> list[int]:
    specs = agents or ["heuristic"] * players
    if len(specs) != players:
        raise ValueError(f"agents: one per seat ({players}) is needed, got {len(specs)}")
    env = make_env(num_players=players, render_mode="ansi")
    env.reset(seed=seed)
    raw = env.unwrapped
    seats = {  # each agent's seed from the seed's own stream of agents' seeds; a remote bot gets the OS's
        a: make_agent(spec, agent_seed(seed, 0, i))
        for i, (a, spec) in enumerate(zip(env.possible_agents, specs, strict=True))
    }
    names = tuple(printable(seats[a].name) for a in env.possible_agents)
    say(
        f"Island Fortress demo, {players} players, seed {seed}: "
        + ", ".join(seat_name(names, p) for p in range(players))
    )
    narrator = Narrator(names, raw.game_state.game.deck.cards)
    told = 0

    def tell() -> None:
        nonlocal told
        log = raw.game_state.log
        for event in log[told:]:
            lines = narrator.event(event)
            if verbose or event.kind in SHOWN:
                for line in lines:
                    if event.kind is EventKind.ROUND and "begins" in line.text:
                        say()
                    say(f"  {line.text}")
        told = len(log)

    tell()
    last_round = raw.game_state.round
    for agent in env.agent_iter():
        obs, _reward, termination, truncation, _info = env.last()
        if termination or truncation:
            env.step(None)
            continue
        state = raw.game_state
        if state.round != last_round:
            if last_round:
                say(f"\n{render_text(state, 0, names)}\n")
            last_round = state.round
        action = seats[agent].act(obs["observation"], obs["action_mask"], state)
        if verbose:
            p = raw.agent_name_mapping[agent]
            say(f"  {seat_name(names, p)} chooses: {action_words(state, action)}")
        env.step(action)
        tell()
    state = raw.game_state
    say()
    say(render_text(state, 0, names))
    say()
    say("\n".join(final_score_lines(state, names)))
    env.close()
    return state.score


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--players", type=int, default=3, choices=PLAYER_COUNTS)
    parser.add_argument("--seed", type=seed_value, default=7)
    parser.add_argument(
        "--agents", nargs="*", default=None, type=agent_spec,
        help=f"one agent per seat: {AGENTS_HELP} (default: heuristic)",
    )  # fmt: skip
    parser.add_argument("--verbose", action="store_true", help="print every decision, not only rounds")


def run(args: argparse.Namespace) -> int:
    if args.agents and len(args.agents) != args.players:
        raise UsageError(
            f"--agents needs one agent per seat ({args.players} players), got {len(args.agents)}"
        )
    run_demo(players=args.players, seed=args.seed, agents=args.agents, verbose=args.verbose)
    return 0
