"""Tianshou: masked DQN against a random masked opponent, as in Tianshou's tic-tac-toe example.

The environment goes through Tianshou's own ``PettingZooEnv`` unchanged: it turns the
``{"observation", "action_mask"}`` dict into ``obs`` / ``mask``, DQN masks its Q-values and
its epsilon-greedy exploration with ``mask``, and the random opponent samples legal actions.

    pip install torch==2.13.0 && pip install -e ".[tianshou]"    # the README's "Install with pip"
    python examples/tianshou_dqn.py --epoch 1 --epoch-num-steps 200
"""

from __future__ import annotations

import argparse

import numpy as np
import torch
from tianshou.algorithm import DQN, MARLRandomDiscreteMaskedOffPolicyAlgorithm, MultiAgentOffPolicyAlgorithm
from tianshou.algorithm.modelfree.dqn import DiscreteQLearningPolicy
from tianshou.algorithm.optim import AdamOptimizerFactory
from tianshou.data import Collector, CollectStats, VectorReplayBuffer
from tianshou.env import DummyVectorEnv
from tianshou.env.pettingzoo_env import PettingZooEnv
from tianshou.trainer import OffPolicyTrainerParams
from tianshou.utils.net.common import Net

from island_fortress_env import island_fortress_v0


def get_env() -> PettingZooEnv:
    return PettingZooEnv(island_fortress_v0.env(num_players=2))


def get_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--epoch", type=int, default=1)
    parser.add_argument("--epoch-num-steps", type=int, default=1000)
    parser.add_argument("--collection-step-num-env-steps", type=int, default=50)
    parser.add_argument("--num-train-envs", type=int, default=2)
    parser.add_argument("--buffer-size", type=int, default=20_000)
    parser.add_argument("--batch-size", type=int, default=64)
    parser.add_argument("--hidden-sizes", type=int, nargs="*", default=[256, 256])
    parser.add_argument("--lr", type=float, default=1e-4)
    parser.add_argument("--threads", type=int, default=1, help="torch threads (default 1)")
    return parser


def train(args: argparse.Namespace) -> tuple[object, VectorReplayBuffer]:
    """Train player_0 (DQN) against a random player_1; return the result and the replay buffer."""
    np.random.seed(args.seed)  # noqa: NPY002  (Tianshou explores with NumPy's global generator)
    torch.manual_seed(args.seed)
    env = get_env()
    observation_space = env.observation_space["observation"]
    net = Net(
        state_shape=observation_space.shape, action_shape=env.action_space.n, hidden_sizes=args.hidden_sizes
    )
    learner = DQN(
        policy=DiscreteQLearningPolicy(
            model=net, action_space=env.action_space, eps_training=0.1, eps_inference=0.0
        ),
        optim=AdamOptimizerFactory(lr=args.lr),
        n_step_return_horizon=3,
        gamma=0.99,
        target_update_freq=100,
    )
    opponent = MARLRandomDiscreteMaskedOffPolicyAlgorithm(action_space=env.action_space)
    algorithm = MultiAgentOffPolicyAlgorithm(algorithms=[learner, opponent], env=env)

    train_envs = DummyVectorEnv([get_env for _ in range(args.num_train_envs)])
    test_envs = DummyVectorEnv([get_env for _ in range(1)])
    train_envs.seed(args.seed)
    test_envs.seed(args.seed + 1000)
    buffer = VectorReplayBuffer(args.buffer_size, len(train_envs))
    train_collector = Collector[CollectStats](algorithm, train_envs, buffer, exploration_noise=True)
    test_collector = Collector[CollectStats](algorithm, test_envs, exploration_noise=False)
    train_collector.reset()
    train_collector.collect(n_step=args.batch_size * args.num_train_envs)

    result = algorithm.run_training(
        OffPolicyTrainerParams(
            training_collector=train_collector,
            test_collector=test_collector,
            max_epochs=args.epoch,
            epoch_num_steps=args.epoch_num_steps,
            collection_step_num_env_steps=args.collection_step_num_env_steps,
            test_step_num_episodes=1,
            batch_size=args.batch_size,
            update_step_num_gradient_steps_per_sample=0.1,
            test_in_training=False,
            show_progress=False,
            multi_agent_return_reduction=lambda rews: rews[:, 0],  # player_0's return
        )
    )
    return result, buffer


def every_stored_action_legal(buffer: VectorReplayBuffer) -> bool:
    stored = buffer[buffer.sample_indices(0)]  # every filled slot of every sub-buffer
    return bool(stored.obs.mask[np.arange(len(stored)), stored.act].all())


def main() -> None:
    args = get_parser().parse_args()
    # A small network, batches of 64 and a game step between torch calls: the calls are too
    # small to split, so more threads only wait on each other and on the game. With torch's
    # default (a thread per core) `--epoch 1 --epoch-num-steps 300` runs about 2.5x slower on a
    # busy 2-core machine.
    torch.set_num_threads(args.threads)
    result, buffer = train(args)
    print(result)
    print(f"{len(buffer)} stored transitions, every action legal: {every_stored_action_legal(buffer)}")


if __name__ == "__main__":
    main()
