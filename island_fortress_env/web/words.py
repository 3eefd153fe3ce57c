"""The table's own words, beside ``views.narrate`` (which tells events and choices): what the
browser adds for a player at the table.

* ``seat_names``: one name per seat, the same on the play page, in a replay and in the records
  list: "you" for the person, a named bot level by its name ("Strong bot", ``web.levels``), any
  other agent by its spec's short label (``policy-2-4p``). ``seat_label`` is the label alone.
* ``score_change``: a typed ``Score`` event as JSON (the seat, the points, the reason's category
  and its words), for the recap and the end screen; the reason is the event's ``ScoreReason``,
  never parsed text.
* ``prison_lines``: what the prisons received from the supply with a move (the petition's Jade
  and Convict, the Convict of Recruiter A, Planner A and Builder A), which has no event of its own:
  read from the public prison counts before and after, the cause from the move's typed events.
* ``consequences``: the choices of the seat to move that lose something or end the game, and
  what, found by playing each on a copy of the position in which everything the seat cannot see
  is dealt again (``engine.visibility.redeal_unseen``), so the answer uses nothing hidden.
  A choice that gains nothing (Collect from Prison at an empty prison) is one of them.
* ``decision_notes``: the sentences the action bar shows beside a decision: what winning the
  petition gives and that only the winner pays, why "Build 2 blocks" is not offered, what holding
  the Governor block means; ``forced_note`` the same for a one-choice move applied without asking.
  The rules are the engine's (``petition_prize``, ``double_build_refusal``), only worded here.
* ``stage_words`` and ``handover_words``: where a seat stands in the round (the deal, the
  petition, turn 2 of 3), and what the person is asked to confirm before the other seats move.
"""

from __future__ import annotations

from collections.abc import Sequence
from functools import cache
from typing import TYPE_CHECKING, Any

from island_fortress_env.engine import actions as A
from island_fortress_env.engine import events as ev
from island_fortress_env.engine import tables
from island_fortress_env.engine.decisions import Decision
from island_fortress_env.engine.phases.petition import petition_prize
from island_fortress_env.engine.refusals import Reason, double_build_refusal
from island_fortress_env.engine.visibility import redeal_unseen
from island_fortress_env.players import parse_agent_spec
from island_fortress_env.players.specs import AgentSpecError
from island_fortress_env.views import narrate

if TYPE_CHECKING:
    from island_fortress_env.engine import State

HUMAN = "human"  # the person's seat in a record's agent names, as `island-fortress play` writes it
YOU = "you"
# Decisions whose choices can neither end the game nor lose the Governor block: not played out.
_NEVER_LOSES = frozenset({Decision.KEEP_DEALT_FAVORS, Decision.PETITION_BID})
_REDEAL_SEED = 0x5EA7ED  # the warnings' copy of the position: any seed, none is told
_FORCED_FOLLOWED = 16  # the seat's own one-choice moves played after a choice, at most


def seat_label(spec: str) -> str:
    """A seat's display name: "you" for the person, else the agent spec's short label."""
    if spec == HUMAN:
        return YOU
    try:
        return parse_agent_spec(spec).label
    except AgentSpecError:  # a record may name an agent this build does not know
        return spec


@cache
def _level_names() -> dict[str, str]:
    """Agent label -> its bot level's name ("Strong"), for the levels of ``web.levels``."""
    from island_fortress_env.web.levels import named_levels

    return {parse_agent_spec(level.spec).label: level.name for level in named_levels()}


def display_name(spec: str) -> str:
    """A seat's name at the table: "you", "Casual bot" for a named level, else its label."""
    label = seat_label(spec)
    level = _level_names().get(label) if spec != HUMAN else None
    return f"{level} bot" if level else label


def seat_names(specs: Sequence[str]) -> tuple[str, ...]:
    return tuple(display_name(s) for s in specs)


# --------------------------------------------------------------------------- scores


def score_change(event: ev.Score) -> dict[str, Any]:
    """A score event for the browser: whose, how many points, the category of the end screen's
    table (``narrate.BREAKDOWN_LABELS``) and the reason in words."""
    return {
        "seat": event.player,
        "points": event.points,
        "reason": event.reason.value,
        "category": narrate.BREAKDOWN_LABELS[event.reason],
        "why": narrate.score_reason_words(event),
    }


# --------------------------------------------------------------------------- prisons

_CONVICT_TO_PRISON = {A.OP_RECRUIT: "Recruiter A", A.OP_BUY_BLOCKS: "Planner A", A.OP_BUILD: "Builder A"}

Prisons = tuple[tuple[int, int], ...]  # (Jade, Convicts) of each region's prison


def prisons_of(state: State) -> Prisons:
    return tuple(zip(state.prison_jade, state.prison_convicts, strict=True))


def _amounts(jade: int, convicts: int) -> str:
    parts = [narrate.plural(jade, "Jade")] if jade else []
    if convicts:
        parts.append(narrate.plural(convicts, "Convict"))
    return " and ".join(parts)


def prison_lines(before: Prisons, after: Prisons, events: Sequence[ev.Event]) -> list[narrate.Line]:
    """What went into the prisons with one move, said once per prison (see the module doc).
    Prisons emptied (Collect from Prison, the completed wall) and the Convicts of Collect a
    Treasure are told by their own events, so only the supply's gifts are said here."""
    petition = next((e for e in events if isinstance(e, ev.Petition)), None)
    role = next((e for e in events if isinstance(e, ev.Role) and e.op in _CONVICT_TO_PRISON), None)
    if petition is None and role is None:
        return []
    out = []
    for region, ((jade0, convicts0), (jade1, convicts1)) in enumerate(zip(before, after, strict=True)):
        jade, convicts = jade1 - jade0, convicts1 - convicts0
        if jade <= 0 and convicts <= 0:
            continue
        gift = _amounts(max(jade, 0), max(convicts, 0))
        now = f"it holds {_amounts(jade1, convicts1) or 'nothing'} now"
        if petition is not None:
            text = (
                f"After the petition, {gift} from the supply go to the prison of region "
                f"{region + 1}, where the winner's Taskmaster is; {now}."
            )
        else:
            assert role is not None
            verb = "goes" if gift == "1 Convict" else "go"
            text = (
                f"{gift[:1].upper()}{gift[1:]} from the supply {verb} to the prison of region {region + 1} "
                f"({_CONVICT_TO_PRISON[role.op]}); {now}."
            )
        out.append(narrate.Line(text, narrate.Tone.PLAIN, None))
    return out


# --------------------------------------------------------------------------- consequences


def _ends(before: State, after: State) -> bool:
    if after.is_terminal():
        return True
    return after.decision == Decision.FAVOR_TRADE_IN and before.decision != Decision.FAVOR_TRADE_IN


def _final_words(state: State, names: Sequence[str]) -> str:
    scores = ", ".join(f"{narrate.MARKS[p]} {s}" for p, s in enumerate(state.score))
    if not state.is_terminal():
        return f"the Favor Trade-in and the final scoring follow (scores now {scores})"
    won = narrate.and_list([narrate.seat_name(names, w) for w in state.winners])
    verb = "win (tied)" if len(state.winners) > 1 else "wins"
    return f"the final scores would be {scores}: {won} {verb}"


def consequences(state: State, seat: int, names: Sequence[str]) -> dict[int, str]:
    """The legal choices of ``seat`` (to move in ``state``) that lose something or end the game,
    each with a sentence saying what (module doc). Each is played on a redeal of what ``seat``
    cannot see, with the seat's own one-choice moves after it."""
    if state.is_terminal() or state.current_player() != seat or state.decision in _NEVER_LOSES:
        return {}
    legal = state.legal_actions()
    base = redeal_unseen(state, seat, _REDEAL_SEED)
    start = len(base.log)
    turn = state.turns_taken[seat] + 1
    out = {}
    for action in legal:
        sim = base.clone()
        sim.apply_action(action)
        for _ in range(_FORCED_FOLLOWED):
            if sim.is_terminal() or sim.current_player() != seat or len(sim.legal_actions()) != 1:
                break
            sim.apply_action(sim.legal_actions()[0])
        events = sim.log[start:]
        said = []
        if any(isinstance(e, ev.GovernorLost) and e.player == seat for e in events):
            said.append(
                f"This ends your turn {turn} of {tables.TURNS_PER_ROUND} with the Governor block still "
                "in your hand: it goes back to the box. Place it first on a cell marked for it."
            )
        for e in events:
            if isinstance(e, ev.PrisonCollected) and e.player == seat and not (e.jade or e.convicts):
                said.append(
                    f"This takes nothing: the prison of region {e.region + 1} is empty, and the "
                    "action is spent on it."
                )
        if _ends(state, sim):
            said.append(f"This ends the game: {_final_words(sim, names)}.")
        if said:
            out[action] = " ".join(said)
    return out


# --------------------------------------------------------------------------- notes


def _bid_note(state: State, seat: int) -> str:
    """What winning the petition gives (the engine's ``petition_prize``) and how it is won (the
    words of docs/RULES.md E4, the rule of ``petition_order``)."""
    prize = petition_prize(state)
    gifts = ["the Governor marker", "the first turn of this round"]
    if prize.governor_block:
        gifts.append(
            f"a Governor block to place free on any buildable cell during your turns "
            f"({state.gov_stock} left in the stock)"
        )
    if prize.incentive:
        gifts.append(f"the first round incentive ({prize.incentive.replace('_', ' ')})")
    bonus = state.petition_bonus[seat]
    yours = f" (yours: +{bonus})" if bonus else ""
    return (
        f"Winning the petition gives {narrate.and_list(gifts)}. Only the winner pays the bid; everyone "
        f"else keeps their Jade. The highest bid plus petition bonus{yours} wins; a tie goes to the "
        "larger bid in Jade, then the Governor marker moves clockwise (in round 1, at random). The "
        "prison of the winner's region gets 1 Jade and 1 Convict from the supply."
    )


def _build_two_note(state: State, seat: int) -> str:
    """Why Build Wall's larger count is not offered: the engine's ``double_build_refusal``."""
    why = double_build_refusal(state, seat)
    assert why is not None, "the larger build is offered"
    start = f"{narrate.action_words(state, A.BUILD_COUNT + 1)} is not offered: "
    region = f"region {why.region + 1}"
    if why.reason is Reason.TOO_FEW_WALL_BLOCKS:
        return start + (
            f"it needs {why.need} Wall Blocks in your supply and you have {why.have} (the Planner buys them)."
        )
    if why.reason is Reason.SECOND_BLOCK_COST:
        return start + f"the second block costs {why.need} Jade and you have {why.have}."
    if why.reason is Reason.NO_SECOND_CELL:
        return start + f"{region}, where your Taskmaster is, has room for one more block only."
    if why.reason is Reason.TOO_FEW_WORKERS:
        return start + (
            f"the two cheapest blocks in {region} need {why.need} Workers and you have {why.have} "
            f"({narrate.plural(state.laborers[seat], 'Laborer')} and "
            f"{narrate.plural(state.convicts[seat], 'Convict')})."
        )
    return start + f"{narrate.refusal_words(why, state)}."


def decision_notes(state: State, seat: int) -> list[str]:
    """Sentences for the action bar about the decision ``seat`` is to take now (module doc)."""
    if state.is_terminal() or state.current_player() != seat:
        return []
    legal = state.legal_actions()
    out = []
    decision = state.decision
    if decision == Decision.PETITION_BID:
        out.append(_bid_note(state, seat))
    if decision == Decision.BUILD_COUNT and A.BUILD_COUNT + 1 not in legal:
        out.append(_build_two_note(state, seat))
    if any(a in A.ACTION_FAMILIES[_GOVERNOR_FAMILY] for a in legal):
        turn = state.turns_taken[seat] + 1
        out.append(
            "You hold the Governor block: place it free on any cell marked for it (the violet "
            "squares), now or at any decision of your turns. Still in your hand when your third turn "
            f"ends, it goes back to the box (this is turn {turn} of {tables.TURNS_PER_ROUND})."
        )
    return out


def forced_note(state: State, seat: int) -> str | None:
    """Why ``seat``'s only legal choice now is the only one, where the bar would explain it if it
    were asked (one build count: why not 2), or None."""
    if state.is_terminal() or state.current_player() != seat:
        return None
    if state.decision == Decision.BUILD_COUNT and A.BUILD_COUNT + 1 not in state.legal_actions():
        return _build_two_note(state, seat)
    return None


def stage_words(state: State, seat: int) -> str:
    """Where ``seat`` stands in the round, from the engine's decision and turn count."""
    if state.is_terminal():
        return "the game is over"
    if state.round == 0:
        return "the deal"
    if state.decision == Decision.PETITION_BID:
        return f"the petition of round {state.round}: the turns come after it"
    if state.decision == Decision.FAVOR_TRADE_IN:
        return "the Favor Trade-in"
    taken, turns = state.turns_taken[seat], tables.TURNS_PER_ROUND
    if state.current_player() == seat:
        return f"your turn {min(taken + 1, turns)} of {turns}"
    return f"{taken} of your {turns} turns taken this round"


def handover_words(before: State, after: State, seat: int, names: Sequence[str]) -> str:
    """What the person confirms before the other seats move: ``before`` is the position of their
    last decision, ``after`` the one once their forced moves after it are played, another seat to
    move. Says the turn that ends, who moves next, and the Governor block still in hand."""
    ended = after.round != before.round or after.turns_taken[seat] > before.turns_taken[seat]
    if ended and before.round > 0 and before.decision != Decision.PETITION_BID:
        done = f"Your turn {before.turns_taken[seat] + 1} of {tables.TURNS_PER_ROUND} ends here."
    else:
        done = "Your choice is made."
    who = narrate.seat_name(names, after.current_player())
    out = f"{done} Once you confirm, {who} plays next; until then Undo takes it back."
    if after.gov_in_hand and after.holder == seat:
        out += (
            " You still hold the Governor block: place it in a turn to come, or it goes back to "
            f"the box when your turn {tables.TURNS_PER_ROUND} ends."
        )
    return out


def guide_words() -> dict[str, str]:
    """The first-game guide's sentences that hold the game's numbers (the engine's tables)."""
    return {
        "deal": (
            f"The deal: you are dealt {tables.FAVOR_DEAL} favor cards and keep {tables.FAVOR_KEEP} of "
            "them, one click each in the bar; the others see only how many you keep."
        ),
        "favors": (
            "A favor card's reward counts only once you play it "
            f"({A.op_label(A.OP_PLAY_FAVOR)}), with its pattern on your own unreinforced blocks: "
            "an income or petition bonus from then on, anything else paid then. Until then it gives "
            "nothing."
        ),
        "round": (
            "Each round opens with the petition (a sealed bid in Jade; only the winner pays), then "
            f"every seat takes {tables.TURNS_PER_ROUND} turns, one role card a turn."
        ),
    }


_GOVERNOR_FAMILY = next(i for i, f in enumerate(A.ACTION_FAMILIES) if f.start == A.GOVERNOR)
