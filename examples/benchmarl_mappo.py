"""BenchMARL: Island Fortress as a BenchMARL task, trained by its own Experiment (MAPPO or IPPO).

The task is written the way BenchMARL's own PettingZoo tasks are (``benchmarl.environments.
pettingzoo.common``): a ``TaskClass`` whose ``get_env_fun`` wraps the game's Parallel API
(``island_fortress_v0.parallel_env``) in TorchRL's ``PettingZooWrapper``, and a ``Task`` enum with
one member per table size. The seats form one group (``player``) and share the policy; the
masks of the Parallel view (the mover's legal actions, ``PASS`` for every other seat) reach the
policy as BenchMARL's ``action_mask``, so it only ever samples legal actions; the global state
(hidden information included) feeds MAPPO's centralised critic.

    pip install torch==2.13.0 && pip install -e ".[benchmarl]"    # the README's "Install with pip"
    python examples/benchmarl_mappo.py --iterations 3 --players 3
"""

from __future__ import annotations

import argparse
import tempfile
from collections.abc import Callable

import torch
from benchmarl.algorithms import IppoConfig, MappoConfig
from benchmarl.environments.common import Task, TaskClass
from benchmarl.experiment import Experiment, ExperimentConfig
from benchmarl.models.mlp import MlpConfig
from torchrl.data import Composite
from torchrl.envs import EnvBase, PettingZooWrapper

from island_fortress_env import island_fortress_v0

# Steps in a game, bounded with a wide margin (the OpenSpiel adapter's measured MAX_GAME_LENGTH).
MAX_GAME_LENGTH = {2: 1000, 3: 1500, 4: 2000}


class IslandFortressClass(TaskClass):
    """The game as a BenchMARL task; ``config`` holds ``parallel_env``'s options."""

    def get_env_fun(
        self, num_envs: int, continuous_actions: bool, seed: int | None, device
    ) -> Callable[[], EnvBase]:
        config = dict(self.config)
        return lambda: PettingZooWrapper(
            island_fortress_v0.parallel_env(**config),
            categorical_actions=True,
            return_state=True,
            seed=seed,
            device=device,
        )

    def supports_continuous_actions(self) -> bool:
        return False

    def supports_discrete_actions(self) -> bool:
        return True

    def has_render(self, env: EnvBase) -> bool:
        return False

    def max_steps(self, env: EnvBase) -> int:
        return MAX_GAME_LENGTH[self.config["num_players"]]

    def group_map(self, env: EnvBase) -> dict[str, list[str]]:
        return env.group_map

    def _only(self, env: EnvBase, key: str) -> Composite:
        spec = env.observation_spec.clone()
        for group in self.group_map(env):
            for name in list(spec[group].keys()):
                if name != key:
                    del spec[group, name]
        del spec["state"]
        return spec

    def observation_spec(self, env: EnvBase) -> Composite:
        return self._only(env, "observation")

    def action_mask_spec(self, env: EnvBase) -> Composite:
        return self._only(env, "action_mask")

    def info_spec(self, env: EnvBase) -> Composite:
        return self._only(env, "info")

    def state_spec(self, env: EnvBase) -> Composite:
        return Composite({"state": env.observation_spec["state"].clone()})

    def action_spec(self, env: EnvBase) -> Composite:
        return env.full_action_spec

    @staticmethod
    def env_name() -> str:
        return "island_fortress"


class IslandFortressTask(Task):
    """One task per table size."""

    TWO_PLAYERS = None
    THREE_PLAYERS = None
    FOUR_PLAYERS = None

    @staticmethod
    def associated_class():
        return IslandFortressClass

    def players(self) -> int:
        return {"TWO_PLAYERS": 2, "THREE_PLAYERS": 3, "FOUR_PLAYERS": 4}[self.name]


def make_experiment(
    players: int = 3, algorithm: str = "mappo", iterations: int = 3, frames: int = 600, seed: int = 0
) -> Experiment:
    """A short CPU experiment: ``iterations`` collections of ``frames`` steps, each learned from."""
    task = {2: IslandFortressTask.TWO_PLAYERS, 3: IslandFortressTask.THREE_PLAYERS}.get(
        players, IslandFortressTask.FOUR_PLAYERS
    )
    config = ExperimentConfig.get_from_yaml()
    config.max_n_iters = iterations
    config.max_n_frames = None
    config.on_policy_collected_frames_per_batch = frames
    config.on_policy_n_envs_per_worker = 2
    config.on_policy_n_minibatch_iters = 2
    config.on_policy_minibatch_size = frames // 2
    config.lr = 3e-4
    config.evaluation = False
    config.render = False
    config.loggers = ["csv"]
    config.create_json = False
    config.save_folder = tempfile.mkdtemp(prefix="benchmarl-island-fortress-")
    config.checkpoint_interval = 0
    config.checkpoint_at_end = False
    algorithm_config = {"mappo": MappoConfig, "ippo": IppoConfig}[algorithm].get_from_yaml()
    return Experiment(
        task=task.get_task(config={"num_players": task.players()}),
        algorithm_config=algorithm_config,
        model_config=MlpConfig(num_cells=[128], layer_class=torch.nn.Linear, activation_class=torch.nn.Tanh),
        critic_model_config=MlpConfig(
            num_cells=[128], layer_class=torch.nn.Linear, activation_class=torch.nn.Tanh
        ),
        seed=seed,
        config=config,
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--players", type=int, choices=(2, 3, 4), default=3)
    parser.add_argument("--algorithm", choices=("mappo", "ippo"), default="mappo")
    parser.add_argument("--iterations", type=int, default=3)
    parser.add_argument("--frames", type=int, default=600, help="steps collected per iteration")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--threads", type=int, default=1, help="torch threads (default 1)")
    args = parser.parse_args()
    torch.set_num_threads(args.threads)
    experiment = make_experiment(args.players, args.algorithm, args.iterations, args.frames, args.seed)
    experiment.run()
    done = f"{experiment.n_iters_performed} iterations, {experiment.total_frames} frames"
    print(f"{done}; logs in {experiment.folder_name}")


if __name__ == "__main__":
    main()
