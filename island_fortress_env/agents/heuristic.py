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
weights may differ) plays through its C++ twin (``core/src/heuristic.cpp``): the same choices and
the same draws from ``self.rng``, many times faster.
Measured: about 97-100% wins in 3-player games against two ``random`` players, ~0.15 s per
game with three heuristic players.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from island_fortress_env.engine import actions as A
from island_fortress_env.engine import state as S
from island_fortress_env.engine import tables
from island_fortress_env.engine.wall import MAX_CELLS, STRIDE, iter_bits

try:  # the C++ core plays its own states (the same choices, much faster)
    from island_fortress_env.core.heuristic import CoreHeuristicAgent as _CoreHeuristic
    from island_fortress_env.core.state import CoreState as _CoreState
except ImportError:  # the core is not built: every state is an engine State
    _CoreState = None  # type: ignore[assignment,misc]

_BIG = 1e9
_GOV_END = A.GOVERNOR + MAX_CELLS
# Sub-decisions of a role action that the look-ahead plays itself. Everything else ends a
# simulation: a new role choice or turn end, drawing favor cards (the deck is hidden), and any
# decision outside the action phase (a bid would meet the others' sealed bids).
_FINISH_DECISIONS = frozenset(S.ACTION_PHASE_DECISIONS) - {
    S.D_ROLE, S.D_TURN_END, S.D_DRAW_COUNT, S.D_KEEP_DRAWN,
}  # fmt: skip

# Weight of a provisional row/level majority, by (own count - best other count).
_LEAD_WEIGHT = {0: 0.6, -1: 0.2}


def _lead_weight(lead: int, empty: int) -> float:
    if lead > empty:
        return 1.0
    if lead > 0:
        return 0.8 + 0.1 * min(lead, 2)
    return _LEAD_WEIGHT.get(lead, 0.04)


class _GameInfo:
    """The constants the evaluation needs for one game configuration, and its caches (keyed by
    what a position is made of, so every game of the configuration shares them)."""

    def __init__(self, game: Any) -> None:
        geo = game.geometry
        self.progress_cache: dict[tuple[int, int, int], int] = {}
        self.reward_cache: dict[tuple[int, float], float] = {}
        self.hand_cache: dict[tuple[int, int, int, float], float] = {}
        self.wall_cache: dict[tuple[int, ...], list[float]] = {}
        self.config = game.config
        self.geo = geo
        self.n = game.num_players
        self.total_rounds = game.config.governor_blocks
        # (cells, points, cell count) of every row and level whose majority scores.
        self.majorities = [
            (geo.row_mask[r][lv], float(tables.ROW_POINTS[lv]), 5)
            for r in range(geo.regions)
            for lv in range(3)
        ] + [(mask, 1.5, mask.bit_count()) for mask in geo.level_mask]
        self.region_masks = list(geo.region_mask)
        self.cards = game.deck.cards
        self.all_cards = (1 << len(self.cards)) - 1
        # Every placement of every card's pattern that lies on this wall.
        self.anchors: list[list[int]] = []
        for card in self.cards:
            spots = []
            for anchor in iter_bits(card.anchor_mask):
                cells = card.cells_at(anchor)
                if cells & geo.valid == cells:
                    spots.append(cells)
            self.anchors.append(spots)


class HeuristicAgent:
    """Rule-based player with one-ply look-ahead; see the module docstring."""

    # Evaluation weights (points). Resources fade over the last rounds ("fr" goes 1 -> 0).
    JADE_BASE, JADE_FADING = 0.12, 0.38  # a Jade: always worth the base, more while time is left
    BLOCK = 1.6  # a Wall Block in supply (the first BLOCK_CAP of them; the rest a quarter)
    BLOCK_CAP = 3.0
    LABORER = 0.9  # a Laborer is used about twice (half survive each build) ...
    CONVICT = 0.45  # ... a Convict once
    INCOME = 0.45  # per round left, per point of favor income
    PETITION = 0.25  # per round left, per point of favor petition
    OPP_FAVOR = 1.2  # an opponent's unseen favor card
    FAVOR_DONE = 0.15  # share of a completed favor card's reward while still in hand
    FAVOR_PROGRESS, FAVOR_STEP = 0.3, 0.6  # incomplete card: share * STEP ** missing blocks
    MOVE = 0.5  # share of a region's building opportunity credited to a Taskmaster move
    REL_MAX = 0.5  # relative value: own - REL_MAX * best opponent - (1 - REL_MAX) * mean opponent

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
        if d in (S.D_KEEP_SETUP, S.D_KEEP_DRAWN):
            return self._pick_card(st, plain)
        if d == S.D_BID:
            return self._bid(st, legal_set)
        if d == S.D_TRADE_IN:
            return self._trade(st, legal_set)
        if d == S.D_ROLE:
            return self._role(st, plain, gov)
        if d == S.D_TURN_END:
            return self._turn_end(st, plain, gov)
        if not plain:
            return self._best_governor(st, gov)[1]
        if d == S.D_LABORERS:
            return self._laborers(st, plain)
        if d == S.D_PRISON_PAIR:
            return self._prisons(st, plain)
        if d == S.D_DRAW_COUNT:
            return A.DRAW_COUNT if A.DRAW_COUNT in legal_set else plain[0]
        # Counts, cells, moves, favor cards: look ahead to the end of the action.
        return self._best_completion(st, plain)[1]

    # ------------------------------------------------------------------ evaluation

    def _remaining_rounds(self, st: Any) -> float:
        if st.decision in S.ACTION_PHASE_DECISIONS:
            return st.gov_stock + (3 - st.turns_taken[self._me]) / 3.0
        if st.decision == S.D_GAME_OVER or st.decision == S.D_TRADE_IN:
            return 0.0
        return float(st.gov_stock + (1 if st.decision == S.D_BID else 0))

    def _wall_values(self, st: Any) -> list[float]:
        """The wall's part of every seat's value (cached by wall contents): provisional row and
        level majorities (uncompleted ones score at the end as if completed; a level gives a
        Treasure) and the least-built-region bonus."""
        own = st.own
        occ = st.occ
        key = (occ, *own)
        g = self._g
        got = g.wall_cache.get(key)
        if got is not None:
            return got
        n = st.n
        vals = [0.0] * n
        for mask, pts, empty_total in g.majorities:
            filled = occ & mask
            if filled == mask:
                continue
            empty = empty_total - filled.bit_count()
            counts = [(o & mask).bit_count() for o in own]
            best = max(counts)
            if not best:
                continue
            nbest = counts.count(best)
            second = max(c for c in counts if c != best) if nbest < n else best
            for p in range(n):
                c = counts[p]
                if c:
                    if c == best:
                        lead = 0 if nbest > 1 else c - second
                    else:
                        lead = c - best
                    vals[p] += pts * _lead_weight(lead, empty)
        for p in range(n):
            o = own[p]
            regions = [(o & m).bit_count() for m in g.region_masks]
            vals[p] += tables.LEAST_REGION_MULTIPLIER * min(regions) + 0.25 * sum(regions)
        got = vals
        if len(g.wall_cache) > 50_000:
            g.wall_cache.clear()
        g.wall_cache[key] = got
        return got

    def _values(self, st: Any) -> list[float]:
        """Public estimate of every seat's final score (own favor hand added by _value)."""
        n = st.n
        if st.decision == S.D_GAME_OVER:
            return [float(s) for s in st.score]
        wall = self._wall_values(st)
        rem = self._remaining_rounds(st)
        fr = min(1.0, rem / 3.0)
        endw = 3.0 * (1.0 - 0.6 * fr)  # end-game majorities firm up as the game ends
        treasure = st.treasure
        t_hi, t_lo = max(treasure), min(treasure)
        jade = st.jade
        laborers, convicts = st.laborers, st.convicts
        workers = [laborers[p] + convicts[p] for p in range(n)]
        w_hi = max(workers)
        j_hi = max(jade)
        vj = self.JADE_BASE + self.JADE_FADING * fr
        vb = self.BLOCK * min(1.0, rem / 1.5)
        vl = self.LABORER * fr
        vc = self.CONVICT * fr
        cap_b = min(2.0 * rem + 1.0, self.BLOCK_CAP)
        later = max(0.0, rem - 1.0)
        chip_pts = tables.BUYBACK_CHIP_POINTS
        top_chip = len(chip_pts) - 1
        me = self._me
        vals = []
        for p in range(n):
            v = st.score[p] + wall[p]
            chips = st.chips[p]
            v += chip_pts[min(chips, top_chip)] + 0.4 * fr * min(chips, 2)
            t = treasure[p]
            if t == t_hi:
                v += endw
            if t == t_lo:
                v -= endw
            if jade[p] == j_hi:
                v += endw
            if workers[p] == w_hi and w_hi > 0:
                v += endw
            v += vj * jade[p]
            # Blocks are worth building only while there is time to build them.
            b = st.blocks[p]
            v += vb * b if b <= cap_b else vb * (cap_b + 0.25 * (b - cap_b))
            lab, con = laborers[p], convicts[p]
            if lab or con:
                need = 4.0 * min(b + min(st.stock_blocks[p], 3), 2.0 * rem + 1.0)
                units = lab * 2 + con
                worth = vl * lab + vc * con
                v += worth if units <= need else worth * (need + 0.25 * (units - need)) / units
            v += (st.income_bonus[p] * self.INCOME + st.petition_bonus[p] * self.PETITION) * later
            if p != me:
                v += self.OPP_FAVOR * fr * st.favor_hand[p].bit_count()
            vals.append(v)
        return vals

    def _value(self, st: Any) -> float:
        me = self._me
        vals = self._values(st)
        if st.decision != S.D_GAME_OVER:
            vals[me] += self._hand_value(st)
        others = [vals[q] for q in range(st.n) if q != me]
        return vals[me] - self.REL_MAX * max(others) - (1.0 - self.REL_MAX) * sum(others) / len(others)

    def _reward_value(self, card: Any, rem: float) -> float:
        r = card.rewards
        fr = min(1.0, rem / 3.0)
        return (
            r["vp"]
            + 1.6 * r["treasure"]
            + 2.0 * r["buyback_chips"]
            + (self.JADE_BASE + self.JADE_FADING * fr) * r["jade"]
            + self.CONVICT * fr * r["convicts"]
            + self.LABORER * fr * r["laborers"]
            + self.BLOCK * min(1.0, rem / 1.5) * r["wall_blocks"]
            + self.INCOME * r["income"] * max(0.0, rem - 1.0)
            + self.PETITION * r["petition"] * max(0.0, rem - 1.0)
        )

    def _missing(self, st: Any, card: int, free: int, bad: int) -> int:
        """Fewest own blocks still missing for ``card``'s pattern (large if impossible)."""
        key = (card, free, bad)
        got = self._g.progress_cache.get(key)
        if got is None:
            got = 99
            for cells in self._g.anchors[card]:
                if cells & bad:
                    continue
                m = (cells & ~free).bit_count()
                if m < got:
                    got = m
                    if m == 0:
                        break
            if len(self._g.progress_cache) > 200_000:
                self._g.progress_cache.clear()
            self._g.progress_cache[key] = got
        return got

    def _card_value(self, st: Any, card: int, rem: float, free: int, bad: int) -> float:
        missing = self._missing(st, card, free, bad)
        if missing >= 99:
            return 0.0
        key = (card, rem)
        value = self._g.reward_cache.get(key)
        if value is None:
            value = self._g.reward_cache[key] = self._reward_value(self._g.cards[card], rem)
        if missing == 0:
            return self.FAVOR_DONE * value * min(1.0, rem)
        return self.FAVOR_PROGRESS * value * self.FAVOR_STEP**missing * min(1.0, rem / (1.0 + 0.5 * missing))

    def _hand_value(self, st: Any) -> float:
        me = self._me
        hand = st.favor_hand[me]
        if not hand:
            return 0.0
        rem = self._remaining_rounds(st)
        free = st.own[me] & ~st.reinf
        bad = st.occ & ~free
        key = (hand, free, bad, rem)
        got = self._g.hand_cache.get(key)
        if got is None:
            got = sum(self._card_value(st, c, rem, free, bad) for c in iter_bits(hand))
            if len(self._g.hand_cache) > 100_000:
                self._g.hand_cache.clear()
            self._g.hand_cache[key] = got
        return got

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
            if d == S.D_LABORERS:
                a = self._laborers(st, legal)
            elif d == S.D_PRISON_PAIR:
                a = self._prisons(st, legal)
            elif len(legal) == 1:
                a = legal[0]
            elif d == S.D_BUILD_COUNT:
                a = self._best_completion(st, legal)[1]
            else:
                best, a = -_BIG, legal[0]
                for cand in legal:
                    c = st.clone()
                    c.apply_action(cand)
                    if c.decision == S.D_LABORERS and c.current_player() == me:
                        c.apply_action(self._laborers(c, c.legal_actions()))
                    v = self._value(c) + self._noise()
                    if d == S.D_MOVE_REGION:
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

    def _draw_value(self, st: Any) -> float:
        """Expected worth of drawing 3 favor cards and keeping the best 2 (cards not yet seen)."""
        me = self._me
        seen = st.favor_hand[me] | st.drawn[me] | st.favor_discard
        for p in range(st.n):
            seen |= st.favor_played[p]
        unknown = list(iter_bits(self._g.all_cards & ~seen))
        if not unknown or len(st.deck) < 3:
            return -_BIG
        rem = self._remaining_rounds(st)
        free = st.own[me] & ~st.reinf
        bad = st.occ & ~free
        vals = sorted((self._card_value(st, c, rem, free, bad) for c in unknown), reverse=True)
        mean = sum(vals) / len(vals)
        top = sum(vals[: max(1, len(vals) // 3)]) / max(1, len(vals) // 3)
        held = st.favor_hand[me].bit_count()
        return (mean + top) * (1.0 if held < 4 else 0.5)

    def _best_completion(self, st: Any, cands: list[int]) -> tuple[float, int]:
        """(value, action): each candidate applied to a clone, the action finished greedily."""
        best, choice = -_BIG, cands[0]
        draw = None
        for a in cands:
            c = st.clone()
            c.apply_action(a)
            if c.decision == S.D_DRAW_COUNT and c.current_player() == self._me:
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
                elif c.decision == S.D_ROLE and c.current_player() == self._me:
                    legal = [x for x in c.legal_actions() if not (A.GOVERNOR <= x < _GOV_END)]
                    v = self._best_completion(c, legal)[0] if legal else self._value(c)
                else:
                    v = self._value(c)
                if v > best + 0.3:
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
            if v > best + 0.4:
                best, choice = v, a
        if choice != A.END_TURN or not gov:
            return choice
        gain, cell = self._best_governor(st, gov)
        last_chance = st.turns_taken[me] == 2
        if gain > 1.0 or (last_chance and gain >= 0.0):
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
        if st.decision == S.D_KEEP_SETUP:
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
        bid = int(min(worth / (2.0 * vj), jade // 3, 5))
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
