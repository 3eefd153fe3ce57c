"""OpenSpiel: OpenSpiel's own DQN (PyTorch) learns Island Fortress through its rl_environment.

``rl_environment.Environment("python_island_fortress", players=2)`` is OpenSpiel's RL loop over
the pyspiel game. The game offers observation tensors, not information-state tensors, so the
environment hands each seat its observation (the env's 1,317-value seat view, hidden information
excluded) as ``info_state``, with its legal actions. One ``open_spiel.python.pytorch.dqn.DQN`` per
seat, as in OpenSpiel's ``breakthrough_dqn.py``: epsilon-greedy over the legal actions'
Q-values, a replay buffer, a target network; after each game every agent steps once more on the
last time step, to learn from the game's end. Then each greedy agent (``is_evaluation=True``)
plays OpenSpiel's ``RandomAgent`` in the other seats.

    pip install torch==2.13.0 && pip install -e ".[openspiel,train]"    # train: torch for its PyTorch DQN
    python examples/openspiel_dqn.py --episodes 20 --eval-games 4
"""

from __future__ import annotations

import argparse
import time

import numpy as np
import torch
from open_spiel.python import rl_environment
from open_spiel.python.algorithms import random_agent
from open_spiel.python.pytorch import dqn

import island_fortress_env.adapters.openspiel  # noqa: F401  (registers python_island_fortress)


def make_env(players: int = 2, seed: int = 0) -> rl_environment.Environment:
    """OpenSpiel's RL environment over the game; every action is checked against the legal ones."""
    return rl_environment.Environment(
        "python_island_fortress", players=players, rng_seed=seed, enable_legality_check=True
    )


def make_agents(
    env: rl_environment.Environment,
    hidden: int = 128,
    seed: int = 0,
    min_buffer: int = 500,
    learn_every: int = 8,
    epsilon_decay: int = 20_000,
) -> list[dqn.DQN]:
    """One DQN per seat (each learns the seat it plays)."""
    size = env.observation_spec()["info_state"][0]
    num_actions = env.action_spec()["num_actions"]
    return [
        dqn.DQN(
            player_id=seat,
            state_representation_size=size,
            num_actions=num_actions,
            hidden_layers_sizes=[hidden],
            replay_buffer_capacity=20_000,
            batch_size=32,
            learning_rate=1e-3,
            optimizer_str="adam",
            loss_str="huber",
            learn_every=learn_every,
            min_buffer_size_to_learn=min_buffer,
            update_target_network_every=500,
            epsilon_decay_duration=epsilon_decay,
            epsilon_end=0.05,
            seed=seed + seat,
        )
        for seat in range(env.num_players)
    ]


def play(env: rl_environment.Environment, agents: list, is_evaluation: bool) -> rl_environment.TimeStep:
    """One game, each seat played by its agent; the last time step goes to every agent."""
    time_step = env.reset()
    while not time_step.last():
        seat = time_step.observations["current_player"]
        output = agents[seat].step(time_step, is_evaluation=is_evaluation)
        time_step = env.step([output.action])
    for agent in agents:
        agent.step(time_step, is_evaluation=is_evaluation)
    return time_step


def train(env: rl_environment.Environment, agents: list[dqn.DQN], episodes: int) -> list[list[float]]:
    """``episodes`` self-play games; returns each game's returns."""
    return [list(play(env, agents, is_evaluation=False).rewards) for _ in range(episodes)]


def evaluate(env: rl_environment.Environment, agents: list[dqn.DQN], games: int) -> float:
    """Each greedy agent against random agents in the other seats, seats taken in turn; the mean
    return of the DQN seat (win/loss: +1 for a sole win, chance is 0)."""
    num_actions = env.action_spec()["num_actions"]
    total = 0.0
    for g in range(games):
        seat = g % env.num_players
        players: list = [random_agent.RandomAgent(p, num_actions) for p in range(env.num_players)]
        players[seat] = agents[seat]
        total += play(env, players, is_evaluation=True).rewards[seat]
    return total / max(games, 1)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--players", type=int, choices=(2, 3, 4), default=2)
    parser.add_argument("--episodes", type=int, default=20, help="self-play games to learn from")
    parser.add_argument("--eval-games", type=int, default=4, help="games against random agents")
    parser.add_argument(
        "--min-buffer", type=int, default=500, help="transitions a seat keeps before it learns (default 500)"
    )
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--threads", type=int, default=1, help="torch threads (default 1)")
    args = parser.parse_args()
    torch.set_num_threads(args.threads)
    np.random.seed(args.seed)  # noqa: NPY002  (OpenSpiel's DQN and RandomAgent draw from numpy's global one)
    env = make_env(args.players, args.seed)
    agents = make_agents(env, seed=args.seed, min_buffer=args.min_buffer)
    start = time.perf_counter()
    returns = train(env, agents, args.episodes)
    steps = sum(agent.step_counter for agent in agents)
    losses = ", ".join("-" if a.loss is None else f"{float(a.loss):.4f}" for a in agents)
    print(
        f"DQN: {args.episodes} self-play games, {steps} decisions in {time.perf_counter() - start:.1f} s; "
        f"last loss per seat: {losses}; last game's returns {returns[-1] if returns else []}"
    )
    mean = evaluate(env, agents, args.eval_games)
    print(f"greedy DQN against random agents, {args.eval_games} games: mean return {mean:+.2f}")


if __name__ == "__main__":
    main()
