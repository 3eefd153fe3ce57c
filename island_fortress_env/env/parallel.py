"""Island Fortress through PettingZoo's Parallel API: every live seat submits an action each step.

    from island_fortress_env import island_fortress_v0
    env = island_fortress_v0.parallel_env(num_players=3)
    observations, infos = env.reset(seed=42)
    while env.agents:
        actions = {a: env.action_space(a).sample(observations[a]["action_mask"]) for a in env.agents}
        observations, rewards, terminations, truncations, infos = env.step(actions)

The game is turn-based, so this view is the one JaxMARL gives Hanabi: one seat is to move, and
every other seat's only legal action is ``PASS``, one id more than the game's table
(``PASS = NUM_ACTIONS``; the action space is ``Discrete(NUM_ACTIONS + 1)``). The seat to move
gets its legal mask (``PASS`` never in it), every other seat a mask holding only ``PASS``, and once
the game is over every seat's mask holds only ``PASS`` (no mask is ever all zeros). A step applies
the mover's action to the game, exactly as the AEC env's ``step`` does; a waiting seat may also
leave its ``PASS`` out of the dict.

Observations are the AEC env's: ``{"observation": float32[OBS_SIZE], "action_mask":
int8[NUM_ACTIONS + 1]}``, each seat's own view (hidden information excluded). Rewards are the AEC
env's rewards of that step (``reward=`` as there), so a seat's rewards over a game add up to its
AEC return; ``infos[agent]`` is ``{"score", "won"}`` as there. Every seat terminates on the step
that ends the game, and ``env.agents`` is then empty; nothing is truncated.

An action is checked before anything changes: a waiting seat's action other than ``PASS``, the
mover's ``PASS`` or illegal action, or an action that is not an integer raises
``IllegalActionError`` (a ``ValueError``) naming the seat and the problem (the mover's illegal
action with the AEC env's message: the action, the decision and the legal choices), and the game
is left as it was; so does a dict without the mover's action or with an agent that is not
playing, or actions that are not a dict (``ValueError``). With ``illegal_action="terminate"``
(as ``env()``'s), an illegal action ends the game instead: each offending seat gets -1, the others
0.

Every other option (``num_players``, the variants, ``reward``, ``render_mode``, ``render_seat``,
``backend``) and the seeding rule are the AEC env's, checked by it (``ConfigError``). The game's
state is ``env.game_state``, the global state ``env.state()`` (hidden information included: for
centralised critics only).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, ClassVar

import numpy as np
from gymnasium import spaces
from gymnasium.utils import EzPickle
from pettingzoo import ParallelEnv
from pettingzoo.utils.env_logger import EnvLogger

from island_fortress_env.engine import ConfigError, State
from island_fortress_env.engine.actions import NUM_ACTIONS
from island_fortress_env.engine.config import check_option_names, option_names
from island_fortress_env.engine.state import IllegalActionError, action_id
from island_fortress_env.env.aec import ENV_OPTIONS, ILLEGAL_ACTION_MODES, _box, raw_env
from island_fortress_env.env.observation import OBS_HIGH, OBS_LOW, OBS_SIZE, action_mask

PASS = NUM_ACTIONS  # a waiting seat's one action in this view (not an action of the game)
PARALLEL_ACTIONS = NUM_ACTIONS + 1
ILLEGAL_REWARD = -1.0  # illegal_action="terminate": each offending seat's reward


def _pass_mask() -> np.ndarray:
    mask = np.zeros(PARALLEL_ACTIONS, dtype=np.int8)
    mask[PASS] = 1
    return mask


def _action(value: Any) -> int:
    """An action id: an integer (numpy's too) or a one-element integer array; anything else
    raises ``IllegalActionError``."""
    if isinstance(value, np.ndarray) and value.size == 1 and np.issubdtype(value.dtype, np.integer):
        return int(value.reshape(()))
    try:
        return action_id(value)
    except IllegalActionError:
        raise IllegalActionError(
            f"illegal action {value!r}: actions are integers 0..{PASS} ({PASS} is PASS)"
        ) from None


class raw_parallel_env(ParallelEnv, EzPickle):
    """The Parallel view (see the module doc); ``illegal_action`` is ``"raise"`` or
    ``"terminate"``, every other option the AEC ``raw_env``'s."""

    metadata: ClassVar[dict[str, Any]] = {
        "render_modes": raw_env.metadata["render_modes"],
        "name": "island_fortress_v0",
        "render_fps": raw_env.metadata["render_fps"],
    }

    def __init__(self, illegal_action: str = "raise", **options: Any) -> None:
        EzPickle.__init__(self, illegal_action=illegal_action, **options)
        check_option_names(options, (*option_names(), *ENV_OPTIONS))
        if illegal_action not in ILLEGAL_ACTION_MODES:
            raise ConfigError(f"illegal_action must be one of {ILLEGAL_ACTION_MODES}, not {illegal_action!r}")
        self.illegal_action = illegal_action
        self._aec = raw_env(**options)  # every other option is checked here
        self.render_mode = self._aec.render_mode
        self.possible_agents = self._aec.possible_agents[:]
        self.agents: list[str] = []
        self.state_space = self._aec.state_space
        self.action_spaces = {a: spaces.Discrete(PARALLEL_ACTIONS) for a in self.possible_agents}
        self.observation_spaces = {
            a: spaces.Dict(
                {
                    "observation": _box("observation", OBS_LOW, OBS_HIGH, OBS_SIZE, np.float32),
                    "action_mask": _box("parallel_action_mask", 0, 1, PARALLEL_ACTIONS, np.int8),
                }
            )
            for a in self.possible_agents
        }
        self._over = True  # no game until reset()

    def observation_space(self, agent: str) -> spaces.Space:
        return self.observation_spaces[agent]

    def action_space(self, agent: str) -> spaces.Space:
        return self.action_spaces[agent]

    @property
    def game_state(self) -> State:
        """The game's state (an engine State or a CoreState); only after reset()."""
        return self._aec.game_state

    @game_state.setter
    def game_state(self, state: State) -> None:
        self._aec.game_state = state

    def reset(
        self, seed: int | None = None, options: dict | None = None
    ) -> tuple[dict[str, dict[str, np.ndarray]], dict[str, dict[str, int]]]:
        """Start a game (the AEC env's seeding rule: a seed makes the game reproducible, none
        continues the env's generator; a bad seed raises ``SeedError`` and changes nothing)."""
        self._aec.reset(seed=seed, options=options)
        self._over = False
        self.agents = self.possible_agents[:]
        return self._observations(), self._infos()

    def observe(self, agent: str) -> dict[str, np.ndarray]:
        """``agent``'s observation and this view's mask (its legal actions when it is to move,
        else only ``PASS``)."""
        state = self._aec.game_state  # before reset(): AttributeError naming reset()
        seat = self._aec.agent_name_mapping[agent]
        observation = self._aec.encoder.encode(state, seat)
        if self._over or state.is_terminal() or seat != state.current_player():
            mask = _pass_mask()
        else:
            mask = np.zeros(PARALLEL_ACTIONS, dtype=np.int8)
            action_mask(state, mask[:NUM_ACTIONS])
        return {"observation": observation, "action_mask": mask}

    def step(self, actions: dict[str, Any]) -> tuple[dict, dict, dict, dict, dict]:
        """Apply the mover's action (see the module doc for what is checked first)."""
        if self._over:
            raise ValueError("the game is over (or not started): call reset() first")
        state = self._aec.game_state
        mover = self.possible_agents[state.current_player()]
        if not isinstance(actions, Mapping):
            raise ValueError(
                f"the actions must be a dict of agent names to actions, not {type(actions).__name__}; "
                f"{mover} is to move ('{state.decision_name()}')"
            )
        unknown = [a for a in actions if a not in self.agents]
        if unknown:
            raise ValueError(f"actions for agents that are not playing: {unknown}; playing: {self.agents}")
        if mover not in actions:
            raise ValueError(f"no action for {mover}, the seat to move ('{state.decision_name()}')")
        offenders: dict[str, IllegalActionError] = {}
        for agent, value in actions.items():
            try:
                self._check(agent, mover, value, state)
            except IllegalActionError as error:
                if self.illegal_action == "raise":
                    raise
                offenders[agent] = error
        live = self.agents
        if offenders:
            EnvLogger.warn_on_illegal_move()
            rewards = {a: ILLEGAL_REWARD if a in offenders else 0.0 for a in live}
        else:
            self._aec.step(_action(actions[mover]))
            rewards = {a: float(self._aec.rewards[a]) for a in live}
        over = bool(offenders) or state.is_terminal()
        self._over = over
        observations = self._observations()
        terminations = dict.fromkeys(live, over)
        truncations = dict.fromkeys(live, False)
        infos = self._infos()
        if over:
            self.agents = []
        return observations, rewards, terminations, truncations, infos

    def _check(self, agent: str, mover: str, value: Any, state: State) -> None:
        """Raise ``IllegalActionError`` unless ``value`` is ``agent``'s legal action in this view."""
        try:
            action = _action(value)
        except IllegalActionError as error:
            raise IllegalActionError(f"{agent}: {error}") from None
        if agent != mover:
            if action != PASS:
                raise IllegalActionError(
                    f"{agent}: illegal action {action}: {mover} is to move, so {agent}'s one legal "
                    f"action is PASS ({PASS})"
                )
        elif action == PASS:
            raise IllegalActionError(
                f"{agent}: PASS ({PASS}) is for the seats not to move; {agent} is to move "
                f"('{state.decision_name()}'), legal: {list(state.legal_actions()[:12])}"
            )
        elif not 0 <= action < NUM_ACTIONS or action not in state.legal_actions():
            raise IllegalActionError(state._illegal_message(action))  # the AEC env's message

    def _observations(self) -> dict[str, dict[str, np.ndarray]]:
        return {a: self.observe(a) for a in self.agents}

    def _infos(self) -> dict[str, dict[str, int]]:
        return {a: dict(self._aec.infos[a]) for a in self.agents}

    def state(self) -> np.ndarray:
        """The global state (``state_space``), hidden information included: for centralised
        critics in training, never a playing policy's input."""
        return self._aec.state()

    def render(self) -> str | np.ndarray | None:
        """The AEC env's ``render`` (``render_mode`` and ``render_seat`` as there)."""
        return self._aec.render()

    def close(self) -> None:
        self._aec.close()


def parallel_env(illegal_action: str = "raise", **options: Any) -> raw_parallel_env:
    """The Parallel view, as ``env()`` is the AEC one: ``illegal_action="raise"`` (default) raises
    ``IllegalActionError`` and changes nothing; ``"terminate"`` ends the game, each offender -1."""
    return raw_parallel_env(illegal_action=illegal_action, **options)
