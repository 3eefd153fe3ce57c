"""Island Fortress as a PettingZoo AEC environment (``pettingzoo.classic`` conventions).

    from island_fortress_env import island_fortress_v0
    env = island_fortress_v0.env(num_players=3, render_mode="ansi")
    env.reset(seed=42)
    for agent in env.agent_iter():
        observation, reward, termination, truncation, info = env.last()
        if termination or truncation:
            action = None
        else:
            mask = observation["action_mask"]
            action = env.action_space(agent).sample(mask)
        env.step(action)

Observations are ``{"observation": float32[OBS_SIZE], "action_mask": int8[NUM_ACTIONS]}``,
seat-relative and of one size for every table size and variant. The same agent often
moves several times in a row: a compound move is a sequence of small decisions.

Rendering (``render_mode=``): ``"ansi"`` returns the text board; ``"rgb_array"`` returns the
table as an H x W x 3 uint8 picture and ``"human"`` shows it in a pygame window (both need the
``[render]`` extra). Pictures show what ``render_seat`` may see (its own favor hand and sealed
bid, the rest as counts), or the whole table for a spectator (``render_seat=None``, default).
Without a render mode nothing is drawn.

Rewards (``reward=``): ``"win_loss"`` (default) pays once at the end, zero-sum: a sole winner
+1, each loser -1/(n-1), tied winners share the win; ``"score_margin"`` pays at the end
(own final score - best opponent's) / 50; ``"vp_delta"`` pays every step the change in each
player's score / 50 (the rewards add up to final score / 50).

Backends (``backend=``): ``"core"`` plays on the C++ core (``core.state.CoreState``, observations
and masks written in C++), ``"python"`` on the Python engine (``engine.State``); both play the same
games, byte for byte. The default (None) is the core where it is built, else the Python engine
with one warning per process saying why (``core.default_backend``).

Every option (the game's, ``render_mode``, ``render_seat``, ``reward``, ``backend`` and ``env()``'s
``illegal_action``) is validated: an unknown option or a bad value raises ``ConfigError`` (a
``ValueError``) naming it, and an unknown option's error lists every option accepted.

``infos[agent]`` has the same numeric keys at every step from ``reset()`` on (so vectorising
libraries can stack them): ``score`` (the seat's score so far, final at the end) and ``won``
(1 for a winner once the game is over, else 0; tied winners all get 1). The list of winners is
on the engine state, ``env.unwrapped.game_state.winners``.

``env.state()`` (PettingZoo's global state, ``env.state_space``) is one float32 vector of the
whole game **including the hidden information** (every hand, the deck order): for centralised
critics in training only. See ``island_fortress_env.global_state`` for its layout.
"""

from __future__ import annotations

import copy
from typing import Any, ClassVar, TypeVar

import numpy as np
from gymnasium import spaces
from gymnasium.utils import EzPickle, seeding
from pettingzoo import AECEnv
from pettingzoo.utils import wrappers

from island_fortress_env.core.game import shared_game
from island_fortress_env.engine import ConfigError, GameConfig, State
from island_fortress_env.engine.actions import NUM_ACTIONS
from island_fortress_env.engine.config import check_option_names, option_names
from island_fortress_env.engine.rng import seed_state
from island_fortress_env.engine.scoring import win_loss_returns
from island_fortress_env.env.global_state import STATE_HIGH, STATE_LOW, STATE_SIZE, encode_global_state
from island_fortress_env.env.observation import OBS_HIGH, OBS_LOW, OBS_SIZE, ObservationEncoder, action_mask
from island_fortress_env.env.order_enforcing import OrderEnforcingWrapper
from island_fortress_env.views.text import render_text

REWARD_MODES = ("win_loss", "score_margin", "vp_delta")
ILLEGAL_ACTION_MODES = ("raise", "terminate")
RAW_ENV_OPTIONS = ("render_mode", "reward", "render_seat", "backend")  # raw_env's options besides the game's
ENV_OPTIONS = (*RAW_ENV_OPTIONS, "illegal_action")  # env()'s options besides the game's
SCORE_SCALE = 50.0


Points = TypeVar("Points", float, np.ndarray)


def score_reward(points: Points) -> Points:
    """Victory points as reward: the one scale of every score-based reward (``vp_delta``,
    ``score_margin`` and the trainers' dense shaping); of one seat or an array of them."""
    return points / SCORE_SCALE


INFO_KEYS = ("score", "won")  # every agent's info has exactly these (numeric) keys at every step
_SET_BY_RESET = frozenset(
    (
        "game_state",
        "agents",
        "rewards",
        "_cumulative_rewards",
        "terminations",
        "truncations",
        "infos",
        "agent_selection",
    )
)


_BOXES: dict[str, spaces.Box] = {}  # one Box per kind: every env's Box copies its bound arrays


def _box(name: str, low: Any, high: Any, size: int, dtype: Any) -> spaces.Box:
    """A Box of its own (its own generator for ``sample``) whose bound arrays are shared, read-only,
    with every other env's Box of this kind: they are the largest part of an env (about 70 KB)."""
    template = _BOXES.get(name)
    if template is None:
        template = spaces.Box(low, high, shape=(size,), dtype=dtype)
        for array in (template.low, template.high, template.bounded_below, template.bounded_above):
            array.flags.writeable = False
        template = _BOXES.setdefault(name, template)
    return copy.copy(template)


def env(illegal_action: str = "raise", **kwargs: Any) -> AECEnv:
    """The wrapped environment.

    ``illegal_action="raise"`` (default): an illegal action (out of range, or not in the mask)
    raises ``IllegalActionError`` naming the action, the decision and the legal choices, and
    leaves the game as it was. ``"terminate"`` adds PettingZoo's ``TerminateIllegalWrapper`` as
    ``pettingzoo.classic`` does (the game ends, the offender gets -1).

    ``pettingzoo.classic`` also adds ``AssertOutOfBoundsWrapper``; in "raise" mode it is left
    out because the raw env already checks every action with a clearer message (and it costs a
    ``Discrete.contains`` per step); "terminate" mode keeps it, as the classic envs do.
    """
    check_option_names(kwargs, (*option_names(), *ENV_OPTIONS))
    if illegal_action not in ILLEGAL_ACTION_MODES:
        raise ConfigError(f"illegal_action must be one of {ILLEGAL_ACTION_MODES}, not {illegal_action!r}")
    environment: AECEnv = raw_env(**kwargs)
    if illegal_action == "terminate":
        environment = wrappers.TerminateIllegalWrapper(environment, illegal_reward=-1)
        # TerminateIllegalWrapper indexes the mask with the action: check the range first.
        environment = wrappers.AssertOutOfBoundsWrapper(environment)
    environment = OrderEnforcingWrapper(environment)  # PettingZoo's, minus its __getattr__ cost
    return environment


class raw_env(AECEnv, EzPickle):
    metadata: ClassVar[dict[str, Any]] = {
        "render_modes": ["human", "rgb_array", "ansi"],
        "name": "island_fortress_v0",
        "is_parallelizable": False,
        "render_fps": 2,
    }

    def __init__(
        self,
        num_players: int = 3,
        render_mode: str | None = None,
        reward: str = "win_loss",
        render_seat: int | None = None,
        backend: str | None = None,
        **rules_options: Any,
    ) -> None:
        EzPickle.__init__(self, num_players, render_mode, reward, render_seat, backend, **rules_options)
        super().__init__()
        config = GameConfig.from_dict({"num_players": num_players, **rules_options}, RAW_ENV_OPTIONS)
        if render_mode is not None and render_mode not in self.metadata["render_modes"]:
            raise ConfigError(
                f"render_mode must be one of {self.metadata['render_modes']} or None, not {render_mode!r}"
            )
        if reward not in REWARD_MODES:
            raise ConfigError(f"reward must be one of {REWARD_MODES}, not {reward!r}")
        if render_seat is not None and (
            isinstance(render_seat, bool)
            or not isinstance(render_seat, int)
            or not 0 <= render_seat < config.num_players
        ):
            raise ConfigError(
                f"render_seat must be a seat 0..{config.num_players - 1} or None, not {render_seat!r}"
            )
        self.game = shared_game(config, backend)  # ConfigError for an unknown or unbuilt backend
        self.backend = self.game.backend  # "core" or "python"
        self.render_mode = render_mode
        self.render_seat = render_seat  # whose view the pictures show; None: the whole table
        self._window: Any = None  # the "human" window, opened on the first render
        self.reward_mode = reward
        self.encoder = ObservationEncoder(self.game)
        self.possible_agents = [f"player_{i}" for i in range(num_players)]
        self.agent_name_mapping = {a: i for i, a in enumerate(self.possible_agents)}
        self.action_spaces = {a: spaces.Discrete(NUM_ACTIONS) for a in self.possible_agents}
        self.observation_spaces = {
            a: spaces.Dict(
                {
                    "observation": _box("observation", OBS_LOW, OBS_HIGH, OBS_SIZE, np.float32),
                    "action_mask": _box("action_mask", 0, 1, NUM_ACTIONS, np.int8),
                }
            )
            for a in self.possible_agents
        }
        self.state_space = _box("state", STATE_LOW, STATE_HIGH, STATE_SIZE, np.float32)
        self.np_random, _ = seeding.np_random(None)

    def observation_space(self, agent: str) -> spaces.Space:
        return self.observation_spaces[agent]

    def action_space(self, agent: str) -> spaces.Space:
        return self.action_spaces[agent]

    def reset(self, seed: int | None = None, options: dict | None = None) -> None:
        """Start a game. With a seed the whole game is reproducible; without one the
        environment's generator continues (Gymnasium convention).

        ``seed`` follows the engine's rule (``engine.rng.seed_state``): an integer in [0, 2**64),
        numpy integers included, or None; anything else (a bool, a float, a string, a negative or
        too large number) raises ``SeedError`` and leaves the environment as it was."""
        if seed is not None:
            self.np_random, _ = seeding.np_random(seed_state(seed))
        game_seed = int(self.np_random.integers(0, 2**63 - 1))
        self.game_state = self.game.new_initial_state(game_seed)
        self.agents = self.possible_agents[:]
        self.rewards = dict.fromkeys(self.agents, 0.0)
        self._cumulative_rewards = dict.fromkeys(self.agents, 0.0)
        self.terminations = dict.fromkeys(self.agents, False)
        self.truncations = dict.fromkeys(self.agents, False)
        self.infos = {a: {"score": self.game_state.score[i], "won": 0} for i, a in enumerate(self.agents)}
        self.agent_selection = self.agents[self.game_state.current_player()]
        if self.render_mode == "human":
            self.render()

    # The game's state (``env.unwrapped.game_state``): an engine State or a CoreState, set by reset().
    game_state: State

    def __getattr__(self, name: str) -> Any:
        # Only reached for an attribute that does not exist: before reset(), the game's.
        if name in _SET_BY_RESET:
            raise AttributeError(f"{name} cannot be accessed before reset(); call env.reset() first")
        raise AttributeError(f"{type(self).__name__!r} object has no attribute {name!r}")

    def observe(self, agent: str) -> dict[str, np.ndarray]:
        state = self.game_state  # before reset(): AttributeError naming reset()
        obs = self.encoder.encode(state, self.agent_name_mapping[agent])  # within the Box
        if agent == self.agent_selection and not state.is_terminal():
            mask = action_mask(state)
        else:
            mask = np.zeros(NUM_ACTIONS, dtype=np.int8)
        return {"observation": obs, "action_mask": mask}

    def state(self) -> np.ndarray:
        """The global state (``state_space``): the whole game, hidden information included.

        For centralised critics during training; a playing policy must use ``observe()``.
        """
        if "game_state" not in self.__dict__:
            raise RuntimeError("state() called before reset(): call env.reset() first")
        return encode_global_state(self.game_state, self.encoder)

    def step(self, action: int | None) -> None:
        agent = self.agent_selection
        if self.terminations[agent] or self.truncations[agent]:
            self._was_dead_step(action)
            return
        state = self.game_state
        dense = self.reward_mode == "vp_delta"
        before = state.score[:] if dense else state.score
        state.apply_action(action)  # type: ignore[arg-type]  # None is illegal: raises, state untouched
        self._cumulative_rewards[agent] = 0.0
        score = state.score
        for i, a in enumerate(self.possible_agents):
            self.infos[a]["score"] = score[i]
        if dense:
            for i, a in enumerate(self.possible_agents):
                self.rewards[a] = score_reward(state.score[i] - before[i])
        # (with end-of-game rewards, .rewards stays all zero until the game is over)
        if state.is_terminal():
            self._finish_game()
        else:
            self.agent_selection = self.possible_agents[state.current_player()]
        if dense or state.is_terminal():
            self._accumulate_rewards()
        if self.render_mode == "human":
            self.render()

    def _finish_game(self) -> None:
        state = self.game_state
        n = state.n
        if self.reward_mode == "win_loss":
            returns = win_loss_returns(n, state.winners)
        elif self.reward_mode == "score_margin":
            returns = [
                score_reward(state.score[i] - max(state.score[j] for j in range(n) if j != i))
                for i in range(n)
            ]
        else:
            returns = [0.0] * n
        for i, a in enumerate(self.possible_agents):
            self.rewards[a] += returns[i]
            self.terminations[a] = True
            self.infos[a]["won"] = int(i in state.winners)

    def action_to_string(self, action: int) -> str:
        return self.game_state.action_to_string(action)

    def render(self) -> str | np.ndarray | None:
        """``"ansi"``: the text board; ``"rgb_array"``: the table as an H x W x 3 uint8 picture;
        ``"human"``: that picture in a window. Pictures show what ``render_seat`` may see (the
        whole table when it is None)."""
        if self.render_mode is None:
            from gymnasium import logger

            logger.warn(
                "render() called without a render_mode; pass render_mode='ansi', 'rgb_array' or 'human'"
            )
            return None
        if self.render_mode == "ansi":
            return render_text(self.game_state)
        from island_fortress_env.views.picture import (  # Pillow only when pictures are asked for
            TableWindow,
            render_rgb,
        )

        frame = render_rgb(self.game_state, self.render_seat)
        if self.render_mode == "rgb_array":
            return frame
        if self._window is None:
            self._window = TableWindow("Island Fortress")
        self._window.show(frame, fps=self.metadata["render_fps"])
        return None

    def close(self) -> None:
        if self._window is not None:
            self._window.close()
            self._window = None
