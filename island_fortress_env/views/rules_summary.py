"""The rules and the role cards in a page, with the numbers of the rules tables (for ``help`` in
the terminal and the browser's rules panel; docs/RULES.md has every ruling)."""

from __future__ import annotations

from dataclasses import dataclass

from island_fortress_env.engine import tables

__all__ = ["Section", "rules_summary"]


@dataclass(frozen=True)
class Section:
    title: str
    lines: tuple[str, ...]


def rules_summary() -> tuple[Section, ...]:
    """The rules in a page, numbers from the rules tables (docs/RULES.md has every ruling)."""
    cost = "/".join(str(c) for c in tables.PURCHASE_COST[1:])
    workers = "/".join(str(w) for w in tables.WORKERS_PER_LEVEL)
    repeat = ", ".join(f"{k.capitalize()} {v}" for k, v in tables.REPEAT_ROLE_COST.items())
    rows = "/".join(str(p) for p in tables.ROW_POINTS)
    chips = "/".join(str(p) for p in tables.BUYBACK_CHIP_POINTS)
    return (
        Section(
            "A round",
            (
                f"Income: every player takes {tables.INCOME} Jade plus their favor income.",
                "Petition: everyone seals a bid of Jade; the highest bid plus favor petition bonus wins "
                "(ties: more Jade bid, then the Governor marker moves clockwise; in round 1 at random). "
                "The winner pays the bid, takes the Governor marker and a Governor block, and plays first.",
                f"Actions: {tables.TURNS_PER_ROUND} turns each, clockwise from the marker. A turn plays one "
                "role card from your hand and one of its actions. After it you may buy the card back "
                f"(a Buyback Chip, or {tables.TASKMASTER_BUYBACK_COST} Jade for the Taskmaster) "
                "and act again, "
                "once a turn.",
                "The Governor block may be placed free on any buildable cell during the holder's turns; "
                "one not placed by the end of the holder's third turn goes back to the box.",
            ),
        ),
        Section(
            "Recruiter",
            (
                f"A Recruit Laborers: 1-{tables.MAX_PURCHASE} for {cost} Jade.",
                f"B Collect {tables.CONVICTS_COLLECTED} Convicts: "
                f"costs {tables.LABORERS_FOR_CONVICTS} Laborers.",
                "C Collect from Prison: the Jade and Convicts in the prison of your Taskmaster's region.",
            ),
        ),
        Section(
            "Planner",
            (
                f"A Buy Wall Blocks: 1-{tables.MAX_PURCHASE} for {cost} Jade.",
                "B Draw Favor Cards: "
                + ", or ".join(f"draw {d} keep {k}" for d, k in tables.FAVOR_DRAW_OPTIONS)
                + ".",
                "C Remove a Reinforcement in your Taskmaster's region.",
            ),
        ),
        Section(
            "Builder",
            (
                f"A Build Wall: 1 block, or 2 for {tables.DOUBLE_BUILD_COST} Jade, in your Taskmaster's "
                f"region, on an empty cell with support below. Workers per block by level 1-4: {workers}; "
                "all Convicts and half the Laborers (rounded up) used die.",
                "B Play a Completed Favor Card: its pattern of your unreinforced blocks is on the wall; "
                "reinforce one of them and take the rewards.",
                f"C Replace a Built Block: another player's unreinforced block in your region, for "
                f"{tables.REPLACE_MULTIPLIER}x the Workers of its level.",
                "Recruiter A, Planner A and Builder A also send a Convict from the supply to the prison "
                "of your Taskmaster's region.",
            ),
        ),
        Section(
            "Treasurer",
            (
                f"A Collect Jade: {tables.COLLECT_JADE}, plus 1 for every "
                f"{tables.TREASURE_PER_EXTRA_JADE} Treasure you hold.",
                f"B Collect a Treasure: {tables.TREASURE_CONVICTS} Convicts go to two different prisons; "
                "a Treasure is worth 1 VP.",
            ),
        ),
        Section(
            "Taskmaster",
            (
                "A Move the Taskmaster to another region.",
                f"B Repeat a role card on the table, for its cost: {repeat} Jade.",
            ),
        ),
        Section(
            "Scoring",
            (
                f"A completed row: a Buyback Chip to whoever completes it; {rows} VP (levels 1/2/3) to "
                "each player with the most blocks in it.",
                "A completed level: a Treasure to each player with the most blocks on it.",
                f"A block of yours on level 4: {tables.TOWER_POINTS} VP.",
                "At the end: unfinished rows and levels score as if completed; Buyback Chips "
                f"(0/1/2/3/4+: {chips} VP); {tables.LEAST_REGION_MULTIPLIER} VP per block in the "
                f"least-built region; most Treasure +{tables.TREASURE_BONUS}, fewest "
                f"-{tables.TREASURE_BONUS}; most Jade +{tables.JADE_BONUS}; most Workers "
                f"+{tables.WORKERS_BONUS}.",
                "The game ends when the wall is full, or after the round in which the last Governor "
                "block was taken. Ties: most blocks in the wall, then Jade, then Treasure.",
            ),
        ),
    )
