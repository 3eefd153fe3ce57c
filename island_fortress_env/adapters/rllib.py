"""Island Fortress on Ray RLlib (new API stack): env, action-masking RLModule, checkpoint export.

    import island_fortress_env.integrations.rllib as if_rllib  # registers "island_fortress_v0"
    from ray.rllib.algorithms.ppo import PPOConfig

    config = (
        PPOConfig()
        .environment(if_rllib.ENV_NAME, env_config={"num_players": 3})
        .multi_agent(policies={"shared"}, policy_mapping_fn=if_rllib.shared_policy)
        .rl_module(rl_module_spec=if_rllib.module_spec(num_players=3))
    )

* ``IslandFortressEnv`` is a turn-based ``MultiAgentEnv`` in the style of RLlib's own
  board-game examples (``TicTacToe``, ``MultiAgentConnect4``): each ``reset``/``step`` returns
  an observation only for the agent to move (the same agent often moves several times in a
  row), every agent's reward as it occurs (RLlib credits rewards to agents that are waiting),
  and at the end of the game a final observation for every agent. Observations are
  ``{"observations": float32[OBS_SIZE], "action_mask": int8[NUM_ACTIONS]}``: the keys of
  RLlib's action-masking examples (``ActionMaskEnv``, ``ActionMaskingRLModule``).
* An unmasked action cannot crash a rollout: the env is ``island_fortress_v0.env(
  illegal_action="terminate")`` by default (PettingZoo's classic-games convention: the game
  ends, the offender gets -1, the others 0, ``infos[...]["illegal_move"]`` is 1). RLlib's env
  pre-check steps such an unmasked random action; the masked module below never does.
* ``IslandFortressRLModule`` is a ``TorchRLModule`` with ``ValueFunctionAPI`` whose only
  parameters are a ``network.ActorCritic`` (``module.net``): illegal logits are set to the
  dtype's minimum, so sampling and argmax never pick them, and the weights convert one to one
  to the project's checkpoint (``export_native_checkpoint``; also
  ``island-fortress rllib-convert CHECKPOINT_DIR OUT.zip``).
"""

from __future__ import annotations

import datetime as dt
import json
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

import gymnasium as gym
import numpy as np
import torch
from ray.rllib.callbacks.callbacks import RLlibCallback
from ray.rllib.core import COMPONENT_LEARNER, COMPONENT_LEARNER_GROUP, COMPONENT_RL_MODULE
from ray.rllib.core.columns import Columns
from ray.rllib.core.rl_module.apis.value_function_api import ValueFunctionAPI
from ray.rllib.core.rl_module.multi_rl_module import MultiRLModuleSpec
from ray.rllib.core.rl_module.rl_module import RLModule, RLModuleSpec
from ray.rllib.core.rl_module.torch import TorchRLModule
from ray.rllib.env.multi_agent_env import MultiAgentEnv
from ray.tune.registry import register_env

from island_fortress_env import island_fortress_v0
from island_fortress_env.agents.checkpoint import META_MEMBER, CheckpointError, save_policy
from island_fortress_env.agents.network import ActorCritic, masked_logits

ENV_NAME = "island_fortress_v0"
SHARED_POLICY = "shared"  # the one module every seat plays
OBS_KEY = "observations"  # RLlib's action-masking convention (the PettingZoo env says "observation")
MASK_KEY = "action_mask"
NETWORK_KEYS = ("cnn_channels", "hidden")  # ActorCritic's size arguments, read from model_config
ILLEGAL_MOVES = "illegal_moves_lifetime"  # env-runner metric logged by IllegalMoveMetrics


class IslandFortressEnv(MultiAgentEnv):
    """The game as a turn-based RLlib ``MultiAgentEnv``.

    ``config`` (RLlib's ``env_config``) takes ``island_fortress_v0.env()``'s keyword arguments:
    ``num_players``, ``reward``, ``illegal_action`` (here ``"terminate"`` by default) and any
    rules option or variant.
    """

    def __init__(self, config: Mapping[str, Any] | None = None) -> None:
        super().__init__()
        kwargs = {"illegal_action": "terminate", **dict(config or {})}
        self.aec = island_fortress_v0.env(**kwargs)
        raw = self.aec.unwrapped
        self.agents = self.possible_agents = list(raw.possible_agents)
        base = raw.observation_space(self.possible_agents[0])
        space = gym.spaces.Dict({OBS_KEY: base["observation"], MASK_KEY: base["action_mask"]})
        self.observation_spaces = dict.fromkeys(self.possible_agents, space)
        self.action_spaces = {a: raw.action_space(a) for a in self.possible_agents}
        self._mask: np.ndarray | None = None  # the mask the mover was shown

    def _observe(self, agent: str) -> dict[str, np.ndarray]:
        obs = self.aec.observe(agent)
        return {OBS_KEY: obs["observation"], MASK_KEY: obs["action_mask"]}

    def _infos(self, agents: Sequence[str], illegal: str | None = None) -> dict[str, dict]:
        infos = self.aec.infos
        return {a: {**infos.get(a, {}), "illegal_move": int(a == illegal)} for a in agents}

    def reset(self, *, seed: int | None = None, options: dict | None = None):
        self.aec.reset(seed=seed, options=options)
        self.agents = list(self.possible_agents)
        mover = self.aec.agent_selection
        obs = {mover: self._observe(mover)}
        self._mask = obs[mover][MASK_KEY]
        return obs, self._infos([mover])

    def step(self, action_dict: Mapping[str, Any]):
        mover = self.aec.agent_selection
        if mover not in action_dict:
            raise ValueError(f"it is {mover!r}'s turn, but the actions given are for {sorted(action_dict)}")
        action = int(action_dict[mover])
        assert self._mask is not None, "step() before reset()"
        illegal = not (0 <= action < len(self._mask) and self._mask[action])
        self.aec.step(action)  # an illegal action ends the game (illegal_action="terminate")
        rewards = {a: float(r) for a, r in self.aec.rewards.items()}
        over = all(self.aec.terminations[a] or self.aec.truncations[a] for a in self.possible_agents)
        if over:
            # Every agent gets its final observation; an illegal move is a terminal outcome.
            terminated = illegal or any(self.aec.terminations.values())
            obs = {a: self._observe(a) for a in self.possible_agents}
            terminateds = dict.fromkeys([*self.possible_agents, "__all__"], terminated)
            truncateds = dict.fromkeys([*self.possible_agents, "__all__"], not terminated)
            return (
                obs,
                rewards,
                terminateds,
                truncateds,
                self._infos(self.possible_agents, mover if illegal else None),
            )
        nxt = self.aec.agent_selection
        obs = {nxt: self._observe(nxt)}
        self._mask = obs[nxt][MASK_KEY]
        return obs, rewards, {"__all__": False}, {"__all__": False}, self._infos([nxt])

    def render(self) -> str | None:
        return self.aec.render()

    def close(self) -> None:
        self.aec.close()


def env_creator(config: Mapping[str, Any] | None = None) -> IslandFortressEnv:
    return IslandFortressEnv(config)


def register() -> None:
    """Register ``ENV_NAME`` with Ray Tune's registry (done on import; safe to repeat)."""
    register_env(ENV_NAME, env_creator)


register()


def shared_policy(agent_id: Any, episode: Any = None, **kwargs: Any) -> str:
    """``policy_mapping_fn``: every seat plays the one shared module (self-play)."""
    return SHARED_POLICY


class IllegalMoveMetrics(RLlibCallback):
    """Counts illegal moves (each ends its game) as the env-runner metric ``ILLEGAL_MOVES``
    (a lifetime sum): 0 for as long as the policy honours the action masks."""

    def on_episode_end(self, *, episode: Any, metrics_logger: Any = None, **kwargs: Any) -> None:
        if metrics_logger is None:
            return
        final = episode.get_infos(-1)  # every agent observes the end of the game
        illegal = sum(int(info.get("illegal_move", 0)) for info in final.values())
        metrics_logger.log_value(ILLEGAL_MOVES, illegal, reduce="lifetime_sum")


class IslandFortressRLModule(TorchRLModule, ValueFunctionAPI):
    """Masked actor-critic RLModule; its parameters are exactly a ``network.ActorCritic``.

    ``model_config``: ``cnn_channels`` and ``hidden`` (``ActorCritic``'s size arguments).
    The observation space must be the env's ``Dict`` with ``"observations"`` and
    ``"action_mask"``.
    """

    def setup(self) -> None:
        space = self.observation_space
        if not (isinstance(space, gym.spaces.Dict) and {OBS_KEY, MASK_KEY} <= set(space.spaces)):
            raise ValueError(
                f"IslandFortressRLModule needs a Dict observation space with keys {OBS_KEY!r} and "
                f"{MASK_KEY!r} (IslandFortressEnv's), got {space}"
            )
        shape = space[OBS_KEY].shape
        assert shape is not None and len(shape) == 1, f"flat observations expected, got shape {shape}"
        (obs_size,) = shape
        sizes = network_kwargs(self.model_config or {})
        self.net = ActorCritic(obs_size=int(obs_size), num_actions=int(self.action_space.n), **sizes)

    def _features_and_logits(self, batch: dict[str, Any]) -> tuple[torch.Tensor, torch.Tensor]:
        obs = batch[Columns.OBS]
        features = self.net.torso(obs[OBS_KEY])
        logits = masked_logits(self.net.policy_head(features), obs[MASK_KEY])
        return features, logits

    def _forward(self, batch: dict[str, Any], **kwargs: Any) -> dict[str, Any]:
        _, logits = self._features_and_logits(batch)
        return {Columns.ACTION_DIST_INPUTS: logits}

    def _forward_train(self, batch: dict[str, Any], **kwargs: Any) -> dict[str, Any]:
        features, logits = self._features_and_logits(batch)
        return {Columns.ACTION_DIST_INPUTS: logits, Columns.EMBEDDINGS: features}

    def compute_values(self, batch: dict[str, Any], embeddings: Any = None) -> torch.Tensor:
        if embeddings is None:
            embeddings = self.net.torso(batch[Columns.OBS][OBS_KEY])
        return self.net.value_head(embeddings).squeeze(-1)


def network_kwargs(model_config: Mapping[str, Any]) -> dict[str, Any]:
    """``ActorCritic`` size arguments from a ``model_config`` (other keys are RLlib's own)."""
    return {k: int(model_config[k]) for k in NETWORK_KEYS if k in model_config}


def module_spec(cnn_channels: int = 32, hidden: int = 128) -> MultiRLModuleSpec:
    """One shared ``IslandFortressRLModule`` (module id ``SHARED_POLICY``)."""
    spec = RLModuleSpec(
        module_class=IslandFortressRLModule,
        model_config={"cnn_channels": cnn_channels, "hidden": hidden},
    )
    return MultiRLModuleSpec(rl_module_specs={SHARED_POLICY: spec})


def module_dir(checkpoint_dir: str | Path, module_id: str = SHARED_POLICY) -> Path:
    """Where an ``Algorithm.save_to_path`` checkpoint keeps one module."""
    return (
        Path(checkpoint_dir) / COMPONENT_LEARNER_GROUP / COMPONENT_LEARNER / COMPONENT_RL_MODULE / module_id
    )


def export_native_checkpoint(
    checkpoint_dir: str | Path,
    out: str | Path,
    module_id: str = SHARED_POLICY,
    metadata: Mapping[str, Any] | None = None,
) -> Path:
    """Convert an RLlib checkpoint (a directory written by ``Algorithm.save_to_path``) to the
    project's native checkpoint ``out`` (a .zip that ``island-fortress evaluate`` loads).

    The metadata is ``metadata`` if given, else the ``island_fortress.json`` that
    ``training.rllib_backend`` writes into the checkpoint directory, if there is one.
    """
    checkpoint_dir = Path(checkpoint_dir)
    where = module_dir(checkpoint_dir, module_id)
    if not checkpoint_dir.is_dir():
        raise CheckpointError(f"RLlib checkpoint {str(checkpoint_dir)!r}: no such directory")
    if not where.is_dir():
        modules = sorted(p.name for p in where.parent.glob("*") if p.is_dir())
        raise CheckpointError(
            f"RLlib checkpoint {str(checkpoint_dir)!r}: no module {module_id!r} "
            f"(expected {str(where)!r}; modules found: {modules or 'none'})"
        )
    module = RLModule.from_checkpoint(where)
    net = getattr(module, "net", None)
    if not isinstance(net, ActorCritic):
        raise CheckpointError(
            f"RLlib checkpoint {str(checkpoint_dir)!r}: module {module_id!r} is a "
            f"{type(module).__name__}, not an IslandFortressRLModule, so it has no ActorCritic to export"
        )
    if metadata is None:
        meta_file = checkpoint_dir / META_MEMBER
        metadata = json.loads(meta_file.read_text("utf-8")) if meta_file.is_file() else {}
    meta = {
        **metadata,
        "rllib_checkpoint": str(checkpoint_dir.resolve()),
        "rllib_module_id": module_id,
        "exported": dt.datetime.now(dt.timezone.utc).isoformat(timespec="seconds"),
    }
    return save_policy(out, net, network_kwargs(module.model_config or {}), meta)
