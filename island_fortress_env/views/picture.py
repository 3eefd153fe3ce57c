"""The table as a picture: ``render_rgb(state, seat)`` -> H x W x 3 uint8 (Pillow).

Two steps keep hidden information out of the picture by construction: ``table_view`` copies
from the engine state only what the viewing seat may know into a frozen ``TableView``, and
``draw_table`` draws that view and nothing else. A seat sees its own favor hand, the cards it
is choosing from and its own sealed bid; other seats' hands and choices appear as counts and
their sealed bids as "sealed". A spectator (``seat=None``) sees every hand and every placed
bid. The deck is always a count.

Every owner has a colour *and* a letter mark (A-D), and the colours differ in brightness, so
the picture reads in grey too. A reinforced block has a heavy double frame; a Governor block
is a light block marked G.

``TableWindow`` shows pictures in a pygame window (the ``"human"`` render mode), as the
``pettingzoo.classic`` environments do; pygame is imported only when a window opens.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import cache, lru_cache
from typing import TYPE_CHECKING, Any

import numpy as np

try:
    from PIL import Image, ImageDraw, ImageFont
except ImportError as exc:  # pragma: no cover - depends on the installed extras
    raise ImportError(
        "pictures need Pillow: pip install 'island-fortress-env[render]'", name=exc.name
    ) from exc

from island_fortress_env.engine import actions as A
from island_fortress_env.engine import visibility
from island_fortress_env.engine.favors import FavorCard
from island_fortress_env.engine.wall import COLUMNS_PER_REGION, LEVELS, STRIDE, iter_bits

if TYPE_CHECKING:
    from island_fortress_env.engine.state import State

WIDTH, HEIGHT = 1280, 800  # one size for every table size: frames of a video stay the same size
MARKS = "ABCD"  # the seats' marks, as in the text view
# Seat colours, darkest to lightest, so they stay apart in grey (luminance ~70, 115, 150, 200).
SEAT_COLOURS = ((165, 35, 40), (45, 110, 205), (70, 165, 85), (240, 205, 60))
SEAT_TEXT = ((255, 255, 255), (255, 255, 255), (0, 0, 0), (0, 0, 0))
GOVERNOR_COLOUR = (225, 225, 215)
BACKGROUND = (246, 241, 228)
INK = (30, 30, 30)
FAINT = (150, 145, 135)
EMPTY_CELL = (222, 214, 196)
BUILDABLE_CELL = (236, 230, 214)
PANEL = (252, 250, 244)
ROLE_LETTERS = "RPBTM"


# --------------------------------------------------------------------------- what a seat sees


@dataclass(frozen=True)
class CellView:
    region: int
    level: int  # 0-3 (the rulebook's levels 1-4)
    column: int  # 0-4 within the region
    owner: int | None  # seat, GOVERNOR, or None when empty
    reinforced: bool
    buildable: bool  # empty with support below


GOVERNOR = -1  # ``CellView.owner`` of a Governor block


@dataclass(frozen=True)
class PlayerView:
    seat: int
    name: str
    score: int
    jade: int
    treasure: int
    laborers: int
    convicts: int
    blocks_supply: int
    blocks_stockpile: int
    blocks_on_wall: int
    chips: int
    income_bonus: int
    petition_bonus: int
    turns_taken: int
    taskmaster_region: int
    roles_hand: tuple[int, ...]
    roles_table: tuple[int, ...]
    favor_played: tuple[FavorCard, ...]
    hand_count: int
    hand: tuple[FavorCard, ...] | None  # None: hidden from the viewer
    choosing_count: int
    choosing: tuple[FavorCard, ...] | None  # None: hidden from the viewer
    bid_sealed: bool  # a sealed bid is placed this round
    bid: int | None  # the sealed bid, when the viewer may see it
    last_bid: int | None  # the bid revealed at the last petition
    governor_marker: bool
    governor_block_in_hand: bool
    to_move: bool
    winner: bool


@dataclass(frozen=True)
class TableView:
    seat: int | None  # the viewer; None for a spectator
    regions: int
    round: int
    status: str
    decision: str
    cells: tuple[CellView, ...]
    prison_jade: tuple[int, ...]
    prison_convicts: tuple[int, ...]
    players: tuple[PlayerView, ...]
    governor_blocks_left: int
    deck_size: int
    supply: tuple[tuple[str, int], ...]


def table_view(state: State, seat: int | None = None, names: tuple[str, ...] | None = None) -> TableView:
    """What ``seat`` may see of ``state`` (everything but the deck order for ``seat=None``)."""
    if seat is not None and not 0 <= seat < state.n:
        raise ValueError(f"seat must be 0..{state.n - 1} or None (spectator), not {seat!r}")
    geo = state.geo
    cards = state.game.deck.cards
    buildable = geo.buildable(state.occ)
    cells = []
    for bit in geo.cell_bits:
        level, column = divmod(bit, STRIDE)
        region, col = divmod(column, COLUMNS_PER_REGION)
        owner = state.owner_at(bit)
        cells.append(
            CellView(
                region=region,
                level=level,
                column=col,
                owner=GOVERNOR if owner is not None and owner < 0 else owner,
                reinforced=bool(state.reinf >> bit & 1),
                buildable=bool(buildable >> bit & 1),
            )
        )
    sealed = visibility.sealed_bidders(state)
    terminal = state.is_terminal()
    players = []
    for p in range(state.n):
        hand_ids = visibility.favor_hand(state, p, seat)
        choosing_ids = visibility.choosing_from(state, p, seat)
        players.append(
            PlayerView(
                seat=p,
                name=names[p] if names else f"player_{p}",
                score=state.score[p],
                jade=state.jade[p],
                treasure=state.treasure[p],
                laborers=state.laborers[p],
                convicts=state.convicts[p],
                blocks_supply=state.blocks[p],
                blocks_stockpile=state.stock_blocks[p],
                blocks_on_wall=state.blocks_built(p),
                chips=state.chips[p],
                income_bonus=state.income_bonus[p],
                petition_bonus=state.petition_bonus[p],
                turns_taken=state.turns_taken[p],
                taskmaster_region=state.region[p],
                roles_hand=tuple(iter_bits(state.roles_hand[p])),
                roles_table=tuple(iter_bits(state.roles_table[p])),
                favor_played=tuple(cards[i] for i in iter_bits(state.favor_played[p])),
                hand_count=state.favor_hand[p].bit_count(),
                hand=None if hand_ids is None else tuple(cards[i] for i in hand_ids),
                choosing_count=state.drawn[p].bit_count(),
                choosing=None if choosing_ids is None else tuple(cards[i] for i in choosing_ids),
                bid_sealed=p in sealed,
                bid=visibility.sealed_bid(state, p, seat),
                last_bid=None if state.last_bids is None else state.last_bids[p],
                governor_marker=p == state.holder,
                governor_block_in_hand=p == state.holder and state.gov_in_hand,
                to_move=not terminal and p == state.current_player(),
                winner=terminal and p in state.winners,
            )
        )
    if terminal:
        won = " and ".join(f"{MARKS[w]} ({players[w].name})" for w in state.winners)
        status = f"Game over after round {state.round}: {won} {'win' if len(state.winners) > 1 else 'wins'}"
    else:
        p = state.current_player()
        doing = f"{A.op_label(state.op)}: " if state.in_action and state.op >= 0 else ""
        stage = "The deal" if state.round == 0 else f"Round {state.round}"  # round 0: the setup keep
        status = f"{stage} - {MARKS[p]} ({players[p].name}) to move: {doing}{state.decision_name()}"
    return TableView(
        seat=seat,
        regions=geo.regions,
        round=state.round,
        status=status,
        decision=state.decision_name(),
        cells=tuple(cells),
        prison_jade=tuple(state.prison_jade),
        prison_convicts=tuple(state.prison_convicts),
        players=tuple(players),
        governor_blocks_left=state.gov_stock,
        deck_size=len(state.deck),
        supply=(
            ("Jade", state.sup_jade),
            ("Treasure", state.sup_treasure),
            ("Buyback Chips", state.sup_chips),
            ("Reinforcements", state.sup_reinf),
            ("Laborers", state.sup_laborers),
            ("Convicts", state.sup_convicts),
        ),
    )


# --------------------------------------------------------------------------- drawing


@cache
def _font(size: int) -> ImageFont.FreeTypeFont | ImageFont.ImageFont:
    return ImageFont.load_default(size=size)


def _supply_text(amount: int) -> str:
    return "unlimited" if amount >= 10**8 else str(amount)


@lru_cache(maxsize=4096)
def _text_mask(text: str, size: int, anchor: str) -> tuple[Image.Image | None, int, int, float]:
    """A text's anti-aliased mask, its offset from the anchor point and its advance width.

    Labels and most numbers repeat from one picture to the next, and FreeType rendering is
    most of a picture's cost, so each (text, size, anchor) is rendered once.
    """
    font = _font(size)
    left, top, right, bottom = (int(v) for v in font.getbbox(text, anchor=anchor))
    width = float(font.getlength(text))
    if right <= left or bottom <= top:
        return None, 0, 0, width
    mask = Image.new("L", (right - left, bottom - top), 0)
    ImageDraw.Draw(mask).text((-left, -top), text, font=font, fill=255, anchor=anchor)
    return mask, left, top, width


class _Painter:
    def __init__(self, image: Image.Image) -> None:
        self.image = image
        self.draw = ImageDraw.Draw(image)

    def text(
        self, xy: tuple[float, float], text: str, size: int = 15, fill: Any = INK, anchor: str = "la"
    ) -> float:
        """Draw ``text`` with its ``anchor`` (Pillow's anchors) at ``xy``; return its width."""
        mask, left, top, width = _text_mask(text, size, anchor)
        if mask is not None:
            self.image.paste(fill, (round(xy[0]) + left, round(xy[1]) + top), mask)
        return width

    def token(self, x: float, y: float, seat: int, size: int = 22) -> None:
        """A round seat token with the seat's mark."""
        self.draw.ellipse((x, y, x + size, y + size), fill=SEAT_COLOURS[seat], outline=INK, width=2)
        self.text((x + size / 2, y + size / 2 + 1), MARKS[seat], int(size * 0.62), SEAT_TEXT[seat], "mm")

    def pattern(self, x: float, y: float, card: FavorCard, fill: Any, cell: int = 7) -> float:
        """A favor card's pattern as a small grid; returns its width."""
        for r, row in enumerate(card.pattern):
            for c, ch in enumerate(row):
                box = (x + c * cell, y + r * cell, x + (c + 1) * cell - 1, y + (r + 1) * cell - 1)
                if ch == "X":
                    self.draw.rectangle(box, fill=fill, outline=INK)
                else:
                    self.draw.rectangle(box, outline=FAINT)
        return len(card.pattern[0]) * cell


def _draw_header(p: _Painter, view: TableView) -> None:
    p.text((24, 14), view.status, size=24)
    viewer = "spectator view (every hand shown)" if view.seat is None else f"seen by {MARKS[view.seat]}"
    supply = ", ".join(f"{name} {_supply_text(n)}" for name, n in view.supply)
    holder = next((pl for pl in view.players if pl.governor_marker), None)
    petition = f"petition won by {MARKS[holder.seat]}" if holder else "no petition yet"
    p.text(
        (24, 48),
        f"{petition} · Governor blocks left {view.governor_blocks_left} · "
        f"favor deck {view.deck_size} · supply: {supply}",
        size=15,
    )
    p.text((WIDTH - 24, 18), viewer, size=15, fill=FAINT, anchor="ra")


WALL_TOP = 92
CELL = 54
REGION_GAP = 30


def _wall_left(regions: int) -> float:
    total = regions * COLUMNS_PER_REGION * CELL + (regions - 1) * REGION_GAP
    return (WIDTH - total) / 2


WALL_BASE = WALL_TOP + 24 + LEVELS * CELL  # the ground line, under level 1


def cell_box(regions: int, region: int, level: int, column: int) -> tuple[int, int, int, int]:
    """Where a wall cell is drawn: (left, top, right, bottom) in pixels."""
    x = _wall_left(regions) + region * (COLUMNS_PER_REGION * CELL + REGION_GAP) + column * CELL
    y = WALL_BASE - (level + 1) * CELL
    return (round(x + 2), round(y + 2), round(x + CELL - 2), round(y + CELL - 2))


def _draw_wall(p: _Painter, view: TableView) -> float:
    """The wall region by region, camps with the Taskmasters, prisons; returns the bottom y."""
    region_w = COLUMNS_PER_REGION * CELL
    left = _wall_left(view.regions)
    base: float = WALL_BASE
    d = p.draw
    for r in range(view.regions):
        x0 = left + r * (region_w + REGION_GAP)
        p.text((x0 + region_w / 2, WALL_TOP), f"Region {r + 1}", size=17, anchor="ma")
        d.line((x0 - 6, base + 1, x0 + region_w + 6, base + 1), fill=INK, width=3)
    for cell in view.cells:
        box = cell_box(view.regions, cell.region, cell.level, cell.column)
        x, y = float(box[0] - 2), float(box[1] - 2)
        if cell.owner is None:
            d.rectangle(box, fill=BUILDABLE_CELL if cell.buildable else EMPTY_CELL, outline=FAINT)
            if cell.buildable:
                d.rectangle((x + 8, y + 8, x + CELL - 8, y + CELL - 8), outline=FAINT)
            continue
        if cell.owner == GOVERNOR:
            fill, ink, mark = GOVERNOR_COLOUR, INK, "G"
        else:
            fill, ink, mark = SEAT_COLOURS[cell.owner], SEAT_TEXT[cell.owner], MARKS[cell.owner]
        d.rectangle(box, fill=fill, outline=INK, width=2)
        if cell.reinforced:  # a heavy double frame: the reinforcement
            d.rectangle((x + 5, y + 5, x + CELL - 5, y + CELL - 5), outline=INK, width=3)
            d.rectangle((x + 9, y + 9, x + CELL - 9, y + CELL - 9), outline=(255, 255, 255), width=2)
        p.text((x + CELL / 2, y + CELL / 2 + 1), mark, 22, ink, "mm")
    y = base + 10
    for r in range(view.regions):
        x0 = left + r * (region_w + REGION_GAP)
        p.text((x0, y + 3), "camp", size=14, fill=FAINT)
        x = x0 + 42
        for pl in view.players:
            if pl.taskmaster_region == r:
                p.token(x, y, pl.seat)
                x += 26
        p.text(
            (x0, y + 30),
            f"prison: {view.prison_jade[r]} Jade, {view.prison_convicts[r]} Convicts",
            size=14,
        )
    legend_y = y + 56
    p.text(
        (24, legend_y),
        "Blocks show their owner's mark (A-D); G: Governor block; double frame: reinforced; "
        "inner outline: empty and buildable now; tokens in a camp: Taskmasters; "
        "roles: solid = in hand, struck = on the table.",
        size=13,
        fill=FAINT,
    )
    return legend_y + 22


def _draw_roles(p: _Painter, x: float, y: float, pl: PlayerView) -> None:
    x += p.text((x, y + 2), "roles", size=14) + 8
    for role in range(len(ROLE_LETTERS)):
        box = (x, y, x + 24, y + 22)
        if role in pl.roles_hand:  # in hand: a solid card
            p.draw.rectangle(box, fill=INK, outline=INK)
            p.text((x + 12, y + 12), ROLE_LETTERS[role], 14, (255, 255, 255), "mm")
        elif role in pl.roles_table:  # played this round: an open card, struck through
            p.draw.rectangle(box, fill=PANEL, outline=INK, width=2)
            p.text((x + 12, y + 12), ROLE_LETTERS[role], 14, INK, "mm")
            p.draw.line((x + 2, y + 20, x + 22, y + 2), fill=INK, width=1)
        else:
            p.draw.rectangle(box, outline=FAINT)
        x += 28


def _fit(text: str, size: int, width: float) -> str:
    """``text`` cut to ``width`` pixels (ending in an ellipsis when cut)."""
    font = _font(size)
    if font.getlength(text) <= width:
        return text
    while text and font.getlength(text + "…") > width:
        text = text[:-1]
    return text.rstrip() + "…"


def _card_lines(
    p: _Painter,
    x: float,
    y: float,
    right: float,
    bottom: float,
    title: str,
    cards: tuple[FavorCard, ...],
    fill: Any,
) -> float:
    """A titled list of favor cards, each with its pattern; cut with "+ k more" at ``bottom``."""
    p.text((x, y), title, size=14)
    y += 19
    for i, card in enumerate(cards):
        height = max(8 * len(card.pattern), 17) + 4
        if y + height > bottom - 20 and i < len(cards) - 1:
            rest = ", ".join(c.name for c in cards[i:])
            p.text((x + 6, y), _fit(f"+ {len(cards) - i} more: {rest}", 14, right - x - 6), size=14)
            return y + 20
        w = p.pattern(x + 6, y + 1, card, fill, cell=8)
        rewards = ", ".join(f"{k.replace('_', ' ')} {v}" for k, v in card.rewards.items() if v)
        left = x + 14 + max(w, 24)
        p.text((left, y), _fit(f"{card.name}: {rewards}", 14, right - left), size=14)
        y += height
    return y


def _draw_player(p: _Painter, box: tuple[float, float, float, float], pl: PlayerView) -> None:
    x0, y0, x1, bottom = box
    d = p.draw
    d.rectangle(
        box, fill=PANEL, outline=SEAT_COLOURS[pl.seat] if pl.to_move else FAINT, width=5 if pl.to_move else 1
    )
    d.rectangle((x0, y0, x1, y0 + 34), fill=SEAT_COLOURS[pl.seat])
    d.rectangle((x0, y0, x1, y0 + 34), outline=INK, width=1)
    p.text((x0 + 10, y0 + 6), f"{MARKS[pl.seat]}  {pl.name}", size=19, fill=SEAT_TEXT[pl.seat])
    p.text((x1 - 10, y0 + 6), f"{pl.score} VP", size=19, fill=SEAT_TEXT[pl.seat], anchor="ra")
    x, y = x0 + 10, y0 + 42
    tags = []
    if pl.winner:
        tags.append("WINNER")
    if pl.to_move:
        tags.append("to move")
    if pl.governor_marker:
        tags.append("Governor marker")
    if pl.governor_block_in_hand:
        tags.append("Governor block in hand")
    p.text((x, y), _fit(" · ".join(tags), 14, x1 - x - 8), size=14)
    y += 22
    half = (x1 - x0) / 2
    rows = [
        (f"Jade {pl.jade}", f"Treasure {pl.treasure}"),
        (f"Laborers {pl.laborers}", f"Convicts {pl.convicts}"),
        (f"Blocks {pl.blocks_supply}", f"stockpile {pl.blocks_stockpile}"),
        (f"on the wall {pl.blocks_on_wall}", f"Buyback Chips {pl.chips}"),
        (f"income +{pl.income_bonus}", f"petition +{pl.petition_bonus}"),
        (f"turns taken {pl.turns_taken}/3", _bid_text(pl)),
    ]
    for left, right in rows:
        p.text((x, y), left, size=16)
        p.text((x + half - 8, y), right, size=16)
        y += 21
    y += 4
    _draw_roles(p, x, y, pl)
    y += 30
    fill = SEAT_COLOURS[pl.seat]
    hidden = " (hidden)" if pl.hand is None and pl.hand_count else ""
    p.text((x, y), f"favor cards: {pl.hand_count} in hand{hidden}, {len(pl.favor_played)} played", size=14)
    y += 20
    if pl.favor_played:
        y = _card_lines(p, x, y, x1 - 8, bottom, "played:", pl.favor_played, fill)
    if pl.hand is not None and pl.hand:
        y = _card_lines(p, x, y, x1 - 8, bottom, "in hand:", pl.hand, fill)
    if pl.choosing_count:
        if pl.choosing is None:
            p.text((x, y), f"choosing from {pl.choosing_count} favor cards (hidden)", size=14)
        else:
            _card_lines(p, x, y, x1 - 8, bottom, "choosing from:", pl.choosing, fill)


def _bid_text(pl: PlayerView) -> str:
    if pl.bid is not None:
        return f"sealed bid {pl.bid}"
    if pl.bid_sealed:
        return "bid sealed"
    return "" if pl.last_bid is None else f"last bid {pl.last_bid}"


def draw_table(view: TableView) -> Image.Image:
    """Draw a ``TableView`` (and only it) as a ``WIDTH`` x ``HEIGHT`` RGB image."""
    image = Image.new("RGB", (WIDTH, HEIGHT), BACKGROUND)
    painter = _Painter(image)
    _draw_header(painter, view)
    top = _draw_wall(painter, view) + 6
    n = len(view.players)
    gap, margin = 14, 16
    width = (WIDTH - 2 * margin - (n - 1) * gap) / n
    for i, pl in enumerate(view.players):
        x = margin + i * (width + gap)
        _draw_player(painter, (x, top, x + width, HEIGHT - margin), pl)
    return image


def render_image(state: State, seat: int | None = None, names: tuple[str, ...] | None = None) -> Image.Image:
    """The table as a Pillow image, as ``seat`` sees it (``None``: spectator)."""
    return draw_table(table_view(state, seat, names))


def render_rgb(state: State, seat: int | None = None, names: tuple[str, ...] | None = None) -> np.ndarray:
    """The table as an ``HEIGHT x WIDTH x 3`` uint8 array, as ``seat`` sees it."""
    return np.asarray(render_image(state, seat, names), dtype=np.uint8)


# --------------------------------------------------------------------------- window


class TableWindow:
    """A pygame window showing frames (the ``"human"`` render mode)."""

    def __init__(self, caption: str = "Island Fortress") -> None:
        import pygame  # the window is the only user of pygame: imported when one opens

        self._pygame = pygame
        pygame.display.init()
        pygame.display.set_caption(caption)
        self._screen = pygame.display.set_mode((WIDTH, HEIGHT))
        self._clock = pygame.time.Clock()

    def show(self, frame: np.ndarray, fps: float | None = None) -> None:
        pygame = self._pygame
        surface = pygame.surfarray.make_surface(np.transpose(frame, (1, 0, 2)))
        self._screen.blit(surface, (0, 0))
        pygame.event.pump()
        pygame.display.update()
        if fps:
            self._clock.tick(fps)

    def close(self) -> None:
        self._pygame.display.quit()
