"""State: the complete rules of Island Fortress as a phase machine.

The state always waits on one *decision* of one player (``current_player()``). A role action
with several choices is a short stack of decisions (``decision`` plus a little context such as
``build_left``), so every decision is one id of the flat action table in ``actions.py``.
The Governor block is just one more family of legal actions at every decision of its
holder's turns. A pass exists only when nothing else is legal.

Where each rule lives (every decision's legal choices beside its effect, in the rulebook's
words): ``phases/setup.py`` (the deal and the keep), ``phases/petition.py`` (income and the
sealed bids), ``phases/action.py`` (turns, the role choice and Taskmaster B's repeat, buyback,
the Governor block), ``phases/end.py`` (wall completion, Favor Trade-in, final scoring) and
``roles/`` (one module per role card: each action's start, legal choices and effect). This
module holds the public API and the dispatch by decision; the fields and the moves of components
(supplies, prisons, blocks on the wall and what they score) are ``fields.py``'s, and the checks the
role choice makes are ``checks.py``'s. Rulings are cited by their docs/RULES.md ids.
The game a state plays (its configuration, deck and wall) is ``Game`` (``game.py``), named here
too; this module tells it that its states are ``State``.

No RL imports here: the PettingZoo environment and the observation encoder read this state.
"""

from __future__ import annotations

import operator
from collections.abc import Callable, Sequence
from typing import Any

from . import actions as A
from . import events as ev
from . import rng, scoring
from .decisions import ACTION_PHASE_DECISIONS, DECISION_NAMES, NUM_DECISIONS, TERMINAL, Decision
from .events import K_PASS
from .fields import StateFields
from .game import UNLIMITED, Game
from .phases.action import ActionPhase
from .phases.end import GameEnd
from .phases.petition import PetitionPhase
from .phases.setup import SetupPhase
from .protocol import StateProtocol
from .roles.builder import Builder
from .roles.planner import Planner
from .roles.recruiter import Recruiter
from .roles.taskmaster import Taskmaster
from .roles.treasurer import Treasurer

# The decisions are defined in decisions.py and the game in game.py; re-exported here for
# callers of the state.
__all__ = [
    "ACTION_PHASE_DECISIONS",
    "DECISION_NAMES",
    "GOVERNOR_OWNER",
    "NUM_DECISIONS",
    "TERMINAL",
    "UNLIMITED",
    "Decision",
    "Game",
    "IllegalActionError",
    "State",
    "play_random_game",
]

_PASS_ONLY = (A.PASS,)
GOVERNOR_OWNER = -1  # owner id of a Governor block in ``owner_at``


class IllegalActionError(ValueError):
    """An action that is not legal at the current decision; the state is left unchanged."""


def action_id(action: Any) -> int:
    """``action`` as an action id: any integer (numpy's too), never a bool; anything else raises
    ``IllegalActionError`` (whether the id is legal is the state's question)."""
    try:
        if isinstance(action, bool):
            raise TypeError
        return operator.index(action)
    except TypeError:
        raise IllegalActionError(
            f"illegal action {action!r}: actions are integers 0..{A.NUM_ACTIONS - 1}"
        ) from None


class State(
    SetupPhase, PetitionPhase, ActionPhase, GameEnd, Recruiter, Planner, Builder, Treasurer, Taskmaster
):
    """One moment of a game. ``clone()`` is a shallow copy of flat lists and ints."""

    __slots__ = ()  # the fields are declared by StateFields (fields.py)

    def __init__(self, game: Game, seed: int | None = None) -> None:
        cfg = game.config
        n = game.num_players
        self.game = game
        self.cfg = cfg
        self.geo = game.geometry
        self.n = n
        self.rng = rng.seed_state(seed)
        totals = game.totals
        self.sup_jade = totals["jade"]
        self.sup_treasure = totals["treasure"]
        self.sup_chips = totals["buyback_chips"]
        self.sup_reinf = totals["reinforcements"]
        self.sup_laborers = totals["laborers"]
        self.sup_convicts = totals["convicts"]
        self.gov_stock = totals["governor_blocks"]
        self.gov_box = 0
        self.gov_in_hand = False
        zeros = [0] * n
        self.jade = zeros[:]
        self.laborers = zeros[:]
        self.convicts = zeros[:]
        self.blocks = zeros[:]
        self.stock_blocks = [totals["blocks_per_player"]] * n
        self.chips = zeros[:]
        self.treasure = zeros[:]
        self.score = zeros[:]
        self.income_bonus = zeros[:]
        self.petition_bonus = zeros[:]
        self.region = zeros[:]  # every Taskmaster starts in the leftmost region's camp
        self.roles_hand = zeros[:]
        self.roles_table = zeros[:]
        self.favor_hand = zeros[:]
        self.favor_played = zeros[:]
        self.drawn = zeros[:]
        self.turns_taken = zeros[:]
        self.bids = zeros[:]
        self.last_bids: tuple[int, ...] | None = None
        self.occ = 0
        self.own = zeros[:]
        self.gov_bits = 0
        self.reinf = 0
        self.prison_jade = [0] * self.geo.regions
        self.prison_convicts = [0] * self.geo.regions
        self.favor_discard = 0
        self.round = 0
        self.holder = -1
        self.turn_index = 0
        self.actions_this_turn = 0
        self.buyback_used = False
        self.last_card = -1
        self.in_action = False
        self.keep_left = 0
        self.op = -1
        self.build_left = 0
        self.build_need = 0
        self.worker_need = 0
        self.favor_card = -1
        self.order: list[int] = []
        self.order_pos = 0
        self.wall_completer = -1
        self.winners: list[int] = []
        self._log: list[tuple[Any, ...]] = []  # raw records, typed by ``log`` when read
        self.bid_digits_left = 0  # base-101 digits of the sealed bid still to enter after this one
        self.unlimited = cfg.unlimited_components  # supplies that never run out
        self._legal: tuple[int, ...] | None = None
        self._setup()

    def current_player(self) -> int:
        return self.current

    def is_terminal(self) -> bool:
        return self.decision == Decision.GAME_OVER

    def legal_actions(self) -> tuple[int, ...]:
        """Sorted legal action ids for the current player (never empty before the end).

        A tuple: the state keeps it for the next call, and nobody can change it."""
        if self._legal is None:
            self._legal = self._compute_legal()
        return self._legal

    @property
    def log(self) -> list[ev.Event]:
        """The public event log, oldest first, as typed records (``events.Event``).

        The state stores each event as a plain tuple in its record's field order (a
        NamedTuple costs several times a tuple to build, on every step); the records are
        made here, when the log is read."""
        return ev.typed(self._log)

    def with_block(self, cell: int, player: int, governor: bool = False) -> State:
        """A copy of this state with a block put on ``cell`` exactly as the rules put one
        (``player``'s own block from their supply, or a Governor block ``player`` places),
        scoring what it completes. For look-ahead by agents: the pending decision is this
        state's, so the copy is for evaluation, not for play."""
        other = self.clone()
        bit = self.geo.cell_bits[cell]
        if not governor:
            other.blocks[player] -= 1
        other._place_block(player, bit, governor)
        other._legal = None
        return other

    def invalidate_cache(self) -> None:
        """Forget the memoised legal actions. Only for code that writes a state's fields
        directly (scenario builders in tests); ``apply_action`` keeps the memo right."""
        self._legal = None

    def apply_action(self, action: int) -> None:
        """Apply one legal action; an illegal one raises and changes nothing."""
        # docs/RULES.md E26: illegal input raises one error that names the problem and leaves the state
        # unchanged.
        a = action_id(action)
        if a not in self.legal_actions():
            raise IllegalActionError(self._illegal_message(a))
        self._legal = None
        self._apply(a)

    def clone(self) -> State:
        return _clone(self)

    def returns(self) -> list[float]:
        """Zero-sum win/loss returns at the end (see ``scoring.win_loss_returns``); 0 before."""
        if not self.is_terminal():
            return [0.0] * self.n
        return scoring.win_loss_returns(self.n, self.winners)

    def action_to_string(self, action: int) -> str:
        return _action_to_string(self, action)

    def decision_name(self) -> str:
        return DECISION_NAMES[self.decision]

    def blocks_built(self, player: int) -> int:
        return self.own[player].bit_count()

    def owner_at(self, bit: int) -> int | None:
        """Seat owning the block at ``bit``, ``GOVERNOR_OWNER``, or None if empty."""
        b = 1 << bit
        if not self.occ & b:
            return None
        if self.gov_bits & b:
            return GOVERNOR_OWNER
        for p in range(self.n):
            if self.own[p] & b:
                return p
        raise AssertionError("occupied cell without owner")

    def component_totals(self) -> dict[str, Any]:
        """Where every component is, summed: must always equal ``game.totals``."""
        n = self.n
        return {
            "jade": self.sup_jade + sum(self.jade) + sum(self.prison_jade),
            "treasure": self.sup_treasure + sum(self.treasure),
            "buyback_chips": self.sup_chips + sum(self.chips),
            "reinforcements": self.sup_reinf + self.reinf.bit_count(),
            "laborers": self.sup_laborers + sum(self.laborers),
            "convicts": self.sup_convicts + sum(self.convicts) + sum(self.prison_convicts),
            "blocks_per_player": [
                self.stock_blocks[p] + self.blocks[p] + self.own[p].bit_count() for p in range(n)
            ],
            "governor_blocks": self.gov_stock + self.gov_box + int(self.gov_in_hand)
            + self.gov_bits.bit_count(),
            "favor_cards": len(self.deck)
            + sum((self.favor_hand[p] | self.favor_played[p] | self.drawn[p]).bit_count() for p in range(n))
            + self.favor_discard.bit_count(),
        }  # fmt: skip

    def _compute_legal(self) -> tuple[int, ...]:
        d = self.decision
        if d == Decision.GAME_OVER:
            return ()
        p = self.current
        out = _LEGAL[d](self, p)  # each phase / role action owns its legal choices
        if d in ACTION_PHASE_DECISIONS and self.gov_in_hand and p == self.holder:
            geo = self.geo
            out = sorted([*out, *[A.GOVERNOR + geo.bit_cell[b] for b in self._governor_bits()]])
        if not out:
            return _PASS_ONLY  # docs/RULES.md C12: never an empty choice
        return out if type(out) is tuple else tuple(out)

    def _illegal_message(self, action: int) -> str:
        where = f"round {self.round}, player {self.current}, decision '{DECISION_NAMES[self.decision]}'"
        if not 0 <= action < A.NUM_ACTIONS:
            return f"illegal action {action}: outside the action space 0..{A.NUM_ACTIONS - 1} ({where})"
        if self.decision == Decision.GAME_OVER:
            return f"illegal action {action}: the game is over"
        legal = ", ".join(str(a) for a in self.legal_actions()[:12])
        more = "" if len(self.legal_actions()) <= 12 else ", ..."
        return f"illegal action {action} ({self.action_to_string(action)}) at {where}; legal: [{legal}{more}]"

    def _apply(self, a: int) -> None:
        p = self.current
        if A.GOVERNOR <= a < A.GOVERNOR + len(self.geo.cell_bits):
            self._place_governor(p, self.geo.cell_bits[a - A.GOVERNOR])
            return
        # docs/RULES.md C12, E22: PASS is the only option when nothing else is legal, which a legal game
        # never needs.
        if a == A.PASS:
            self._log.append((K_PASS, p))
            if self.decision in ACTION_PHASE_DECISIONS:
                self._end_turn()
            return
        d = self.decision
        handler = _HANDLERS[d]
        handler(self, p, a)


_LEGAL: dict[Decision, Callable[[State, int], Sequence[int]]] = {
    Decision.KEEP_DEALT_FAVORS: State._legal_keep,
    Decision.PETITION_BID: State._legal_bid_digits,
    Decision.CHOOSE_ROLE_ACTION: State._legal_role,
    Decision.RECRUIT_COUNT: State._legal_recruit,
    Decision.BUY_BLOCKS_COUNT: State._legal_buy,
    Decision.DRAW_FAVORS_COUNT: State._legal_draw,
    Decision.KEEP_DRAWN_FAVORS: State._legal_keep,
    Decision.REMOVE_REINFORCEMENT_CELL: State._legal_remove,
    Decision.BUILD_COUNT: State._legal_build_count,
    Decision.BUILD_CELL: State._legal_build_cell,
    Decision.ASSIGN_LABORERS: State._legal_laborers,
    Decision.PLAY_FAVOR_CARD: State._legal_favor,
    Decision.REINFORCE_CELL: State._legal_reinforce,
    Decision.REPLACE_CELL: State._legal_replace,
    Decision.TREASURE_PRISONS: State._legal_prisons,
    Decision.MOVE_TASKMASTER: State._legal_move,
    Decision.BUYBACK_OR_END_TURN: State._legal_turn_end,
    Decision.FAVOR_TRADE_IN: State._legal_trade,
}
_HANDLERS: dict[Decision, Callable[[State, int, int], None]] = {
    Decision.KEEP_DEALT_FAVORS: State._on_keep,
    Decision.PETITION_BID: State._on_bid,
    Decision.CHOOSE_ROLE_ACTION: State._on_role,
    Decision.RECRUIT_COUNT: State._on_recruit,
    Decision.BUY_BLOCKS_COUNT: State._on_buy,
    Decision.DRAW_FAVORS_COUNT: State._on_draw,
    Decision.KEEP_DRAWN_FAVORS: State._on_keep,
    Decision.REMOVE_REINFORCEMENT_CELL: State._on_remove,
    Decision.BUILD_COUNT: State._on_build_count,
    Decision.BUILD_CELL: State._on_build_cell,
    Decision.ASSIGN_LABORERS: State._on_laborers,
    Decision.PLAY_FAVOR_CARD: State._on_favor,
    Decision.REINFORCE_CELL: State._on_reinforce,
    Decision.REPLACE_CELL: State._on_replace,
    Decision.TREASURE_PRISONS: State._on_prisons,
    Decision.MOVE_TASKMASTER: State._on_move,
    Decision.BUYBACK_OR_END_TURN: State._on_turn_end,
    Decision.FAVOR_TRADE_IN: State._on_trade,
}

_LIST_SLOTS = (
    "jade", "laborers", "convicts", "blocks", "stock_blocks", "chips", "treasure", "score",
    "income_bonus", "petition_bonus", "region", "roles_hand", "roles_table", "favor_hand",
    "favor_played", "drawn", "turns_taken", "bids", "own", "prison_jade", "prison_convicts",
    "deck", "order", "winners", "_log",
)  # fmt: skip
_SCALAR_SLOTS = tuple(
    s for s in StateFields.__slots__ if s not in _LIST_SLOTS
)  # (last_bids and the legal actions are tuples: shared like any immutable value)


def _compile_clone() -> Callable[[State], State]:
    """``State.clone`` as straight-line code written out from the slot tuples above: one
    assignment per field, lists sliced, so no field can be missed. About 3x faster than a
    getattr/setattr loop over the names; the heuristic player clones a state for every option
    it looks at."""
    lines = ["def clone(self):", "    other = new(State)"]
    lines += [f"    other.{name} = self.{name}" for name in _SCALAR_SLOTS]
    lines += [f"    other.{name} = self.{name}[:]" for name in _LIST_SLOTS]
    lines.append("    return other")
    namespace: dict[str, Any] = {"new": object.__new__, "State": State}
    exec("\n".join(lines), namespace)
    clone: Callable[[State], State] = namespace["clone"]
    return clone


_clone = _compile_clone()
Game._state_type = State  # what ``Game.new_initial_state`` makes (game.py imports no state)


def _action_to_string(state: State, action: int) -> str:
    """Human-readable meaning of ``action`` at this state's pending decision."""
    from .describe import action_to_string  # kept in its own module: text, not rules

    return action_to_string(state, action)


def play_random_game(game: Game, seed: int) -> StateProtocol:
    """Play one game with uniformly random legal actions (the engine's own RNG stream is
    separate from the chooser's, so a seed fixes both); the final state is the one ``game``
    makes (an engine ``State``, or a core state from ``core.game.Game``)."""
    state = game.new_initial_state(seed)
    pick = rng.seed_state(seed ^ rng.CHOOSER_SALT)
    while not state.is_terminal():
        legal = state.legal_actions()
        pick, i = rng.below(pick, len(legal))
        state.apply_action(legal[i])
    return state
