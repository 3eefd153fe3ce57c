"""What happened and what can be chosen, in the words a board-game player uses.

Three things, each from typed records, never from parsed text:

* ``Narrator`` turns the public event log (``engine.events``) into sentences: every score with
  its reason, income, Workers lost, the petition's bids and tie-break, a lost Governor block,
  the end of each round, the final score with its breakdown (``score_breakdown``).
* ``describe_choice`` turns a legal action into a ``Choice``: its words, what it costs
  ("Collect 6 Convicts: costs 2 Laborers") and the thing on the table it is chosen by (a wall
  cell, a role card, a favor card, a bid amount, a region, a pair of prisons...).
  ``refusals`` says why the role actions of the cards in hand that cannot be taken now are
  refused. ``public_move_text`` is what the other seats may learn of a move.
* ``rules_summary`` is the rules and the role cards in a page, with the numbers of the rules
  tables.

Standard library and the engine only, so the terminal tools can use it as well as the browser.
Seats are named by a mark (A-D) and the name given for the seat: "A (you)", "B (heuristic)".
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from enum import Enum
from typing import TYPE_CHECKING

from island_fortress_env.engine import actions as A
from island_fortress_env.engine import events as ev
from island_fortress_env.engine import tables, visibility
from island_fortress_env.engine.decisions import Decision
from island_fortress_env.engine.favors import FavorCard
from island_fortress_env.engine.wall import COLUMNS_PER_REGION, STRIDE

if TYPE_CHECKING:
    from island_fortress_env.engine import State

MARKS = "ABCD"
ROLE_NAMES = A.ROLE_NAMES
REWARD_WORDS = {
    "income": "income",
    "petition": "petition bonus",
    "jade": "Jade",
    "vp": "VP",
    "treasure": "Treasure",
    "buyback_chips": "Buyback Chip",
    "convicts": "Convict",
    "laborers": "Laborer",
    "wall_blocks": "Wall Block",
}


def seat_name(names: Sequence[str], seat: int) -> str:
    """ "A (you)", "B (heuristic)"; just the mark when no name is known."""
    if 0 <= seat < len(names) and names[seat]:
        return f"{MARKS[seat]} ({names[seat]})"
    return MARKS[seat] if 0 <= seat < len(MARKS) else f"seat {seat}"


def plural(count: int, word: str) -> str:
    """ "1 Convict", "3 Convicts", "1 Jade", "2 Treasure"."""
    if count == 1 or word in ("Jade", "Treasure", "VP"):
        return f"{count} {word}"
    return f"{count} {word}s"


def price(jade: int) -> str:
    """ "for 2 Jade"; "for free" when it costs nothing (a purchase of one)."""
    return f"for {plural(jade, 'Jade')}" if jade else "for free"


def and_list(names: list[str]) -> str:
    """ "A", "A and B", "A, B and C"."""
    return names[0] if len(names) == 1 else f"{', '.join(names[:-1])} and {names[-1]}"


def cell_label(cell: int) -> str:
    """A wall cell's coordinates as drawn on the board: region, level (1-4), column (1-5)."""
    region, k = divmod(cell, 17)
    if k < 15:
        level, column = divmod(k, COLUMNS_PER_REGION)
    else:
        level, column = 3, 0 if k == 15 else COLUMNS_PER_REGION - 1
    return f"R{region + 1}-L{level + 1}-C{column + 1}"


def cell_level(cell: int) -> int:
    """0-based level of a public cell index (the towers are level 3)."""
    k = cell % 17
    return k // COLUMNS_PER_REGION if k < 15 else 3


def card_rewards(card: FavorCard) -> str:
    parts = []
    for key, amount in card.rewards.items():
        if not amount:
            continue
        word = REWARD_WORDS.get(key, key)
        if key in ("income", "petition"):
            parts.append(f"+{amount} {word} every round" if key == "income" else f"+{amount} {word}")
        else:
            parts.append(plural(amount, word))
    return ", ".join(parts) or "nothing"


def card_text(card: FavorCard) -> str:
    return f"{card.name} ({card_rewards(card)})"


# --------------------------------------------------------------------------- the event log


class Tone(str, Enum):
    """How a narrated line is shown (the browser styles by it)."""

    PLAIN = "plain"
    ROUND = "round"  # a round starts or ends
    SCORE = "score"
    LOSS = "loss"  # Workers or a Governor block lost, a negative score
    PETITION = "petition"
    END = "end"  # the final scoring and the result


@dataclass(frozen=True)
class Line:
    """One narrated event."""

    text: str
    tone: Tone
    seat: int | None  # whom it is about, when one seat


_SCORE_WORDS = {
    ev.ScoreReason.TOWER: "for a block on level 4",
    ev.ScoreReason.FAVOR_CARD: "from a favor card",
    ev.ScoreReason.COLLECT_TREASURE: "for the Treasure collected",
    ev.ScoreReason.FIRST_ROUND_INCENTIVE: "for the first round incentive's Treasure",
    ev.ScoreReason.BUYBACK_CHIPS: "for the Buyback Chips held",
    ev.ScoreReason.LEAST_BUILT_REGION: "for the blocks in the least-built region",
    ev.ScoreReason.MOST_TREASURE: "for the most Treasure",
    ev.ScoreReason.FEWEST_TREASURE: "for the fewest Treasure",
    ev.ScoreReason.MOST_JADE: "for the most Jade",
    ev.ScoreReason.MOST_WORKERS: "for the most Workers",
}
_AT_END = frozenset({ev.ScoreReason.ROW_AT_END, ev.ScoreReason.LEVEL_AT_END, *ev.END_BONUS_REASONS})
# The short names of the final score's breakdown, in the order of the end scoring.
BREAKDOWN_LABELS = {
    ev.ScoreReason.ROW: "rows",
    ev.ScoreReason.ROW_AT_END: "rows",
    ev.ScoreReason.LEVEL: "level majorities",
    ev.ScoreReason.LEVEL_AT_END: "level majorities",
    ev.ScoreReason.TOWER: "level-4 blocks",
    ev.ScoreReason.FAVOR_CARD: "favor cards",
    ev.ScoreReason.COLLECT_TREASURE: "Treasure collected",
    ev.ScoreReason.FIRST_ROUND_INCENTIVE: "first round incentive",
    ev.ScoreReason.BUYBACK_CHIPS: "Buyback Chips",
    ev.ScoreReason.LEAST_BUILT_REGION: "least-built region",
    ev.ScoreReason.MOST_TREASURE: "most Treasure",
    ev.ScoreReason.FEWEST_TREASURE: "fewest Treasure",
    ev.ScoreReason.MOST_JADE: "most Jade",
    ev.ScoreReason.MOST_WORKERS: "most Workers",
}


def score_reason_words(event: ev.Score) -> str:
    reason = event.reason
    if reason in (ev.ScoreReason.ROW, ev.ScoreReason.ROW_AT_END):
        how = "completed" if reason is ev.ScoreReason.ROW else "unfinished"
        return f"for the majority of the {how} row {event.level + 1} of region {event.region + 1}"
    if reason in (ev.ScoreReason.LEVEL, ev.ScoreReason.LEVEL_AT_END):
        how = "completed" if reason is ev.ScoreReason.LEVEL else "unfinished"
        return f"for the majority of the {how} level {event.level + 1} (a Treasure)"
    return _SCORE_WORDS[reason]


def score_breakdown(events: Iterable[ev.Event], players: int) -> list[dict[str, int]]:
    """Each seat's points so far by where they came from (``BREAKDOWN_LABELS``), in the order
    they were first scored."""
    out: list[dict[str, int]] = [{} for _ in range(players)]
    for event in events:
        if isinstance(event, ev.Score) and 0 <= event.player < players:
            label = BREAKDOWN_LABELS[event.reason]
            out[event.player][label] = out[event.player].get(label, 0) + event.points
    return out


def final_score_lines(state: State, names: Sequence[str]) -> list[str]:
    """The final scores as a table: each seat, its points, "winner", and where the points came
    from ("rows 12 + level-4 blocks 5")."""
    breakdown = score_breakdown(state.log, state.n)
    width = max(len(seat_name(names, p)) for p in range(state.n))
    lines = ["Final scores:"]
    for p in range(state.n):
        won = "winner" if p in state.winners else ""
        parts = " + ".join(f"{label} {pts}" for label, pts in breakdown[p].items() if pts) or "nothing"
        lines.append(f"  {seat_name(names, p):<{width}} {state.score[p]:4d}  {won:<6}  = {parts}")
    return lines


class Narrator:
    """Sentences for the public event log. It reads the log in order and remembers what the
    sentences need (the round, the Governor marker's holder for the petition's tie-break, the
    scores for the final breakdown), so feed it each event once, oldest first."""

    def __init__(self, names: Sequence[str], cards: Sequence[FavorCard]) -> None:
        self.names = tuple(names)
        self.cards = tuple(cards)
        self.round = 0
        self.holder = -1
        self.final_scoring = False
        self.scores: list[dict[str, int]] = [{} for _ in self.names]

    def who(self, seat: int) -> str:
        return seat_name(self.names, seat)

    def lines(self, events: Iterable[ev.Event]) -> list[Line]:
        out: list[Line] = []
        for event in events:
            out.extend(self.event(event))
        return out

    def event(self, event: ev.Event) -> list[Line]:
        """The sentences of one event (some events say nothing, a few say two things)."""
        out = self._words(event)
        self.note(event)
        return out

    def note(self, event: ev.Event) -> None:
        """Remember what later sentences need of ``event`` without saying it (``last_lines``
        reads an old log's start this way)."""
        if isinstance(event, ev.Score):
            if 0 <= event.player < len(self.scores):
                label = BREAKDOWN_LABELS[event.reason]
                mine = self.scores[event.player]
                mine[label] = mine.get(label, 0) + event.points
            if event.reason in _AT_END:
                self.final_scoring = True
        elif isinstance(event, ev.RoundStarted):
            self.round = event.round
        elif isinstance(event, ev.Petition):
            self.holder = event.winner

    def _words(self, event: ev.Event) -> list[Line]:
        if isinstance(event, ev.Score):
            return self._score(event)
        if isinstance(event, ev.RoundStarted):
            return self._round(event)
        if isinstance(event, ev.Petition):
            return [self._petition(event)]
        if isinstance(event, ev.GameOver):
            return self._game_over(event)
        text, tone = self._plain(event)
        seat = getattr(event, "player", None)
        return [Line(text, tone, seat)] if text else []

    def _round(self, event: ev.RoundStarted) -> list[Line]:
        out = []
        if self.round:
            out.append(Line(f"Round {self.round} ends.", Tone.ROUND, None))
        out.append(Line(f"Round {event.round} begins: everyone takes income.", Tone.ROUND, None))
        return out

    def _score(self, event: ev.Score) -> list[Line]:
        out = []
        if event.reason in _AT_END and not self.final_scoring:
            out.append(Line("Final scoring.", Tone.END, None))
        points = f"{event.points:+d} VP"
        tone = Tone.LOSS if event.points < 0 else Tone.SCORE
        out.append(
            Line(f"{self.who(event.player)} scores {points} {score_reason_words(event)}.", tone, event.player)
        )
        return out

    def _petition(self, event: ev.Petition) -> Line:
        n = len(event.bids)
        parts = []
        for p in range(n):
            bonus = event.totals[p] - event.bids[p]
            extra = f" + {bonus} favor bonus = {event.totals[p]}" if bonus else ""
            parts.append(f"{MARKS[p]} {event.bids[p]}{extra}")
        text = f"Bids revealed: {', '.join(parts)}. "
        best = max(event.totals)
        tied = [p for p in range(n) if event.totals[p] == best]
        winner = self.who(event.winner)
        if len(tied) > 1:
            marks = and_list([MARKS[p] for p in tied])
            most = max(event.bids[p] for p in tied)
            still = [p for p in tied if event.bids[p] == most]
            if len(still) == 1:
                text += f"{marks} tie at {best}; {winner} wins with more Jade bid."
            elif self.holder < 0:
                text += (
                    f"{marks} tie at {best} with equal Jade: in the first round the tie is drawn "
                    f"at random; {winner} wins."
                )
            else:
                text += (
                    f"{marks} tie at {best} with equal Jade: the Governor marker moves clockwise from "
                    f"{MARKS[self.holder]}; {winner} wins."
                )
        else:
            text += f"{winner} wins the petition."
        paid = event.bids[event.winner]
        text += f" {winner} pays {plural(paid, 'Jade')}, takes the Governor marker and plays first."
        return Line(text, Tone.PETITION, event.winner)

    def _game_over(self, event: ev.GameOver) -> list[Line]:
        scores = ", ".join(f"{MARKS[p]} {s}" for p, s in enumerate(event.scores))
        won = and_list([self.who(w) for w in event.winners])
        verb = "win (tied)" if len(event.winners) > 1 else "wins"
        out = [Line(f"Game over. Final scores: {scores}. {won} {verb}.", Tone.END, None)]
        for p, total in enumerate(event.scores):
            mine = self.scores[p] if p < len(self.scores) else {}
            parts = " + ".join(f"{label} {pts}" for label, pts in mine.items() if pts)
            out.append(Line(f"{self.who(p)}: {total} VP = {parts or 'nothing'}.", Tone.END, p))
        return out

    def _plain(self, event: ev.Event) -> tuple[str, Tone]:
        who = self.who(getattr(event, "player", -1)) if hasattr(event, "player") else ""
        if isinstance(event, ev.Setup):
            return f"A new game: {event.players} players, a wall of {event.regions} regions.", Tone.ROUND
        if isinstance(event, ev.Income):
            return f"{who} takes {plural(event.jade, 'Jade')} of income.", Tone.PLAIN
        if isinstance(event, ev.Kept):
            return f"{who} keeps {plural(event.cards, 'favor card')}.", Tone.PLAIN
        if isinstance(event, ev.BidPlaced):
            return f"{who} seals a petition bid.", Tone.PLAIN
        if isinstance(event, ev.Incentive):
            gifts = {"wall_block": "a Wall Block", "buyback_chip": "a Buyback Chip", "treasure": "a Treasure"}
            return (
                f"{who} gets the first round incentive: {gifts.get(event.incentive, event.incentive)}.",
                Tone.PLAIN,
            )
        if isinstance(event, ev.Role):
            card = ROLE_NAMES[A.OP_CARD[event.op]]
            action = f"{card} {A.OP_LETTER[event.op]}: {A.OP_NAMES[event.op]}"
            if event.repeat:
                return (
                    f"{who} plays the Taskmaster to repeat {action}, paying {plural(event.cost, 'Jade')}.",
                    Tone.PLAIN,
                )
            return f"{who} plays the {card}: {A.OP_NAMES[event.op]}.", Tone.PLAIN
        if isinstance(event, ev.Recruited):
            return (
                f"{who} recruits {plural(event.laborers, 'Laborer')} {price(event.cost)}.",
                Tone.PLAIN,
            )
        if isinstance(event, ev.Bought):
            return (
                f"{who} buys {plural(event.blocks, 'Wall Block')} {price(event.cost)}.",
                Tone.PLAIN,
            )
        if isinstance(event, ev.Drew):
            return f"{who} draws {event.draw} favor cards to keep {event.keep}.", Tone.PLAIN
        if isinstance(event, ev.ReinforcementRemoved):
            return f"{who} removes the Reinforcement at {cell_label(event.cell)}.", Tone.PLAIN
        if isinstance(event, ev.Build):
            if event.blocks == 2:
                second = (
                    f"paying {plural(event.cost, 'Jade')} for the second" if event.cost else "the second free"
                )
                return f"{who} builds 2 blocks, {second}.", Tone.PLAIN
            return f"{who} builds 1 block.", Tone.PLAIN
        if isinstance(event, ev.Place):
            if event.governor:
                return f"{who} places a Governor block at {cell_label(event.cell)}.", Tone.PLAIN
            return f"{who} puts a block at {cell_label(event.cell)}.", Tone.PLAIN
        if isinstance(event, ev.RowComplete):
            return (
                f"{who} completes row {event.level + 1} of region {event.region + 1} "
                "and gains a Buyback Chip.",
                Tone.PLAIN,
            )
        if isinstance(event, ev.Workers):
            used = f"{plural(event.laborers, 'Laborer')} and {plural(event.convicts, 'Convict')}"
            lost = event.dead_laborers + event.convicts
            if not lost:
                return f"{who} builds with {used}; no Worker is lost.", Tone.PLAIN
            return (
                f"{who} builds with {used} and loses {plural(lost, 'Worker')}: "
                f"{plural(event.dead_laborers, 'Laborer')} and {plural(event.convicts, 'Convict')}.",
                Tone.LOSS,
            )
        if isinstance(event, ev.FavorPlayed):
            favor = self.cards[event.card] if 0 <= event.card < len(self.cards) else None
            name = card_text(favor) if favor else f"favor card #{event.card}"
            return f"{who} plays the favor card {name}.", Tone.PLAIN
        if isinstance(event, ev.Reinforced):
            return f"{who} reinforces the block at {cell_label(event.cell)}.", Tone.PLAIN
        if isinstance(event, ev.Replaced):
            victim = self.who(event.victim)
            return (
                f"{who} replaces {victim}'s block at {cell_label(event.cell)}; "
                f"it goes back to {MARKS[event.victim]}'s supply.",
                Tone.PLAIN,
            )
        if isinstance(event, ev.TreasureCollected):
            return (
                f"{who} sends 2 Convicts to the prisons of regions {event.prison_a + 1} and "
                f"{event.prison_b + 1} and collects a Treasure.",
                Tone.PLAIN,
            )
        if isinstance(event, ev.PrisonCollected):
            return (
                f"{who} empties the prison of region {event.region + 1}: "
                f"{plural(event.jade, 'Jade')} and {plural(event.convicts, 'Convict')}.",
                Tone.PLAIN,
            )
        if isinstance(event, ev.JadeCollected):
            return f"{who} collects {plural(event.jade, 'Jade')}.", Tone.PLAIN
        if isinstance(event, ev.Moved):
            return f"{who} moves the Taskmaster to region {event.region + 1}.", Tone.PLAIN
        if isinstance(event, ev.Buyback):
            card = ROLE_NAMES[event.card]
            how = "with a Buyback Chip" if event.chip else f"for {tables.TASKMASTER_BUYBACK_COST} Jade"
            return f"{who} buys back the {card} {how} and acts again.", Tone.PLAIN
        if isinstance(event, ev.Traded):
            what = "1 Jade" if event.reward is ev.TradeReward.JADE else "1 Convict"
            return f"{who} trades in a favor card for {what}.", Tone.PLAIN
        if isinstance(event, ev.GovernorLost):
            return f"{who} did not place the Governor block in time: it goes back to the box.", Tone.LOSS
        if isinstance(event, ev.WallComplete):
            return (
                f"{who} completes the wall and takes every prison: "
                f"{plural(event.jade, 'Jade')} and {plural(event.convicts, 'Convict')}.",
                Tone.END,
            )
        if isinstance(event, ev.Pass):
            return f"{who} passes.", Tone.PLAIN
        raise AssertionError(f"no words for {event!r}")  # every EventKind is handled above


def last_lines(
    log: Sequence[ev.Event], names: Sequence[str], cards: Sequence[FavorCard], count: int
) -> list[Line]:
    """The sentences of the last ``count`` events of ``log``; the events before them are read
    for what those sentences need (the round, the Governor marker, the scores), not said."""
    narrator = Narrator(names, cards)
    start = max(len(log) - count, 0)
    for event in log[:start]:
        narrator.note(event)
    return narrator.lines(log[start:])


# --------------------------------------------------------------------------- choices


class TargetKind(str, Enum):
    """What on the table a choice is made by."""

    CELL = "cell"  # a wall cell: build, replace, remove or reinforce
    GOVERNOR = "governor"  # a wall cell for the Governor block
    ROLE = "role"  # a role card's action (value: the action, ``actions.OP_*``)
    REPEAT = "repeat"  # Taskmaster B: repeat this action of a card on the table
    FAVOR = "favor"  # a favor card (value: its index in the deck): keep or play
    BID = "bid"  # the petition bid (value: the amount)
    REGION = "region"  # Move the Taskmaster to this region
    PRISONS = "prisons"  # Collect a Treasure: this pair of prisons (value, other)
    OPTION = "option"  # a count or a yes/no: shown as a button


@dataclass(frozen=True)
class Choice:
    """A legal action as the player sees it."""

    action: int
    label: str  # "Recruit 3 Laborers"
    cost: str  # "costs 2 Jade"; "" when free
    kind: TargetKind
    value: int = -1
    other: int = -1  # the second prison of a pair


def _op_cost(state: State, player: int, op: int) -> str:
    """What a role action costs or gives, as far as it is known when the card is played."""
    costs = "/".join(str(c) for c in tables.PURCHASE_COST[1:])
    region = state.region[player] + 1
    prison = f"; a Convict from the supply goes to the prison of region {region}"
    if op == A.OP_RECRUIT:
        return f"then 1-{tables.MAX_PURCHASE} Laborers for {costs} Jade{prison}"
    if op == A.OP_COLLECT_CONVICTS:
        return f"costs {tables.LABORERS_FOR_CONVICTS} Laborers"
    if op == A.OP_COLLECT_PRISON:
        r = state.region[player]
        return (
            f"free: takes {plural(state.prison_jade[r], 'Jade')} and "
            f"{plural(state.prison_convicts[r], 'Convict')} from the prison of region {region}"
        )
    if op == A.OP_BUY_BLOCKS:
        return f"then 1-{tables.MAX_PURCHASE} Wall Blocks for {costs} Jade{prison}"
    if op == A.OP_DRAW_FAVORS:
        return "free: " + ", or ".join(f"draw {d} keep {k}" for d, k in tables.FAVOR_DRAW_OPTIONS)
    if op == A.OP_REMOVE_REINFORCEMENT:
        return f"free: a Reinforcement in region {region}"
    if op == A.OP_BUILD:
        workers = "/".join(str(w) for w in tables.WORKERS_PER_LEVEL)
        return (
            f"Workers {workers} by level (all Convicts and half the Laborers used die); "
            f"a second block costs {tables.DOUBLE_BUILD_COST} Jade{prison}"
        )
    if op == A.OP_PLAY_FAVOR:
        return "free: reinforce a block of the pattern and take the card's rewards"
    if op == A.OP_REPLACE:
        return f"{tables.REPLACE_MULTIPLIER}x the Workers of the block's level, in region {region}"
    if op == A.OP_COLLECT_JADE:
        got = tables.COLLECT_JADE + state.treasure[player] // tables.TREASURE_PER_EXTRA_JADE
        return f"free: gains {plural(got, 'Jade')}"
    if op == A.OP_COLLECT_TREASURE:
        return f"costs {tables.TREASURE_CONVICTS} Convicts (to two prisons); gains a Treasure (1 VP)"
    return "free"


def describe_choice(state: State, action: int) -> Choice:
    """A legal action of the player to move, with its cost and the thing it is chosen by."""
    fam = A.family_of(action)
    i = action - fam.start
    p = state.current_player()
    name = fam.name
    decision = state.decision
    if name == "role":
        return Choice(action, f"{A.OP_NAMES[i]}", _op_cost(state, p, i), TargetKind.ROLE, i)
    if name == "repeat":
        cost = tables.REPEAT_ROLE_COST[A.ROLE_KEYS[A.OP_CARD[i]]]
        label = f"Repeat {A.op_label(i)}"
        return Choice(action, label, f"costs {cost} Jade; {_op_cost(state, p, i)}", TargetKind.REPEAT, i)
    if name in ("recruit", "buy_blocks"):
        what = "Laborer" if name == "recruit" else "Wall Block"
        verb = "Recruit" if name == "recruit" else "Buy"
        cost = tables.PURCHASE_COST[i + 1]
        return Choice(
            action,
            f"{verb} {plural(i + 1, what)}",
            f"costs {cost} Jade" if cost else "free",
            TargetKind.OPTION,
            i + 1,
        )
    if name == "draw":
        draw, keep = tables.FAVOR_DRAW_OPTIONS[i]
        return Choice(action, f"Draw {draw} favor cards, keep {keep}", "", TargetKind.OPTION, draw)
    if name == "build_count":
        if i == 0:
            return Choice(action, "Build 1 block", "", TargetKind.OPTION, 1)
        return Choice(
            action, "Build 2 blocks", f"costs {tables.DOUBLE_BUILD_COST} Jade", TargetKind.OPTION, 2
        )
    if name == "cell":
        where = cell_label(i)
        workers = tables.WORKERS_PER_LEVEL[cell_level(i)]
        if decision == Decision.BUILD_CELL:
            return Choice(action, f"Build at {where}", f"needs {workers} Workers", TargetKind.CELL, i)
        if decision == Decision.REPLACE_CELL:
            need = tables.REPLACE_MULTIPLIER * workers
            owner = state.owner_at(state.geo.cell_bits[i])
            whose = f"{MARKS[owner]}'s block" if owner is not None and owner >= 0 else "the block"
            return Choice(action, f"Replace {whose} at {where}", f"needs {need} Workers", TargetKind.CELL, i)
        if decision == Decision.REINFORCE_CELL:
            return Choice(action, f"Reinforce the block at {where}", "", TargetKind.CELL, i)
        return Choice(action, f"Remove the Reinforcement at {where}", "", TargetKind.CELL, i)
    if name == "governor":
        return Choice(action, f"Governor block at {cell_label(i)}", "free", TargetKind.GOVERNOR, i)
    if name == "laborers":
        convicts = max(state.worker_need - i, 0)
        dead = (i + 1) // 2
        label = f"{plural(i, 'Laborer')} and {plural(convicts, 'Convict')}"
        return Choice(
            action,
            label,
            f"loses {plural(dead, 'Laborer')} and {plural(convicts, 'Convict')}",
            TargetKind.OPTION,
            i,
        )
    if name == "move":
        return Choice(action, f"Move the Taskmaster to region {i + 1}", "free", TargetKind.REGION, i)
    if name == "prisons":
        a, b = A.PRISON_PAIRS[i]
        label = f"Convicts to the prisons of regions {a + 1} and {b + 1}"
        return Choice(action, label, f"costs {tables.TREASURE_CONVICTS} Convicts", TargetKind.PRISONS, a, b)
    if name in ("keep_favor", "play_favor"):
        deck = state.game.deck.cards
        text = card_text(deck[i]) if i < len(deck) else f"#{i}"
        verb = "Keep" if name == "keep_favor" else "Play"
        return Choice(action, f"{verb} {text}", "", TargetKind.FAVOR, i)
    if name == "bid":
        if (
            decision == Decision.PETITION_BID
            and not state.bid_digits_left
            and not visibility.own_bid(state, p)
        ):
            price = f"costs {plural(i, 'Jade')} if it wins" if i else "free"
            return Choice(action, f"Bid {plural(i, 'Jade')}", price, TargetKind.BID, i)
        return Choice(action, state.action_to_string(action).capitalize(), "", TargetKind.OPTION, i)
    if name == "end_turn":
        return Choice(action, "End the turn", "", TargetKind.OPTION, 0)
    if name == "buyback_taskmaster":
        label = "Buy back the Taskmaster and act again"
        return Choice(action, label, f"costs {tables.TASKMASTER_BUYBACK_COST} Jade", TargetKind.OPTION, 1)
    if name == "buyback_chip":
        card = ROLE_NAMES[_last_card(state, p)]
        return Choice(
            action, f"Buy back the {card} and act again", "costs a Buyback Chip", TargetKind.OPTION, 2
        )
    if name == "trade_jade":
        return Choice(action, "Trade in a favor card for 1 Jade", "costs a favor card", TargetKind.OPTION, 0)
    if name == "trade_convict":
        return Choice(
            action, "Trade in a favor card for 1 Convict", "costs a favor card", TargetKind.OPTION, 1
        )
    if name == "trade_done":
        return Choice(action, "Stop trading", "", TargetKind.OPTION, 2)
    return Choice(action, "Pass", "", TargetKind.OPTION, 0)


def _last_card(state: State, player: int) -> int:
    """The role card ``player`` played last (from the public log)."""
    for event in reversed(state.log):
        if isinstance(event, ev.Role) and event.player == player:
            return A.TASKMASTER if event.repeat else A.OP_CARD[event.op]
    raise ValueError(f"player {player} has played no role card")


def _build_refusal(state: State, p: int) -> str:
    if state.blocks[p] < 1:
        return "no Wall Block in your supply (the Planner buys them)"
    geo = state.geo
    region = state.region[p]
    cells = geo.buildable(state.occ) & geo.region_mask[region]
    if not cells:
        return f"no empty cell with support below in region {region + 1}, where your Taskmaster is"
    cheapest = tables.WORKERS_PER_LEVEL[((cells & -cells).bit_length() - 1) // STRIDE]
    return (
        f"the cheapest cell in region {region + 1} needs {cheapest} Workers; you have "
        f"{plural(state.laborers[p], 'Laborer')} and {plural(state.convicts[p], 'Convict')}"
    )


def _replace_refusal(state: State, p: int) -> str:
    if state.game.config.no_replace:
        return "the Friendly variant leaves this action out"
    if state.blocks[p] < 1:
        return "no Wall Block in your supply (the Planner buys them)"
    region = state.region[p]
    return (
        f"no other player's unreinforced block in region {region + 1} that your "
        f"{state.laborers[p] + state.convicts[p]} Workers can replace "
        f"({tables.REPLACE_MULTIPLIER}x the level's Workers)"
    )


def _why_not(state: State, p: int, op: int) -> str:
    region = state.region[p] + 1
    if op == A.OP_RECRUIT:
        return "no Laborer left in the supply"
    if op == A.OP_COLLECT_CONVICTS:
        return f"needs {tables.LABORERS_FOR_CONVICTS} Laborers; you have {state.laborers[p]}"
    if op == A.OP_BUY_BLOCKS:
        return "no Wall Block left in your stockpile"
    if op == A.OP_DRAW_FAVORS:
        smallest = min(d for d, _ in tables.FAVOR_DRAW_OPTIONS)
        return f"needs {smallest} cards in the favor deck; it has {len(state.deck)}"
    if op == A.OP_REMOVE_REINFORCEMENT:
        return f"no Reinforcement in region {region}, where your Taskmaster is"
    if op == A.OP_BUILD:
        return _build_refusal(state, p)
    if op == A.OP_PLAY_FAVOR:
        if not state.favor_hand[p]:
            return "no favor card in your hand"
        return "no favor card in your hand has its pattern complete in your unreinforced blocks"
    if op == A.OP_REPLACE:
        return _replace_refusal(state, p)
    if op == A.OP_COLLECT_TREASURE:
        return f"needs {tables.TREASURE_CONVICTS} Convicts; you have {state.convicts[p]}"
    return "not possible now"


@dataclass(frozen=True)
class Refusal:
    """A role action shown but not offered, and why."""

    kind: TargetKind  # ROLE or REPEAT
    op: int
    label: str
    reason: str


def refusals(state: State) -> list[Refusal]:
    """Why the role actions of the cards in the mover's hand (and Taskmaster B's repeats) that
    are not legal now are refused. Empty outside the role choice."""
    if state.is_terminal() or state.decision != Decision.CHOOSE_ROLE_ACTION:
        return []
    p = state.current_player()
    legal = set(state.legal_actions())
    hand = state.roles_hand[p]
    out = []
    for op in range(A.NUM_OPS):
        if hand >> A.OP_CARD[op] & 1 and A.ROLE + op not in legal:
            out.append(Refusal(TargetKind.ROLE, op, A.OP_NAMES[op], _why_not(state, p, op)))
    if hand >> A.TASKMASTER & 1:
        table = state.roles_table[p]
        for op in range(A.NUM_REPEATABLE):
            if table >> A.OP_CARD[op] & 1 and A.REPEAT + op not in legal:
                cost = tables.REPEAT_ROLE_COST[A.ROLE_KEYS[A.OP_CARD[op]]]
                if state.jade[p] < cost:
                    reason = f"the repeat costs {cost} Jade; you have {state.jade[p]}"
                else:
                    reason = _why_not(state, p, op)
                out.append(Refusal(TargetKind.REPEAT, op, f"Repeat {A.op_label(op)}", reason))
    return out


# What the other seats learn of a move: the card kept and the sealed bid stay hidden.
_HIDDEN_FAMILIES = {A.KEEP_FAVOR: "keeps a favor card", A.BID: "seals a petition bid"}


def is_hidden_move(action: int) -> bool:
    """Whether the other seats may not learn which action this is (a kept card, a bid)."""
    return A.family_of(action).start in _HIDDEN_FAMILIES


def public_move_text(state: State, action: int) -> str:
    """``action`` (of the player to move in ``state``) as the other seats may learn of it."""
    hidden = _HIDDEN_FAMILIES.get(A.family_of(action).start)
    if hidden is not None:
        return hidden
    return describe_choice(state, action).label


def pending_text(state: State, names: Sequence[str]) -> str:
    """What the player to move is in the middle of: the role action started this turn and the
    steps taken so far (from the public log), then the decision asked now."""
    if state.is_terminal():
        return "The game is over."
    p = state.current_player()
    asked = Decision(state.decision).label
    if not state.in_action or state.op < 0:
        return f"{seat_name(names, p)}: {asked}."
    log = state.log
    start = max(i for i, e in enumerate(log) if isinstance(e, ev.Role) and e.player == p)
    steps = []
    role = log[start]
    assert isinstance(role, ev.Role)
    for event in log[start + 1 :]:
        if isinstance(event, ev.Build):
            steps.append(f"{event.blocks} block{'s' if event.blocks > 1 else ''}")
        elif isinstance(event, ev.Place) and not event.governor:
            steps.append(f"block at {cell_label(event.cell)}")
        elif isinstance(event, ev.Replaced):
            steps.append(f"replaced {cell_label(event.cell)}")
        elif isinstance(event, ev.FavorPlayed):
            steps.append(f"card {state.game.deck.cards[event.card].name}")
        elif isinstance(event, ev.Drew):
            steps.append(f"drew {event.draw}")
    done = f" ({', '.join(steps)})" if steps else ""
    card = ROLE_NAMES[A.OP_CARD[role.op]]
    return f"{seat_name(names, p)}: {card} {A.OP_LETTER[role.op]}, {A.OP_NAMES[role.op]}{done}; now: {asked}."
