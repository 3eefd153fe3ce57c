"""AgileRL: its IPPO trained on the game's Parallel API by its own multi-agent on-policy trainer.
``agilerl.training.train_multi_agent_on_policy`` takes a PettingZoo ``ParallelEnv`` (in its own
``PzDummyVecEnv``); its algorithms take each seat's action mask from ``infos[agent]["action_mask"]``
(and refuse one inside the observation), so ``MaskInInfo`` below moves the Parallel view's mask
there, as a list of 0/1 (IPPO 2.58 checks ``None in masks``, which a numpy mask cannot answer),
and hands the policy the observation vector. The seats' ids (``player_0``...) form AgileRL's
group ``player``: one shared policy, masked, so it only ever picks the mover's legal actions and
``PASS`` for every other seat. Then the trained policy plays whole games against seats that pick
a random legal action.
    pip install torch==2.13.0 && pip install -e ".[agilerl]"    # the README's "Install with pip"
    python examples/agilerl_ippo.py --steps 2048 --games 4 --players 3
"""

from __future__ import annotations

import argparse
from typing import Any

import numpy as np
import torch
from agilerl.algorithms import IPPO
from agilerl.training.train_multi_agent_on_policy import train_multi_agent_on_policy
from gymnasium import spaces
from pettingzoo.utils import BaseParallelWrapper

from island_fortress_env import island_fortress_v0


class MaskInInfo(BaseParallelWrapper):
    """The Parallel view as AgileRL reads one: each seat's observation is the float32 vector, its
    action mask (the mover's legal actions, ``PASS`` for the others) is ``infos[seat]["action_mask"]``."""

    def observation_space(self, agent: str) -> spaces.Space:
        return self.env.observation_space(agent)["observation"]

    def _split(self, observations: dict, infos: dict) -> tuple[dict, dict]:
        infos = {
            a: {**infos.get(a, {}), "action_mask": o["action_mask"].tolist()} for a, o in observations.items()
        }
        return {a: o["observation"] for a, o in observations.items()}, infos

    def reset(self, seed: int | None = None, options: dict | None = None) -> tuple[dict, dict]:
        observations, infos = self.env.reset(seed=seed, options=options)
        return self._split(observations, infos)

    def step(self, actions: dict) -> tuple[dict, dict, dict, dict, dict]:
        observations, rewards, terminations, truncations, infos = self.env.step(actions)
        observations, infos = self._split(observations, infos)
        return observations, rewards, terminations, truncations, infos


def make_env(players: int, **options: Any) -> MaskInInfo:
    return MaskInInfo(island_fortress_v0.parallel_env(num_players=players, **options))


def build_agent(players: int, learn_step: int, seed: int) -> IPPO:
    torch.manual_seed(seed)
    env = make_env(players)
    agents = env.possible_agents
    return IPPO(
        observation_spaces=[env.observation_space(a) for a in agents],
        action_spaces=[env.action_space(a) for a in agents],
        agent_ids=agents,
        net_config={"encoder_config": {"hidden_size": [64]}, "head_config": {"hidden_size": [64]}},
        batch_size=64,
        lr=3e-4,
        learn_step=learn_step,
        update_epochs=2,
        device="cpu",
    )


def train(players: int = 2, steps: int = 512, seed: int = 0) -> IPPO:
    """AgileRL's own loop: ``train_multi_agent_on_policy``, learning every ``steps // 2`` steps."""
    learn_step = max(64, steps // 2)
    agent = build_agent(players, learn_step, seed)
    env = make_env(players)
    try:
        population, _ = train_multi_agent_on_policy(
            env=env,
            env_name="island_fortress_v0",
            algo="IPPO",
            pop=[agent],
            sum_scores=False,
            max_steps=steps,
            evo_steps=learn_step,
            eval_loop=1,
            eval_steps=64,
            verbose=False,
        )
    finally:
        env.close()
    return population[0]


def play(agent: IPPO, players: int = 2, games: int = 2, seed: int = 0) -> dict[str, Any]:
    """Seat 0 played by the trained policy (sampled from its masked distribution), the others by
    random legal actions; counts its wins and checks every action it took (``PASS`` included)."""
    agent.set_training_mode(False)
    rng = np.random.default_rng(seed)
    wins = decisions = 0
    for _ in range(games):
        env = make_env(players)
        observations, infos = env.reset(seed=int(rng.integers(2**31)))
        while env.agents:
            batched = {a: o[np.newaxis] for a, o in observations.items()}
            chosen, *_ = agent.get_action(obs=batched, infos=infos)
            actions = {}
            for a in env.agents:
                legal = np.flatnonzero(infos[a]["action_mask"])
                if a == "player_0":
                    actions[a] = int(np.asarray(chosen[a]).ravel()[0])
                    assert actions[a] in legal, f"the policy chose {actions[a]}, not in its mask"
                    decisions += 1
                else:
                    actions[a] = int(rng.choice(legal))
            observations, _, _, _, infos = env.step(actions)
        wins += int(infos["player_0"]["won"])
    return {"games": games, "wins": wins, "decisions": decisions}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--players", type=int, default=2, choices=[2, 3, 4])
    parser.add_argument("--steps", type=int, default=2048, help="environment steps to train for")
    parser.add_argument("--games", type=int, default=4, help="games played after training")
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args()
    torch.set_num_threads(1)
    agent = train(args.players, args.steps, args.seed)
    result = play(agent, args.players, args.games, args.seed)
    print(
        f"IPPO trained {args.steps} steps; against random seats it won {result['wins']} of "
        f"{result['games']} games ({result['decisions']} actions, every one legal)"
    )


if __name__ == "__main__":
    main()
