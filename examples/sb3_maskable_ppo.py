"""Stable-Baselines3: sb3-contrib's MaskablePPO on one seat, the other seats played by opponents.

SB3 trains single-agent Gymnasium envs, so ``training.selfplay.SelfPlayEnv`` gives it one seat
of the PettingZoo game (the learner's seat rotates between games) and the ``action_masks()``
method that MaskablePPO asks for. ``island-fortress train`` is the full version of this
(self-play snapshots, TensorBoard, checkpoints); this file is the smallest working loop.

    pip install torch==2.13.0 && pip install -e ".[train]"    # the README's "Install with pip"
    python examples/sb3_maskable_ppo.py --timesteps 2048 --games 4
"""

from __future__ import annotations

import argparse

import torch
from sb3_contrib import MaskablePPO

from island_fortress_env.training.league_env import LeagueEnv as SelfPlayEnv


def train(timesteps: int, seed: int = 0) -> MaskablePPO:
    env = SelfPlayEnv(num_players=2, opponents={"random": 1.0}, seed=seed)
    model = MaskablePPO("MlpPolicy", env, n_steps=256, batch_size=64, seed=seed, verbose=0)
    return model.learn(total_timesteps=timesteps)


def play(model: MaskablePPO, games: int, seed: int = 100) -> tuple[float, bool]:
    """Mean win share of the trained seat against random play, and whether every move was legal."""
    env = SelfPlayEnv(num_players=2, opponents={"random": 1.0}, seed=seed)
    wins, legal = 0.0, True
    for g in range(games):
        obs, _ = env.reset(seed=seed + g)
        done = False
        while not done:
            masks = env.action_masks()
            action, _ = model.predict(obs, action_masks=masks, deterministic=True)
            legal &= bool(masks[int(action)])
            obs, _reward, terminated, truncated, info = env.step(int(action))
            done = terminated or truncated
        wins += info["episode_stats"]["win"]
    return wins / games, legal


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--timesteps", type=int, default=2048)
    parser.add_argument("--games", type=int, default=4)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--threads", type=int, default=1, help="torch threads (default 1)")
    args = parser.parse_args()
    # One game, a small network and batches of 64: each torch call is too small to split, so
    # more threads only wait on each other and on the game, which runs between the calls. With
    # torch's default (a thread per core) `--timesteps 1024 --games 2` runs about 6x slower on a
    # busy 2-core machine.
    torch.set_num_threads(args.threads)
    model = train(args.timesteps, args.seed)
    win_share, legal = play(model, args.games)
    print(
        f"after {args.timesteps} steps: win share {win_share:.2f} against random, every move legal: {legal}"
    )
    if not legal:
        raise SystemExit("an illegal move was played")


if __name__ == "__main__":
    main()
