"""A CleanRL-style masked PPO on the batched core: thousands of games per call, no Python per game.

``island_fortress_env.vector.make_gym`` is a Gymnasium ``VectorEnv`` whose games are stepped in C++
(EnvPool's shape): one learning seat per game, the other seats played by the heuristic or the
random player in C++, the legal actions in ``infos["action_mask"]``, a finished game replaced in
the same step. The loop below is CleanRL's ``ppo.py`` with an action mask: collect ``--steps``
decisions in each of ``--envs`` games, compute GAE, run clipped PPO epochs. ``island-fortress
train`` is the full trainer (self-play, league, every seat learning); this file is the smallest
loop over the batched API.

    pip install torch==2.13.0 && pip install -e ".[train]"    # the README's "Install with pip"
    python examples/vector_ppo.py --envs 256 --steps 64 --updates 20 --opponent random
"""

from __future__ import annotations

import argparse

import numpy as np
import torch
from torch import nn

from island_fortress_env import vector


class Agent(nn.Module):
    def __init__(self, obs_size: int, num_actions: int, hidden: int = 128) -> None:
        super().__init__()
        layers = [nn.Linear(obs_size, hidden), nn.Tanh(), nn.Linear(hidden, hidden), nn.Tanh()]
        self.torso = nn.Sequential(*layers)
        self.policy = nn.Linear(hidden, num_actions)
        self.value = nn.Linear(hidden, 1)

    def act(self, obs: torch.Tensor, mask: torch.Tensor, action: torch.Tensor | None = None):
        h = self.torso(obs)
        logits = self.policy(h).masked_fill(~mask, -1e9)  # illegal actions get no probability
        dist = torch.distributions.Categorical(logits=logits)
        if action is None:
            action = dist.sample()
        return action, dist.log_prob(action), dist.entropy(), self.value(h).squeeze(-1)


def train(
    envs: int = 256, steps: int = 64, updates: int = 20, opponent: str = "random", seed: int = 0
) -> tuple[Agent, list[float]]:
    """PPO against ``opponent``; returns the agent and each update's loss."""
    torch.manual_seed(seed)
    env = vector.make_gym(envs, num_players=(2, 3, 4), opponent=opponent, seed=seed, copy=False)
    obs_size, num_actions = env.single_observation_space.shape[0], env.single_action_space.n
    agent = Agent(obs_size, num_actions)
    optimizer = torch.optim.Adam(agent.parameters(), lr=3e-4, eps=1e-5)
    gamma, lam, clip, epochs, minibatches = 0.99, 0.95, 0.2, 2, 4
    buf_obs = torch.zeros(steps, envs, obs_size)
    buf_mask = torch.zeros(steps, envs, num_actions, dtype=torch.bool)
    buf_act, buf_logp, buf_rew, buf_done, buf_val = (torch.zeros(steps, envs) for _ in range(5))
    obs, infos = env.reset(seed=seed)
    next_obs, next_mask = torch.tensor(obs), torch.tensor(infos["action_mask"])
    next_done = torch.zeros(envs)
    losses = []
    for _ in range(updates):
        for t in range(steps):  # one call steps every game, the opponents' moves included
            buf_obs[t], buf_mask[t], buf_done[t] = next_obs, next_mask, next_done
            with torch.no_grad():
                action, logp, _, value = agent.act(next_obs, next_mask)
            buf_act[t], buf_logp[t], buf_val[t] = action, logp, value
            obs, reward, terminated, truncated, infos = env.step(action.numpy())
            buf_rew[t] = torch.tensor(reward)
            next_obs, next_mask = torch.tensor(obs), torch.tensor(infos["action_mask"])
            next_done = torch.tensor(np.logical_or(terminated, truncated), dtype=torch.float32)
        with torch.no_grad():  # GAE, bootstrapped from the value of the next decision
            next_value = agent.act(next_obs, next_mask)[3]
            advantages, last = torch.zeros(steps, envs), torch.zeros(envs)
            for t in reversed(range(steps)):
                nonterminal = 1.0 - (next_done if t == steps - 1 else buf_done[t + 1])
                following = next_value if t == steps - 1 else buf_val[t + 1]
                delta = buf_rew[t] + gamma * following * nonterminal - buf_val[t]
                advantages[t] = last = delta + gamma * lam * nonterminal * last
            returns = advantages + buf_val
        b_obs, b_mask = buf_obs.reshape(-1, obs_size), buf_mask.reshape(-1, num_actions)
        b_act, b_logp = buf_act.reshape(-1), buf_logp.reshape(-1)
        b_adv, b_ret = advantages.reshape(-1), returns.reshape(-1)
        batch = steps * envs
        for _ in range(epochs):
            order = torch.randperm(batch)
            for mb in order.split(batch // minibatches):
                _, logp, entropy, value = agent.act(b_obs[mb], b_mask[mb], b_act[mb].long())
                ratio = (logp - b_logp[mb]).exp()
                adv = (b_adv[mb] - b_adv[mb].mean()) / (b_adv[mb].std() + 1e-8)
                pg_loss = torch.max(-adv * ratio, -adv * ratio.clamp(1 - clip, 1 + clip)).mean()
                loss = pg_loss + 0.5 * (value - b_ret[mb]).pow(2).mean() - 0.01 * entropy.mean()
                optimizer.zero_grad()
                loss.backward()
                nn.utils.clip_grad_norm_(agent.parameters(), 0.5)
                optimizer.step()
        losses.append(loss.detach().item())
    env.close()
    return agent, losses


def win_rate(agent: Agent, opponent: str, games: int = 64, seed: int = 1000) -> float:
    """The greedy agent's share of won games against ``opponent`` (a win shared by tied winners
    counts as a win here), one game per slot."""
    env = vector.make_gym(games, num_players=(2, 3, 4), opponent=opponent, seed=seed)
    obs, infos = env.reset()
    result = np.full(games, np.nan)
    while np.isnan(result).any():
        with torch.no_grad():
            logits = agent.policy(agent.torso(torch.tensor(obs)))
        logits = logits.masked_fill(~torch.tensor(infos["action_mask"]), -1e9)
        obs, reward, terminated, _, infos = env.step(logits.argmax(-1).numpy())
        first = terminated & np.isnan(result)
        result[first] = reward[first] > 0
    return float(result.mean())


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--envs", type=int, default=256)
    parser.add_argument("--steps", type=int, default=64)
    parser.add_argument("--updates", type=int, default=20)
    parser.add_argument("--opponent", choices=vector.OPPONENTS, default="random")
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args()
    torch.set_num_threads(1)
    before = win_rate(Agent(1317, 380), args.opponent)
    agent, losses = train(args.envs, args.steps, args.updates, args.opponent, args.seed)
    after = win_rate(agent, args.opponent)
    print(f"{args.updates} updates of {args.envs * args.steps} decisions; last loss {losses[-1]:.3f}")
    print(f"win rate against {args.opponent}: {before:.1%} untrained -> {after:.1%} trained")


if __name__ == "__main__":
    main()
