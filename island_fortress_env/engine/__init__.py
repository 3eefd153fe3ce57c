"""The Island Fortress rules engine: no RL dependency (standard library only).

from island_fortress_env.engine import Game
state = Game(num_players=3).new_initial_state(seed=1)
while not state.is_terminal():
    state.apply_action(state.legal_actions()[0])
"""

from .actions import ACTION_FAMILIES, NUM_ACTIONS
from .config import ConfigError, GameConfig
from .favors import DeckError, FavorCard, FavorDeck, load_deck
from .game import Game
from .rng import SeedError
from .state import TERMINAL, IllegalActionError, State, play_random_game

__all__ = [
    "ACTION_FAMILIES",
    "NUM_ACTIONS",
    "TERMINAL",
    "ConfigError",
    "DeckError",
    "FavorCard",
    "FavorDeck",
    "Game",
    "GameConfig",
    "IllegalActionError",
    "SeedError",
    "State",
    "load_deck",
    "play_random_game",
]
