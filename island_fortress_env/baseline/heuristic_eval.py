"""The heuristic player's evaluation: a position's estimated worth for the seat deciding.

``HeuristicEvaluation`` holds the weights (from ``engine/data/heuristic_weights.json``, which
the C++ twin's header is generated from) and the evaluation ``HeuristicAgent``
(``baseline/heuristic.py``) looks ahead with: points already scored, provisional row and level
majorities, end-game bonuses, resources fading as the game runs out, favor bonuses and cards.
It reads only what the deciding seat may see (see ``baseline/heuristic.py``).
"""

from __future__ import annotations

from typing import Any

from island_fortress_env.engine import state as S
from island_fortress_env.engine import tables
from island_fortress_env.engine.decisions import Decision
from island_fortress_env.engine.wall import iter_bits

_W = tables.data_file("heuristic_weights.json")  # the weights, shared with the C++ twin
_BIG = 1e9


# Weight of a provisional row/level majority, by (own count - best other count).
_LEAD_WEIGHT = {0: _W["lead_tied"], -1: _W["lead_behind_one"]}


def _lead_weight(lead: int, empty: int) -> float:
    if lead > empty:
        return 1.0
    if lead > 0:
        return 0.8 + 0.1 * min(lead, 2)
    return _LEAD_WEIGHT.get(lead, _W["lead_behind"])


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
        ] + [(mask, _W["level_majority"], mask.bit_count()) for mask in geo.level_mask]
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


class HeuristicEvaluation:
    """The evaluation and its weights (subclass ``HeuristicAgent`` to tune them)."""

    # Evaluation weights (points), from engine/data/heuristic_weights.json. Resources fade over
    # the last rounds ("fr" goes 1 -> 0).
    JADE_BASE = _W["jade_base"]  # a Jade: always worth the base, more while time is left ...
    JADE_FADING = _W["jade_fading"]
    BLOCK = _W["block"]  # a Wall Block in supply (the first BLOCK_CAP of them; the rest a quarter)
    BLOCK_CAP = _W["block_cap"]
    LABORER = _W["laborer"]  # a Laborer is used about twice (half survive each build) ...
    CONVICT = _W["convict"]  # ... a Convict once
    INCOME = _W["income"]  # per round left, per point of favor income
    PETITION = _W["petition"]  # per round left, per point of favor petition
    OPP_FAVOR = _W["opp_favor"]  # an opponent's unseen favor card
    FAVOR_DONE = _W["favor_done"]  # share of a completed favor card's reward while still in hand
    FAVOR_PROGRESS = _W["favor_progress"]  # incomplete card: share * STEP ** missing blocks
    FAVOR_STEP = _W["favor_step"]
    MOVE = _W["move"]  # share of a region's building opportunity credited to a Taskmaster move
    REL_MAX = _W["rel_max"]  # value: own - REL_MAX * best opponent - (1 - REL_MAX) * mean opponent
    TREASURE_REWARD = _W["treasure_reward"]  # a Treasure a favor card gives
    BUYBACK_CHIP_REWARD = _W["buyback_chip_reward"]  # a Buyback Chip a favor card gives
    GOVERNOR_MARGIN = _W["governor_margin"]  # a Governor block before the action must gain this
    BUYBACK_MARGIN = _W["buyback_margin"]  # a buyback's second action must gain this
    GOVERNOR_GAIN = _W["governor_gain"]  # a Governor block at the turn's end must gain this
    BID_CAP = _W["bid_cap"]  # the largest bid
    _me: int  # the seat deciding
    _g: _GameInfo  # its game's constants and caches

    # ------------------------------------------------------------------ evaluation

    def _remaining_rounds(self, st: Any) -> float:
        if st.decision in S.ACTION_PHASE_DECISIONS:
            return st.gov_stock + (3 - st.turns_taken[self._me]) / 3.0
        if st.decision == Decision.GAME_OVER or st.decision == Decision.FAVOR_TRADE_IN:
            return 0.0
        return float(st.gov_stock + (1 if st.decision == Decision.PETITION_BID else 0))

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
        if st.decision == Decision.GAME_OVER:
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
        if st.decision != Decision.GAME_OVER:
            vals[me] += self._hand_value(st)
        others = [vals[q] for q in range(st.n) if q != me]
        return vals[me] - self.REL_MAX * max(others) - (1.0 - self.REL_MAX) * sum(others) / len(others)

    def _reward_value(self, card: Any, rem: float) -> float:
        r = card.rewards
        fr = min(1.0, rem / 3.0)
        return (
            r["vp"]
            + self.TREASURE_REWARD * r["treasure"]
            + self.BUYBACK_CHIP_REWARD * r["buyback_chips"]
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
