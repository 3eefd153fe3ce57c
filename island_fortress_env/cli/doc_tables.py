"""Markdown tables for docs/SPACES.md, made from the action table and the observation layout,
so the documentation cannot drift from the code (a test compares them with docs/SPACES.md).

    island-fortress doc-tables
"""

from __future__ import annotations

import argparse

from island_fortress_env.engine.actions import ACTION_FAMILIES, NUM_ACTIONS
from island_fortress_env.env.observation import (
    GLOBAL_FEATURES,
    LAYOUT,
    OBS_SIZE,
    PLAYER_FEATURES,
    WALL_PLANES,
)


def action_table() -> str:
    rows = ["| ids | family | meaning |", "|---|---|---|"]
    for f in ACTION_FAMILIES:
        ids = str(f.start) if f.size == 1 else f"{f.start}-{f.start + f.size - 1}"
        rows.append(f"| {ids} | `{f.name}` | {f.meaning} |")
    rows.append(f"\n`Discrete({NUM_ACTIONS})` for every table size and variant.")
    return "\n".join(rows)


def observation_table() -> str:
    rows = ["| slice | block | contents |", "|---|---|---|"]
    details = [
        "; ".join(WALL_PLANES),
        "; ".join(PLAYER_FEATURES),
        "; ".join(GLOBAL_FEATURES),
        "multi-hot over favor card ids",
        "multi-hot over favor card ids",
        "multi-hot over favor card ids",
        "multi-hot over favor card ids",
    ]
    for (name, start, size), detail in zip(LAYOUT, details, strict=False):
        rows.append(f"| {start}-{start + size - 1} | {name} | {detail} |")
    rows.append(f"\n`Box(-1, 10, ({OBS_SIZE},), float32)` for every table size and variant.")
    return "\n".join(rows)


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.description = "Print the Markdown tables of docs/SPACES.md: the actions and the observation."


def run(args: argparse.Namespace) -> int:
    print("## Actions\n")
    print(action_table())
    print("\n## Observation\n")
    print(observation_table())
    return 0
