"""Island Fortress on Ray RLlib: multi-agent PPO, one shared masked policy for every seat.

    pip install torch==2.13.0 && pip install -e ".[train,rllib]"    # the README's "Install with pip"
    python examples/rllib_ppo.py --iterations 2     # a local Ray; --address auto on a cluster

Importing ``island_fortress_env.adapters.rllib`` registers the env as "island_fortress_v0"
(a turn-based MultiAgentEnv whose observations are {"observations", "action_mask"}, the keys of
RLlib's action-masking examples). Its RLModule is the project's ActorCritic with illegal logits
masked, so the trained weights export to a checkpoint that ``island-fortress evaluate`` plays.
For a full run with TensorBoard, checkpoints and evaluation use
``island-fortress train --backend rllib --config configs/rllib.yaml``.
"""

import argparse
import tempfile
from pathlib import Path

import ray
from ray.rllib.algorithms.ppo import PPOConfig

from island_fortress_env.adapters import rllib as if_rllib
from island_fortress_env.training.evaluate import evaluate, format_table

parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
parser.add_argument("--iterations", type=int, default=2)
parser.add_argument("--num-players", type=int, default=3)
parser.add_argument("--address", default=None, help="a running Ray cluster (HOST:PORT or auto)")
args = parser.parse_args()

if args.address:
    ray.init(address=args.address)
else:
    ray.init(num_cpus=2, include_dashboard=False)

config = (
    PPOConfig()
    .environment(if_rllib.ENV_NAME, env_config={"num_players": args.num_players})
    .multi_agent(policies={if_rllib.SHARED_POLICY}, policy_mapping_fn=if_rllib.shared_policy)
    .rl_module(rl_module_spec=if_rllib.module_spec(cnn_channels=16, hidden=64))
    .env_runners(num_env_runners=1)
    .training(train_batch_size_per_learner=500, minibatch_size=250, num_epochs=2, lr=3e-4)
    .callbacks(if_rllib.IllegalMoveMetrics)
    .debugging(seed=0)
)
algo = config.build_algo()
for i in range(args.iterations):
    runners = algo.train()["env_runners"]
    print(
        f"iteration {i + 1}: {runners['num_env_steps_sampled_lifetime']:.0f} env steps, "
        f"mean game length {runners.get('episode_len_mean', float('nan')):.0f}, "
        f"illegal moves {runners.get(if_rllib.ILLEGAL_MOVES, 0):.0f}"
    )

with tempfile.TemporaryDirectory() as tmp:
    checkpoint = algo.save_to_path(str(Path(tmp) / "rllib"))  # RLlib's own checkpoint
    policy = if_rllib.export_native_checkpoint(checkpoint, Path(tmp) / "rllib_ppo.zip")
    algo.stop()
    ray.shutdown()
    # The exported policy against the built-in agents, through the public PettingZoo env.
    specs = [str(policy)] + ["random"] * (args.num_players - 1)
    print(format_table(evaluate(specs, games=args.num_players, seed=0)))
