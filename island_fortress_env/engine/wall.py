"""The wall: geometry, support rules, rows and levels, as bit sets over one continuous wall.

Regions lie edge to edge, so the wall is one grid of ``5 * regions`` columns. Bit
``level * STRIDE + column`` stands for a cell (levels 0-3 here are the rulebook's levels 1-4).
Level 4 exists only above each region's two end columns (the towers). With occupancy as an
int, "every empty cell with support below" is one expression: ``VALID & ~occ & (LEVEL0 | occ << STRIDE)``.

Cells also have a small public index (``region * 17 + k``) used by the action table.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import cache

from .tables import MAX_REGIONS, WORKERS_PER_LEVEL

STRIDE = 20  # columns per level in the bit layout: room for four regions of five columns
LEVELS = 4
COLUMNS_PER_REGION = 5
CELLS_PER_REGION = 3 * COLUMNS_PER_REGION + 2  # 17
MAX_CELLS = MAX_REGIONS * CELLS_PER_REGION  # 68


def bit_of(level: int, column: int) -> int:
    return level * STRIDE + column


def iter_bits(mask: int):
    """Yield the bit indexes set in ``mask``, lowest first."""
    while mask:
        low = mask & -mask
        yield low.bit_length() - 1
        mask ^= low


@dataclass(frozen=True)
class WallGeometry:
    """Everything about the wall that depends only on the number of regions."""

    regions: int
    width: int
    valid: int  # every cell of the wall
    level0: int  # the cells of level 1, which need no support
    region_mask: tuple[int, ...]  # per region, all its cells
    row_mask: tuple[tuple[int, ...], ...]  # [region][level 0..2]: the five cells of a row
    level_mask: tuple[int, ...]  # [level 0..2]: that row across every region
    cell_bits: tuple[int, ...]  # public cell index -> bit index
    bit_cell: dict[int, int]  # bit index -> public cell index
    bit_region: dict[int, int]  # bit index -> region

    @staticmethod
    def workers_for(bit: int) -> int:
        return WORKERS_PER_LEVEL[bit // STRIDE]

    def buildable(self, occupied: int) -> int:
        """Empty cells that have a block directly below (or stand on the ground)."""
        return self.valid & ~occupied & (self.level0 | (occupied << STRIDE))

    def cell_name(self, bit: int) -> str:
        level, column = divmod(bit, STRIDE)
        region, col = divmod(column, COLUMNS_PER_REGION)
        return f"R{region + 1}-L{level + 1}-C{col + 1}"


def _cell_bits_of_region(region: int) -> list[int]:
    """The 17 cells of a region in public order: level 1 left to right, ..., then the towers."""
    base = region * COLUMNS_PER_REGION
    bits = [bit_of(level, base + c) for level in range(3) for c in range(COLUMNS_PER_REGION)]
    bits += [bit_of(3, base), bit_of(3, base + COLUMNS_PER_REGION - 1)]
    return bits


@cache
def geometry(regions: int) -> WallGeometry:
    if not 1 <= regions <= MAX_REGIONS:
        raise ValueError(f"a wall has 1..{MAX_REGIONS} regions, not {regions}")
    # docs/RULES.md C5: a region is 3 rows of 5 plus 2 tower cells on level 4 above its end columns (17
    # cells); regions lie edge to edge as one continuous wall; a level is the same row across all regions.
    region_mask = []
    row_mask = []
    cell_bits: list[int] = []
    for r in range(regions):
        bits = _cell_bits_of_region(r)
        cell_bits += bits
        region_mask.append(sum(1 << b for b in bits))
        row_mask.append(tuple(sum(1 << b for b in bits[level * 5 : level * 5 + 5]) for level in range(3)))
    valid = sum(region_mask)
    level_mask = tuple(sum(row_mask[r][level] for r in range(regions)) for level in range(3))
    return WallGeometry(
        regions=regions,
        width=regions * COLUMNS_PER_REGION,
        valid=valid,
        level0=level_mask[0],
        region_mask=tuple(region_mask),
        row_mask=tuple(row_mask),
        level_mask=level_mask,
        cell_bits=tuple(cell_bits),
        bit_cell={b: i for i, b in enumerate(cell_bits)},
        bit_region={b: (b % STRIDE) // COLUMNS_PER_REGION for b in cell_bits},
    )
