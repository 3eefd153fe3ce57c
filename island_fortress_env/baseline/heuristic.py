"""A rule-based baseline player: hand-written evaluation plus a short greedy look-ahead.

The agent reads the engine ``state`` given to ``act()`` and uses only what its seat may see:
the public board (wall, supplies, prisons, every player's open resources, played favor cards,
revealed bids, deck *size*) plus its own favor hand, its own drawn cards and its own bid. It
never reads another seat's favor hand or drawn cards, another seat's sealed bid, the deck
order or the engine's random generator, and it never simulates an action whose outcome
depends on them (drawing favor cards, resolving the petition).

How it decides
--------------
* ``_value(state)`` scores a position for this seat: points already scored, provisional row
  and level majorities (weighted by how safe the lead is), the least-built-region bonus,
  Buyback Chips, the end-game treasure / Jade / Worker majorities, the worth of resources
  (Jade, blocks, Laborers, Convicts, fading as the game runs out), persistent favor
  bonuses and the favor cards in hand (completed ones and progress toward the others).
  The result is relative: own value minus a blend of the opponents' (public) values.
* Role choice: each legal role action is simulated on a clone of the state and completed
  greedily (every sub-choice one-ply on ``_value``); the best resulting position wins.
  Drawing favor cards is not simulated (the deck is hidden): it gets an expected value
  computed from the cards nobody has shown.
* Sub-decisions (counts, cells, Taskmaster moves, favor cards) use the same
  "clone, finish the action greedily, evaluate" look-ahead. A Taskmaster move is also
  credited with half of what building in the new region offers over the current one.
  Workers are assigned by rule (Convicts before Laborers, no odd Laborer when avoidable);
  buybacks are taken when the best second action is worth more than the Jade or chip.
* Favor cards (setup keep, draw keep) are ranked by their reward's worth, discounted by how
  many own blocks the pattern still needs on the current wall; a completed card in hand is
  worth only a small share of its reward, so playing it is always a clear gain.
* The Governor block is placed when it pays: completing a row it leads, locking a lead,
  or supporting its own next block (placement followed by the best action is compared
  with acting without it); at the end of its last turn it is placed if that does no harm.
* Bids are modest: the estimated worth of the Governor block and moving first, capped at
  a third of its Jade and at 5.
* A seeded ``numpy`` generator only breaks ties between equally valued options.

The weights are class attributes (``HeuristicAgent.BLOCK`` ...): subclass to tune them.

On a state of the C++ core (``core.state.CoreState``) a ``HeuristicAgent`` (not a subclass, whose
weights may differ) plays through its C++ twin (``core/src/heuristic*.cpp``): the same choices and
the same draws from ``self.rng``, many times faster.
Measured: about 97-100% wins in 3-player games against two ``random`` players, ~0.15 s per
game with three heuristic players.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from island_fortress_env.baseline.heuristic_eval import _BIG, HeuristicEvaluation, _GameInfo
from island_fortress_env.engine import actions as A
from island_fortress_env.engine import state as S
from island_fortress_env.engine import tables
from island_fortress_env.engine.decisions import Decision
from island_fortress_env.engine.wall import MAX_CELLS, STRIDE, iter_bits

try:  # the C++ core plays its own states (the same choices, much faster)
    from island_fortress_env.core.heuristic import CoreHeuristicAgent as _CoreHeuristic
    from island_fortress_env.core.state import CoreState as _CoreState
except ImportError:  # the core is not built: every state is an engine State
    _CoreState = None  # type: ignore[assignment,misc]

_GOV_END = A.GOVERNOR + MAX_CELLS
# Sub-decisions of a role action that the look-ahead plays itself. Everything else ends a
# simulation: a new role choice or turn end, drawing favor cards (the deck is hidden), and any
# decision outside the action phase (a bid would meet the others' sealed bids).
_FINISH_DECISIONS = frozenset(S.ACTION_PHASE_DECISIONS) - {
    Decision.CHOOSE_ROLE_ACTION,
    Decision.BUYBACK_OR_END_TURN,
    Decision.DRAW_FAVORS_COUNT,
    Decision.KEEP_DRAWN_FAVORS,
}


class HeuristicAgent(HeuristicEvaluation):
    """Rule-based player with one-ply look-ahead; see the module docstring."""

    def __init__(self, seed: int | None = None, name: str = "heuristic") -> None:
        self.name = name
        self.rng = np.random.default_rng(seed)
        self._infos: dict[Any, _GameInfo] = {}  # by game configuration
        self._opp_cache: dict[tuple, float] = {}
        self._core_player: Any = None  # the C++ player of core states, made on the first one

    def reset(self, seed: int | None = None) -> None:
        if seed is not None:
            self.rng = np.random.default_rng(seed)

    # ------------------------------------------------------------------ entry point

    def act(self, observation: Any, action_mask: Any, state: Any = None) -> int:
        if type(self) is HeuristicAgent and type(state) is _CoreState:
            action = self._act_in_core(action_mask, state)
            if action is not None:
                return action
        legal = [int(a) for a in np.flatnonzero(action_mask)]
        if not legal:
            raise ValueError("HeuristicAgent.act: the action mask has no legal action")
        if state is None:
            raise ValueError(
                "HeuristicAgent needs the engine state: "
                "call act(observation, action_mask, env.unwrapped.game_state)"
            )
        if len(legal) == 1:
            return legal[0]
        self._me = state.current_player()
        self._g = self._game_info(state.game)
        self._opp_cache.clear()  # its key is not the whole state: valid within one decision only
        choice = self._decide(state, legal)
        if choice not in legal:  # defensive: never return an illegal action
            choice = legal[int(self.rng.integers(len(legal)))]
        return choice

    def _act_in_core(self, action_mask: Any, state: Any) -> int | None:
        """A state of the C++ core whose legal actions are the mask's: the same player in C++
        (core/src/heuristic.cpp), the same choice and the same draws from ``self.rng``. None
        otherwise (a mask of another kind, or not the state's), and a subclass, which may change
        the weights, never comes here: both play in Python."""
        try:
            if state.is_terminal() or not state._s.is_legal_mask(action_mask):
                return None
        except (TypeError, ValueError):  # a mask that is not one byte per action
            return None
        if self._core_player is None:
            self._core_player = _CoreHeuristic()
        return self._core_player.act_with(self.rng, state)

    def _game_info(self, game: Any) -> _GameInfo:
        """The constants and caches of ``game``'s configuration: one agent can play many tables
        in turn (as the trainer's league does) without rebuilding them."""
        info = self._infos.get(game.config)
        if info is None:
            info = self._infos[game.config] = _GameInfo(game)
        return info

    def _decide(self, st: Any, legal: list[int]) -> int:
        d = st.decision
        legal_set = set(legal)
        gov = [a for a in legal if A.GOVERNOR <= a < _GOV_END]
        plain = [a for a in legal if not (A.GOVERNOR <= a < _GOV_END)]
        if d in (Decision.KEEP_DEALT_FAVORS, Decision.KEEP_DRAWN_FAVORS):
            return self._pick_card(st, plain)
        if d == Decision.PETITION_BID:
            return self._bid(st, legal_set)
        if d == Decision.FAVOR_TRADE_IN:
            return self._trade(st, legal_set)
        if d == Decision.CHOOSE_ROLE_ACTION:
            return self._role(st, plain, gov)
        if d == Decision.BUYBACK_OR_END_TURN:
            return self._turn_end(st, plain, gov)
        if not plain:
            return self._best_governor(st, gov)[1]
        if d == Decision.ASSIGN_LABORERS:
            return self._laborers(st, plain)
        if d == Decision.TREASURE_PRISONS:
            return self._prisons(st, plain)
        if d == Decision.DRAW_FAVORS_COUNT:
            return A.DRAW_COUNT if A.DRAW_COUNT in legal_set else plain[0]
        # Counts, cells, moves, favor cards: look ahead to the end of the action.
        return self._best_completion(st, plain)[1]

    # ------------------------------------------------------------------ look-ahead

    def _noise(self) -> float:
        return float(self.rng.random()) * 1e-6

    def _finish(self, st: Any) -> Any:
        """Play this seat's remaining sub-decisions of the current action greedily (no Governor
        block, nothing hidden). Stops at the turn end, a new role choice, or a draw."""
        me = self._me
        while st.current_player() == me and st.decision in _FINISH_DECISIONS:
            legal = [a for a in st.legal_actions() if not (A.GOVERNOR <= a < _GOV_END)]
            if not legal:
                legal = [A.PASS] if A.PASS in st.legal_actions() else st.legal_actions()[:1]
            d = st.decision
            if d == Decision.ASSIGN_LABORERS:
                a = self._laborers(st, legal)
            elif d == Decision.TREASURE_PRISONS:
                a = self._prisons(st, legal)
            elif len(legal) == 1:
                a = legal[0]
            elif d == Decision.BUILD_COUNT:
                a = self._best_completion(st, legal)[1]
            else:
                best, a = -_BIG, legal[0]
                for cand in legal:
                    c = st.clone()
                    c.apply_action(cand)
                    if c.decision == Decision.ASSIGN_LABORERS and c.current_player() == me:
                        c.apply_action(self._laborers(c, c.legal_actions()))
                    v = self._value(c) + self._noise()
                    if d == Decision.MOVE_TASKMASTER:
                        v += self._move_bonus(st, cand - A.MOVE_REGION)
                    if v > best:
                        best, a = v, cand
            st.apply_action(a)
        return st

    def _opportunity(self, st: Any, region: int) -> float:
        """What building this seat's next two blocks in ``region`` is worth (estimate)."""
        me = self._me
        workers = st.laborers[me] + st.convicts[me]
        if st.blocks[me] == 0 or workers < 2:
            return 0.0
        key = (st.occ, *st.own, region, st.blocks[me], workers, self._remaining_rounds(st))
        got = self._opp_cache.get(key)
        if got is not None:
            return got
        base = self._value(st)
        gains = []
        cells = st.geo.buildable(st.occ) & self._g.region_masks[region]
        for bit in iter_bits(cells):
            if tables.WORKERS_PER_LEVEL[bit // STRIDE] <= workers:
                gains.append(self._value(st.with_block(st.geo.bit_cell[bit], me)) - base)
        gains.sort(reverse=True)
        got = sum(x for x in gains[:2] if x > 0)
        if len(self._opp_cache) > 20_000:
            self._opp_cache.clear()
        self._opp_cache[key] = got
        return got

    def _move_bonus(self, st: Any, region: int) -> float:
        """Half of what the new region offers for building over the current one."""
        here = st.region[self._me]
        if region == here:
            return 0.0
        return self.MOVE * (self._opportunity(st, region) - self._opportunity(st, here))

    def _best_completion(self, st: Any, cands: list[int]) -> tuple[float, int]:
        """(value, action): each candidate applied to a clone, the action finished greedily."""
        best, choice = -_BIG, cands[0]
        draw = None
        for a in cands:
            c = st.clone()
            c.apply_action(a)
            if c.decision == Decision.DRAW_FAVORS_COUNT and c.current_player() == self._me:
                if draw is None:
                    draw = self._draw_value(st)
                v = self._value(c) + draw
            else:
                self._finish(c)
                v = self._value(c)
                if c.region[self._me] != st.region[self._me]:
                    v += self._move_bonus(st, c.region[self._me])
            v += self._noise()
            if v > best:
                best, choice = v, a
        return best, choice

    # ------------------------------------------------------------------ decisions

    def _role(self, st: Any, plain: list[int], gov: list[int]) -> int:
        best, choice = self._best_completion(st, plain)
        if gov:
            # Try the most promising Governor placements followed by the best action.
            base = self._value(st)
            scored = []
            for a in gov:
                c = st.clone()
                c.apply_action(a)
                scored.append((self._value(c) - base + self._noise(), a, c))
            scored.sort(key=lambda t: -t[0])
            for _gain, a, c in scored[:3]:
                if c.is_terminal():
                    v = self._value(c)
                elif c.decision == Decision.CHOOSE_ROLE_ACTION and c.current_player() == self._me:
                    legal = [x for x in c.legal_actions() if not (A.GOVERNOR <= x < _GOV_END)]
                    v = self._best_completion(c, legal)[0] if legal else self._value(c)
                else:
                    v = self._value(c)
                if v > best + self.GOVERNOR_MARGIN:
                    best, choice = v, a
        return choice

    def _turn_end(self, st: Any, plain: list[int], gov: list[int]) -> int:
        me = self._me
        base = self._value(st)
        best, choice = base, A.END_TURN if A.END_TURN in plain else plain[0]
        for a in (A.BUYBACK_TASKMASTER, A.BUYBACK_CHIP):
            if a not in plain:
                continue
            c = st.clone()
            c.apply_action(a)
            legal = [x for x in c.legal_actions() if not (A.GOVERNOR <= x < _GOV_END)]
            v = self._best_completion(c, legal)[0] if legal else self._value(c)
            if v > best + self.BUYBACK_MARGIN:
                best, choice = v, a
        if choice != A.END_TURN or not gov:
            return choice
        gain, cell = self._best_governor(st, gov)
        last_chance = st.turns_taken[me] == 2
        if gain > self.GOVERNOR_GAIN or (last_chance and gain >= 0.0):
            return cell
        return choice

    def _best_governor(self, st: Any, gov: list[int]) -> tuple[float, int]:
        base = self._value(st)
        best, choice = -_BIG, gov[0]
        for a in gov:
            c = st.clone()
            c.apply_action(a)
            v = self._value(c) - base + self._noise()
            if v > best:
                best, choice = v, a
        return best, choice

    def _laborers(self, st: Any, legal: list[int]) -> int:
        """Convicts die anyway and Laborers come back by halves: lose the least."""
        need = st.worker_need
        late = self._remaining_rounds(st) < 1.0
        cv, lv = (1.0, 1.0) if late else (0.5, 1.0)
        best, choice = _BIG, legal[0]
        for a in legal:
            lab = a - A.LABORERS
            loss = (need - lab) * cv + ((lab + 1) // 2) * lv + 1e-3 * lab
            if loss < best:
                best, choice = loss, a
        return choice

    def _prisons(self, st: Any, legal: list[int]) -> int:
        """Send the two Convicts where this seat's Taskmaster (and so its next collection) is."""
        mine = st.region[self._me]
        for a in legal:
            pair = A.PRISON_PAIRS[a - A.PRISON_PAIR]
            if mine in pair:
                return a
        return legal[0]

    def _pick_card(self, st: Any, legal: list[int]) -> int:
        me = self._me
        rem = self._remaining_rounds(st)
        if st.decision == Decision.KEEP_DEALT_FAVORS:
            rem = float(self._g.total_rounds)
        free = st.own[me] & ~st.reinf
        bad = st.occ & ~free
        best, choice = -_BIG, legal[0]
        for a in legal:
            card = a - A.KEEP_FAVOR
            v = self._card_value(st, card, rem, free, bad) + self._noise()
            if v > best:
                best, choice = v, a
        return choice

    def _bid(self, st: Any, legal: set[int]) -> int:
        """A modest bid: what the Governor block and moving first are worth, capped."""
        me = self._me
        jade = st.jade[me]
        base = self._value(st)
        gain = 0.0
        for bit in iter_bits(st.geo.buildable(st.occ)):
            gain = max(gain, self._value(st.with_block(st.geo.bit_cell[bit], me, governor=True)) - base)
        worth = 1.0 + gain
        vj = self.JADE_BASE + self.JADE_FADING * min(1.0, self._remaining_rounds(st) / 3.0)
        bid = int(min(worth / (2.0 * vj), jade // 3, self.BID_CAP))
        bid = max(bid, 0)
        while bid > 0 and A.BID + bid not in legal:
            bid -= 1
        return A.BID + bid

    def _trade(self, st: Any, legal: set[int]) -> int:
        """Favor Trade-in: every unplayed card becomes Jade or a Convict, where it helps most."""
        me = self._me
        others = [q for q in range(st.n) if q != me]
        jade_gap = max(st.jade[q] for q in others) - st.jade[me]
        workers = [st.laborers[q] + st.convicts[q] for q in range(st.n)]
        work_gap = max(workers[q] for q in others) - workers[me]
        options = []
        if A.TRADE_JADE in legal:
            options.append((jade_gap, A.TRADE_JADE))
        if A.TRADE_CONVICT in legal:
            options.append((work_gap, A.TRADE_CONVICT))
        if not options:
            return A.TRADE_DONE
        # Prefer the race this card can still win (gap >= 0 and smallest); else keep a lead.
        reachable = [o for o in options if o[0] >= 0]
        pick = min(reachable) if reachable else max(options)
        return pick[1]
