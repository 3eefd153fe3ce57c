"""``mcts`` / ``mcts:N``: OpenSpiel's Information Set MCTS (IS-MCTS) over the OpenSpiel adapter.

Island Fortress has hidden information (other hands, the deck order, sealed bids), so a plain
MCTS on the true state would read cards it cannot see. This agent runs OpenSpiel's
``ISMCTSBot`` (Cowling, Powley and Whitehouse 2011): before each of its ``N`` simulations
(default 100) it redeals what the player cannot see (``IslandFortressState.resampled``: the
unseen favor cards uniformly in the same counts, other players' sealed bids, a fresh engine
seed), so its choice depends only on the player's own view (a test checks it). Tree nodes are
keyed by the player's observation (``use_observation_string=True``), leaves are valued by one
random rollout to the end of the game, and the move played is the most visited one. All draws
come from generators seeded by the agent's seed.

Needs OpenSpiel (``pip install 'island-fortress-env[openspiel]'``). It is slow (Python rollouts
of whole games): see the README for its speed and strength.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from island_fortress_env.players.specs import DEFAULT_MCTS_SIMULATIONS

DEFAULT_SIMULATIONS = DEFAULT_MCTS_SIMULATIONS
UCT_C = 2.0


class MCTSAgent:
    """IS-MCTS with random rollouts; needs the engine state (``act(..., state=...)``)."""

    def __init__(self, simulations: int = DEFAULT_SIMULATIONS, seed: int | None = None) -> None:
        import pyspiel  # noqa: F401  (a clear ImportError before any game starts)

        self.name = f"mcts:{simulations}"
        self.simulations = simulations
        self._games: dict[Any, Any] = {}
        self.reset(seed)

    def reset(self, seed: int | None = None) -> None:
        self.rng = np.random.default_rng(seed)
        self._rollouts = np.random.RandomState(self.rng.integers(2**31))

    def _game(self, config: Any) -> Any:
        from island_fortress_env.adapters import openspiel

        game = self._games.get(config)
        if game is None:
            game = openspiel.IslandFortressGame({"players": config.num_players, **_params(config)})
            self._games[config] = game
        return game

    def act(self, observation: np.ndarray, action_mask: np.ndarray, state: Any = None) -> int:
        if state is None:
            raise ValueError(
                "the mcts agent searches from the engine state: pass state=env.unwrapped.game_state"
            )
        legal = np.flatnonzero(action_mask)
        if len(legal) == 1:
            return int(legal[0])
        from open_spiel.python.algorithms import ismcts, mcts

        from island_fortress_env.adapters import openspiel

        game = self._game(state.cfg)
        root = openspiel.state_from_engine(game, state)
        bot = ismcts.ISMCTSBot(
            game=game,
            evaluator=mcts.RandomRolloutEvaluator(n_rollouts=1, random_state=self._rollouts),
            uct_c=UCT_C,
            max_simulations=self.simulations,
            random_state=self._rollouts,
            use_observation_string=True,
        )
        bot.set_resampler(lambda s, player: s.resampled(player, self.rng))
        action = int(bot.step(root))
        if not action_mask[action]:
            raise AssertionError(f"IS-MCTS chose {action}, which is not legal")
        return action


def _params(config: Any) -> dict[str, Any]:
    """The pyspiel parameters of an engine configuration."""
    out = {}
    for key, value in config.to_dict().items():
        if key == "num_players":
            continue
        out[key] = "" if value is None else value
    return out
