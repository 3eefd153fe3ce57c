"""The public event log (``engine.events``) in a board-game player's words.

``Narrator`` reads the log in order and says every score with its reason, income, Workers lost,
the petition's bids and tie-break (the engine's ``petition_order``), a lost Governor block, the
end of each round, the final score with its breakdown (``score_breakdown``). ``last_lines`` tells
the last events of a log; ``final_score_lines`` is the final score as a table.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from enum import Enum
from typing import TYPE_CHECKING

from island_fortress_env.engine import actions as A
from island_fortress_env.engine import events as ev
from island_fortress_env.engine import tables
from island_fortress_env.engine.favors import FavorCard
from island_fortress_env.engine.phases.petition import TieBreak, petition_order
from island_fortress_env.engine.wall import LEVELS
from island_fortress_env.views.narrate_words import (
    MARKS,
    ROLE_NAMES,
    and_list,
    card_text,
    cell_label,
    plural,
    price,
    seat_name,
)

if TYPE_CHECKING:
    from island_fortress_env.engine import State

__all__ = [
    "BREAKDOWN_LABELS",
    "Line",
    "Narrator",
    "Tone",
    "final_score_lines",
    "last_lines",
    "score_breakdown",
    "score_reason_words",
]


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
    ev.ScoreReason.TOWER: f"for a block on level {LEVELS}",
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
    ev.ScoreReason.TOWER: f"level-{LEVELS} blocks",
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
        parts = []
        for p, (bid, total) in enumerate(zip(event.bids, event.totals, strict=True)):
            extra = f" + {total - bid} favor bonus = {total}" if total != bid else ""
            parts.append(f"{MARKS[p]} {bid}{extra}")
        text = f"Bids revealed: {', '.join(parts)}. "
        order = petition_order(event.bids, event.totals, self.holder)  # the engine's tie-break
        winner = self.who(event.winner)
        tied = f"{and_list([MARKS[p] for p in order.tied])} tie at {order.best}"
        if order.tie_break is TieBreak.NONE:
            text += f"{winner} wins the petition."
        elif order.tie_break is TieBreak.MORE_JADE:
            text += f"{tied}; {winner} wins with more Jade bid."
        elif order.tie_break is TieBreak.RANDOM:
            text += f"{tied} with equal Jade: in the first round the tie is drawn at random; {winner} wins."
        else:
            text += (
                f"{tied} with equal Jade: the Governor marker moves clockwise from "
                f"{MARKS[self.holder]}; {winner} wins."
            )
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
            built = f"{who} builds {plural(event.blocks, 'block')}"
            if event.blocks > 1:
                second = (
                    f"paying {plural(event.cost, 'Jade')} for the second" if event.cost else "the second free"
                )
                return f"{built}, {second}.", Tone.PLAIN
            return f"{built}.", Tone.PLAIN
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
                f"{who} sends {plural(tables.TREASURE_CONVICTS, 'Convict')} to the prisons of regions "
                f"{event.prison_a + 1} and {event.prison_b + 1} and collects a Treasure.",
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
