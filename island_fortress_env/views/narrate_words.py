"""The small words every part of the narrator uses: seats, counts, prices, lists, cells, favor
cards. Cell names are the engine's (``engine.describe.cell_label``: R2-L3-C4)."""

from __future__ import annotations

from collections.abc import Sequence

from island_fortress_env.engine import actions as A
from island_fortress_env.engine.describe import cell_label, cell_level
from island_fortress_env.engine.favors import FavorCard

__all__ = [
    "MARKS",
    "REWARD_WORDS",
    "ROLE_NAMES",
    "and_list",
    "card_rewards",
    "card_text",
    "cell_label",
    "cell_level",
    "plural",
    "price",
    "seat_name",
]

MARKS = "ABCD"
ROLE_NAMES = A.ROLE_NAMES
REWARD_WORDS = {
    "income": "income",
    "petition": "petition bonus",
    "jade": "Jade",
    "vp": "VP",
    "treasure": "Treasure",
    "buyback_chips": "Buyback Chip",
    "convicts": "Convict",
    "laborers": "Laborer",
    "wall_blocks": "Wall Block",
}
_UNCOUNTED = ("Jade", "Treasure", "VP")  # words with no plural


def seat_name(names: Sequence[str], seat: int) -> str:
    """ "A (you)", "B (heuristic)"; just the mark when no name is known."""
    if 0 <= seat < len(names) and names[seat]:
        return f"{MARKS[seat]} ({names[seat]})"
    return MARKS[seat] if 0 <= seat < len(MARKS) else f"seat {seat}"


def plural(count: int, word: str) -> str:
    """ "1 Convict", "3 Convicts", "1 Jade", "2 Treasure"."""
    if count == 1 or word in _UNCOUNTED:
        return f"{count} {word}"
    return f"{count} {word}s"


def price(jade: int) -> str:
    """ "for 2 Jade"; "for free" when it costs nothing (a purchase of one)."""
    return f"for {plural(jade, 'Jade')}" if jade else "for free"


def and_list(names: list[str]) -> str:
    """ "A", "A and B", "A, B and C"."""
    return names[0] if len(names) == 1 else f"{', '.join(names[:-1])} and {names[-1]}"


def card_rewards(card: FavorCard) -> str:
    """A favor card's rewards: "+1 income every round, 2 Convicts"."""
    parts = []
    for key, amount in card.rewards.items():
        if not amount:
            continue
        word = REWARD_WORDS.get(key, key)
        if key == "income":
            parts.append(f"+{amount} {word} every round")
        elif key == "petition":
            parts.append(f"+{amount} {word}")
        else:
            parts.append(plural(amount, word))
    return ", ".join(parts) or "nothing"


def card_text(card: FavorCard) -> str:
    return f"{card.name} ({card_rewards(card)})"
