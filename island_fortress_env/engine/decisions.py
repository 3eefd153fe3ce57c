"""The decisions a player can be asked to take, in the order of their ids.

The state always waits on one decision of one player; a role action with several choices is
a short sequence of decisions. ``Decision.label`` is the text shown to people (prompts,
observation feature names); code keys on the members, one name each (``Decision.BUILD_CELL``;
the C++ core's ``Decision::kBuildCell`` is generated from this class by ``core/codegen.py``).
"""

from __future__ import annotations

from enum import IntEnum


class Decision(IntEnum):
    KEEP_DEALT_FAVORS = 0
    PETITION_BID = 1
    CHOOSE_ROLE_ACTION = 2
    RECRUIT_COUNT = 3
    BUY_BLOCKS_COUNT = 4
    DRAW_FAVORS_COUNT = 5
    KEEP_DRAWN_FAVORS = 6
    REMOVE_REINFORCEMENT_CELL = 7
    BUILD_COUNT = 8
    BUILD_CELL = 9
    ASSIGN_LABORERS = 10
    PLAY_FAVOR_CARD = 11
    REINFORCE_CELL = 12
    REPLACE_CELL = 13
    TREASURE_PRISONS = 14
    MOVE_TASKMASTER = 15
    BUYBACK_OR_END_TURN = 16
    FAVOR_TRADE_IN = 17
    GAME_OVER = 18

    @property
    def label(self) -> str:
        return _LABELS[self]


_LABELS = {
    Decision.KEEP_DEALT_FAVORS: "keep setup favors",
    Decision.PETITION_BID: "petition bid",
    Decision.CHOOSE_ROLE_ACTION: "choose role action",
    Decision.RECRUIT_COUNT: "recruit how many Laborers",
    Decision.BUY_BLOCKS_COUNT: "buy how many blocks",
    Decision.DRAW_FAVORS_COUNT: "draw 3 or 5 favors",
    Decision.KEEP_DRAWN_FAVORS: "keep drawn favors",
    Decision.REMOVE_REINFORCEMENT_CELL: "remove which reinforcement",
    Decision.BUILD_COUNT: "build 1 or 2 blocks",
    Decision.BUILD_CELL: "build where",
    Decision.ASSIGN_LABORERS: "how many Laborers",
    Decision.PLAY_FAVOR_CARD: "play which favor",
    Decision.REINFORCE_CELL: "reinforce which block",
    Decision.REPLACE_CELL: "replace which block",
    Decision.TREASURE_PRISONS: "which two prisons",
    Decision.MOVE_TASKMASTER: "move the Taskmaster where",
    Decision.BUYBACK_OR_END_TURN: "buyback or end turn",
    Decision.FAVOR_TRADE_IN: "favor trade-in",
    Decision.GAME_OVER: "game over",
}
TERMINAL = -4  # OpenSpiel's value of current_player() when no player is to move
NUM_DECISIONS = len(Decision)
DECISION_NAMES = tuple(d.label for d in Decision)  # indexed by the decision's id
ACTION_PHASE_DECISIONS = frozenset(
    d for d in Decision if Decision.CHOOSE_ROLE_ACTION <= d <= Decision.BUYBACK_OR_END_TURN
)
