"""The figures of a finished game that both trainers log to TensorBoard (``game/``): win share,
final score and its components, rounds, Jade spent, favors played, blocks built. They are read off
the game's record (``engine.results.GameResult``), which the batched core writes as each game ends
and ``engine.results.game_result`` makes from a finished state."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from island_fortress_env.engine.results import GameResult
from island_fortress_env.engine.scoring import COMPONENTS


def result_figures(result: GameResult, seats: Sequence[int]) -> list[dict[str, Any]]:
    """The figures of finished game ``result`` logged for each of ``seats``."""
    return [
        {
            "win": result.win[seat],
            "score": result.score[seat],
            "components": dict(zip(COMPONENTS, result.components[seat], strict=True)),
            "rounds": result.rounds,
            "jade_spent": result.jade_spent[seat],
            "favors_played": result.favors_played[seat],
            "blocks_built": result.blocks_built[seat],
        }
        for seat in seats
    ]
