"""Favor cards: the deck file (loaded and validated) and pattern matching on the wall.

A deck file is read as any file from a person is (``files``): a regular file of at most
``MAX_DECK_BYTES``, JSON with bounded nesting and numbers; anything else is one ``DeckError``
naming the file. ``deck_digest`` identifies a deck by its cards (``deck_content``, canonical
JSON), so a game record can tell the deck it was played with from another.

A pattern is stored as bit offsets from its bottom-left cell, so "where does card c match
the player's unreinforced blocks" is one AND per marked cell over the whole wall.
"""

from __future__ import annotations

import hashlib
import json
import os
from dataclasses import dataclass
from importlib import resources
from typing import Any

from .files import FileRefused, parse_json, read_json
from .tables import MAX_FAVOR_CARDS
from .wall import LEVELS, STRIDE

REWARD_KINDS = (
    "income",  # persistent: added to income each round
    "petition",  # persistent: added to every petition bid
    "jade",
    "vp",
    "treasure",
    "buyback_chips",
    "convicts",
    "laborers",
    "wall_blocks",
)
# The most one card may give of each reward, and the most a whole deck may give of the
# persistent ones (income and petition bonuses are added every round, so their deck totals
# bound the bonus a player can hold: 30 keeps "bonus / 3" inside the observation's Box).
# Every count stays a small int, so observations are exact; the encoder clips to the Box
# whatever a game reaches.
REWARD_LIMITS: dict[str, int] = {
    "income": 3,
    "petition": 3,
    "jade": 10,
    "vp": 10,
    "treasure": 3,
    "buyback_chips": 2,
    "convicts": 6,
    "laborers": 6,
    "wall_blocks": 3,
}
DECK_REWARD_LIMITS: dict[str, int] = {"income": 30, "petition": 30}
PATTERN_SIZE = 3  # patterns were designed within a 3x3 grid
MAX_DECK_BYTES = 2**20  # a deck file: 36 cards take a few KB
_ALL_BITS = (1 << (LEVELS * STRIDE)) - 1


class DeckError(ValueError):
    """A favor deck file that cannot be used."""


@dataclass(frozen=True)
class FavorCard:
    index: int
    name: str
    pattern: tuple[str, ...]  # rows, top row first, as printed
    rewards: dict[str, int]
    offsets: tuple[int, ...]  # bit offsets of the marked cells from the bottom-left corner
    anchor_mask: int  # bottom-left positions where the pattern fits without wrapping rows

    def matches(self, blocks: int) -> int:
        """Bottom-left anchors at which every marked cell is in ``blocks``."""
        # docs/RULES.md C4: a pattern matches in the card's orientation (no rotation or mirroring), at any
        # height and horizontal position, across region borders; only the marked cells must be the
        # player's own unreinforced blocks.
        anchors = self.anchor_mask
        for off in self.offsets:
            anchors &= blocks >> off
        return anchors

    def cells_at(self, anchor: int) -> int:
        """The wall cells (bit set) covered by the pattern placed at ``anchor``."""
        return sum(1 << (anchor + off) for off in self.offsets)

    def describe(self) -> str:
        rewards = ", ".join(f"{k} {v}" for k, v in self.rewards.items() if v)
        return f"{self.name} [{' / '.join(self.pattern)}] -> {rewards}"


@dataclass(frozen=True)
class FavorDeck:
    name: str
    stand_in: bool
    cards: tuple[FavorCard, ...]

    def __len__(self) -> int:
        return len(self.cards)


def _parse_card(index: int, raw: Any, where: str) -> FavorCard:
    def fail(why: str) -> DeckError:
        return DeckError(f"{where}: card {index}: {why}")

    if not isinstance(raw, dict):
        raise fail("must be an object with 'name', 'pattern' and 'rewards'")
    unknown = set(raw) - {"name", "pattern", "rewards"}
    if unknown:
        raise fail(f"unknown field(s) {sorted(unknown)}")
    name = raw.get("name", f"Favor {index}")
    if not isinstance(name, str) or not name:
        raise fail("'name' must be a non-empty string")
    pattern = raw.get("pattern")
    if (
        not isinstance(pattern, list)
        or not 1 <= len(pattern) <= PATTERN_SIZE
        or not all(isinstance(row, str) for row in pattern)
    ):
        raise fail(f"'pattern' must be a list of 1-{PATTERN_SIZE} strings")
    widths = {len(row) for row in pattern}
    if len(widths) != 1 or not 1 <= widths.pop() <= PATTERN_SIZE:
        raise fail(f"'pattern' rows must all have the same length, 1-{PATTERN_SIZE}")
    if any(ch not in "X." for row in pattern for ch in row):
        raise fail("'pattern' may only use 'X' (own block) and '.' (any)")
    marked = [
        (len(pattern) - 1 - r, c) for r, row in enumerate(pattern) for c, ch in enumerate(row) if ch == "X"
    ]
    if not marked:
        raise fail("'pattern' marks no cell")
    rewards = raw.get("rewards")
    if not isinstance(rewards, dict) or not rewards:
        raise fail(f"'rewards' must be a non-empty object with keys from {list(REWARD_KINDS)}")
    bad = sorted(set(rewards) - set(REWARD_KINDS))
    if bad:
        raise fail(f"unknown reward(s) {bad}; known: {list(REWARD_KINDS)}")
    for kind, amount in rewards.items():
        if isinstance(amount, bool) or not isinstance(amount, int) or amount < 0:
            raise fail(f"reward {kind!r} must be a non-negative integer, not {amount!r}")
        if amount > REWARD_LIMITS[kind]:
            raise fail(f"reward {kind!r} is {amount}, above the limit of {REWARD_LIMITS[kind]} per card")
    if not any(rewards.values()):
        raise fail("'rewards' gives nothing")
    # Normalise to the bottom-left corner of the marked cells.
    min_level = min(level for level, _ in marked)
    min_col = min(col for _, col in marked)
    offsets = tuple(sorted((level - min_level) * STRIDE + (col - min_col) for level, col in marked))
    width = max(col - min_col for _, col in marked) + 1
    anchor_mask = 0
    for level in range(LEVELS):
        for col in range(STRIDE - width + 1):
            anchor_mask |= 1 << (level * STRIDE + col)
    return FavorCard(
        index=index,
        name=name,
        pattern=tuple(pattern),
        rewards={kind: int(rewards.get(kind, 0)) for kind in REWARD_KINDS},
        offsets=offsets,
        anchor_mask=anchor_mask & _ALL_BITS,
    )


def parse_deck(data: Any, where: str = "favor deck") -> FavorDeck:
    if not isinstance(data, dict) or not isinstance(data.get("cards"), list):
        raise DeckError(f"{where}: must be a JSON object with a 'cards' list")
    raw_cards = data["cards"]
    if not 1 <= len(raw_cards) <= MAX_FAVOR_CARDS:
        raise DeckError(f"{where}: must hold 1-{MAX_FAVOR_CARDS} cards, not {len(raw_cards)}")
    cards = tuple(_parse_card(i, raw, where) for i, raw in enumerate(raw_cards))
    for i, raw in enumerate(raw_cards):  # (an unnamed copy has a different default name)
        first = raw_cards.index(raw)
        if first != i:
            raise DeckError(f"{where}: card {i} is an identical copy of card {first}")
    seen_names: dict[str, int] = {}
    for card in cards:
        first = seen_names.setdefault(card.name, card.index)
        if first != card.index:
            raise DeckError(f"{where}: card {card.index}: the name {card.name!r} is card {first}'s too")
    for kind, limit in DECK_REWARD_LIMITS.items():
        total = sum(card.rewards[kind] for card in cards)
        if total > limit:
            raise DeckError(
                f"{where}: the cards give {total} {kind!r} in all, above the deck limit of {limit}"
            )
    return FavorDeck(
        name=str(data.get("name", where)), stand_in=bool(data.get("stand_in", False)), cards=cards
    )


def load_deck(path: str | os.PathLike[str] | None = None) -> FavorDeck:
    """Load a deck file (UTF-8 JSON, at most ``MAX_DECK_BYTES``, a regular file); ``None`` gives
    the shipped stand-in deck. Any problem is a ``DeckError`` naming the file."""
    # docs/RULES.md C3: the favor deck is a data file; the shipped deck is a stand-in; a user deck is
    # validated. E27: its rewards are bounded per card and per deck (REWARD_LIMITS, DECK_REWARD_LIMITS).
    if path is None:
        text = resources.files(__package__).joinpath("data/favor_deck.json").read_text("utf-8")
        return parse_deck(parse_json(text), "stand-in favor deck")
    where = f"favor deck {os.fspath(path)!r}"
    try:
        data = read_json(path, MAX_DECK_BYTES)
    except FileRefused as exc:
        raise DeckError(f"{where}: {exc}") from None
    return parse_deck(data, where)


def deck_content(deck: FavorDeck) -> dict[str, Any]:
    """The deck as a deck file's JSON object, in one canonical form: its name, then every card's
    name, pattern and the rewards it gives (``parse_deck`` of it is the same deck)."""
    content: dict[str, Any] = {"name": deck.name}
    if deck.stand_in:
        content["stand_in"] = True
    content["cards"] = [
        {
            "name": card.name,
            "pattern": list(card.pattern),
            "rewards": {kind: amount for kind, amount in card.rewards.items() if amount},
        }
        for card in deck.cards
    ]
    return content


def canonical_json(value: Any) -> bytes:
    """``value`` as JSON in one form: keys sorted, no spaces, non-ASCII characters escaped."""
    return json.dumps(value, sort_keys=True, separators=(",", ":"), ensure_ascii=True).encode("ascii")


def deck_digest(deck: FavorDeck) -> str:
    """The SHA-256 (hex) of the deck's cards in canonical JSON: the same for every file that
    holds these cards (however it is laid out, whatever its name says), different for any other."""
    return hashlib.sha256(canonical_json(deck_content(deck)["cards"])).hexdigest()
