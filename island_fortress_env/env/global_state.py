"""The global view of a game: one fixed-size float32 vector for centralised critics.

PettingZoo's ``env.state()`` returns it (``env.state_space`` is its Box). Unlike an
observation it holds **everything, hidden information included**: it is meant for a critic
or a value function used only in training (centralised training, decentralised execution),
never as the input of a policy that plays, which must see only its own observation.

Layout (``GLOBAL_LAYOUT`` names every slice), the same size for 2, 3 and 4 players and every
variant:

* ``MAX_PLAYERS`` blocks of ``OBS_SIZE``: seat 0's observation, then seat 1's, ... (each the
  seat-relative vector the seat itself receives, so its favor hand, the cards it is choosing
  from and its sealed bid are in its block); absent seats are zero;
* the favor deck: for each card id, 1 if it is in the deck, and its position from the top
  scaled to (0, 1] (1/CARDS for the top card, 0 when not in the deck);
* the seat to move, one-hot over ``MAX_PLAYERS`` (all zero once the game is over).

The engine's random generator state (future shuffles and tie-breaks) is not included.
"""

from __future__ import annotations

import numpy as np

from island_fortress_env.engine import tables
from island_fortress_env.engine.state import State
from island_fortress_env.env.observation import OBS_HIGH, OBS_LOW, OBS_SIZE, ObservationEncoder

MAX_PLAYERS = tables.MAX_PLAYERS
CARDS = tables.MAX_FAVOR_CARDS

GLOBAL_LAYOUT: tuple[tuple[str, int, int], ...] = (
    (f"observations of seats 0..{MAX_PLAYERS - 1} ({MAX_PLAYERS} x {OBS_SIZE})", 0, MAX_PLAYERS * OBS_SIZE),
    ("favor card in the deck", MAX_PLAYERS * OBS_SIZE, CARDS),
    ("favor card's position from the deck top", MAX_PLAYERS * OBS_SIZE + CARDS, CARDS),
    ("seat to move (one-hot)", MAX_PLAYERS * OBS_SIZE + 2 * CARDS, MAX_PLAYERS),
)
DECK_START = GLOBAL_LAYOUT[1][1]
POSITION_START = GLOBAL_LAYOUT[2][1]
TO_MOVE_START = GLOBAL_LAYOUT[3][1]
STATE_SIZE = TO_MOVE_START + MAX_PLAYERS

STATE_LOW = np.zeros(STATE_SIZE, dtype=np.float32)
STATE_LOW[:DECK_START] = OBS_LOW
STATE_HIGH = np.ones(STATE_SIZE, dtype=np.float32)
STATE_HIGH[:DECK_START] = OBS_HIGH


def encode_global_state(state: State, encoder: ObservationEncoder) -> np.ndarray:
    """The global vector of ``state`` (a new array; ``encoder`` encodes each seat's block, or the
    C++ core writes the whole vector for a state of the core)."""
    if hasattr(state, "global_state"):  # a core state: its C++ writer (same bytes)
        return state.global_state()
    out = np.zeros(STATE_SIZE, dtype=np.float32)
    for seat in range(state.n):
        out[seat * OBS_SIZE : (seat + 1) * OBS_SIZE] = encoder.encode(state, seat)
    deck = state.deck
    size = len(deck)
    for index, card in enumerate(deck):  # the deck's top is the end of the list
        out[DECK_START + card] = 1.0
        out[POSITION_START + card] = (size - index) / CARDS
    if not state.is_terminal():
        out[TO_MOVE_START + state.current_player()] = 1.0
    return out
