"""skrl: MAPPO (or IPPO) on the game's Parallel API through skrl's own PettingZoo wrapper.

``wrap_env(island_fortress_v0.parallel_env(...), wrapper="pettingzoo")`` is skrl's route for
PettingZoo's Parallel API. skrl hands a model each seat's observation as one flat tensor (the
``action_mask`` and ``observation`` entries of the observation dict, in the space's order), so
the policy unflattens it with skrl's ``unflatten_tensorized_space`` and masks its logits: it only
ever picks the mover's legal actions, and ``PASS`` for every other seat. The critic reads the
global state (``env.state()``, hidden information included), as MAPPO's centralised critic does.

    pip install torch==2.13.0 && pip install -e ".[skrl]"    # the README's "Install with pip"
    python examples/skrl_mappo.py --rollouts 256 --iterations 3
"""

from __future__ import annotations

import argparse
import dataclasses
import tempfile

import torch
from skrl.envs.wrappers.torch import wrap_env
from skrl.memories.torch import RandomMemory
from skrl.models.torch import CategoricalMixin, DeterministicMixin, Model
from skrl.multi_agents.torch.ippo import IPPO, IPPO_CFG
from skrl.multi_agents.torch.mappo import MAPPO, MAPPO_CFG
from skrl.trainers.torch import SequentialTrainer
from skrl.utils import set_seed
from skrl.utils.spaces.torch import unflatten_tensorized_space
from torch import nn

from island_fortress_env import island_fortress_v0


class MaskedPolicy(CategoricalMixin, Model):
    """A small MLP over the seat's observation; illegal actions get no probability."""

    def __init__(self, observation_space, action_space, device, hidden: int = 64) -> None:
        Model.__init__(self, observation_space=observation_space, action_space=action_space, device=device)
        CategoricalMixin.__init__(self, unnormalized_log_prob=True)
        size = observation_space["observation"].shape[0]
        self.net = nn.Sequential(nn.Linear(size, hidden), nn.Tanh(), nn.Linear(hidden, action_space.n))

    def compute(self, inputs, role=""):
        view = unflatten_tensorized_space(self.observation_space, inputs["observations"])
        logits = self.net(view["observation"])
        return logits.masked_fill(view["action_mask"] < 0.5, -1e9), {}


class Critic(DeterministicMixin, Model):
    """The value of a state: the global state (MAPPO) or the seat's own view (IPPO)."""

    def __init__(self, observation_space, state_space, device, centralised: bool, hidden: int = 64) -> None:
        Model.__init__(self, observation_space=observation_space, state_space=state_space, device=device)
        DeterministicMixin.__init__(self)
        self.key = "states" if centralised else "observations"
        size = self.num_states if centralised else self.num_observations
        self.net = nn.Sequential(nn.Linear(size, hidden), nn.Tanh(), nn.Linear(hidden, 1))

    def compute(self, inputs, role=""):
        return self.net(inputs[self.key]), {}


def make_env(players: int = 2):
    return wrap_env(island_fortress_v0.parallel_env(num_players=players), wrapper="pettingzoo", verbose=False)


def make_agent(env, algorithm: str = "mappo", rollouts: int = 256):
    """One skrl multi-agent (MAPPO or IPPO) with a policy, a critic and a memory per seat."""
    centralised = algorithm == "mappo"
    models, memories = {}, {}
    for uid in env.possible_agents:
        observation_space = env.observation_spaces[uid]
        models[uid] = {
            "policy": MaskedPolicy(observation_space, env.action_spaces[uid], env.device),
            "value": Critic(observation_space, env.state_spaces[uid], env.device, centralised),
        }
        memories[uid] = RandomMemory(memory_size=rollouts, num_envs=env.num_envs, device=env.device)
    cfg_class, agent_class = (MAPPO_CFG, MAPPO) if centralised else (IPPO_CFG, IPPO)
    cfg = cfg_class(rollouts=rollouts, learning_epochs=2, mini_batches=2, learning_rate=3e-4)
    for field in dataclasses.fields(cfg):  # skrl 2.1 takes an empty default dict for a per-agent one
        if getattr(cfg, field.name) == {}:
            setattr(cfg, field.name, {uid: {} for uid in env.possible_agents})
    cfg.experiment.directory = tempfile.mkdtemp(prefix="skrl-island-fortress-")
    cfg.experiment.write_interval = 0
    cfg.experiment.checkpoint_interval = 0
    return agent_class(
        possible_agents=env.possible_agents,
        models=models,
        memories=memories,
        observation_spaces=env.observation_spaces,
        state_spaces=env.state_spaces,
        action_spaces=env.action_spaces,
        device=env.device,
        cfg=cfg,
    )


def train(
    players: int = 2, algorithm: str = "mappo", rollouts: int = 256, iterations: int = 3, seed: int = 0
):
    """``iterations`` updates of ``rollouts`` steps each; returns the env and the trained agent."""
    set_seed(seed)
    env = make_env(players)
    agent = make_agent(env, algorithm, rollouts)
    trainer = SequentialTrainer(
        env=env,
        agents=agent,
        cfg={"timesteps": rollouts * iterations, "headless": True, "close_environment_at_exit": False},
    )
    trainer.train()
    return env, agent


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--players", type=int, choices=(2, 3, 4), default=2)
    parser.add_argument("--algorithm", choices=("mappo", "ippo"), default="mappo")
    parser.add_argument("--rollouts", type=int, default=256, help="steps collected per update")
    parser.add_argument("--iterations", type=int, default=3)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--threads", type=int, default=1, help="torch threads (default 1)")
    args = parser.parse_args()
    torch.set_num_threads(args.threads)
    env, _ = train(args.players, args.algorithm, args.rollouts, args.iterations, args.seed)
    print(f"{args.algorithm}: {args.iterations} updates of {args.rollouts} steps, {args.players} players")
    env.close()


if __name__ == "__main__":
    main()
