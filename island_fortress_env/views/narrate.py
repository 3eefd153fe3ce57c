"""What happened and what can be chosen, in the words a board-game player uses.

Everything is made from typed records, never from parsed text, and every rule it speaks of is
the engine's: why an action is refused (``engine.refusals``), the petition's tie-break
(``petition_order``), cell names (``engine.describe.cell_label``), the rules tables. The narrator
holds no rule of its own (``tests/test_narrate_no_rules.py``). One module per concern, all
importable from here:

* ``narrate_words``: seats ("A (you)", "B (heuristic)"), counts, prices, cells, favor cards.
* ``narrate_events``: ``Narrator`` turns the public event log into sentences: every score with
  its reason, income, Workers lost, the petition's bids and tie-break, a lost Governor block,
  the end of each round, the final score with its breakdown (``score_breakdown``).
* ``narrate_choices``: ``describe_choice`` turns a legal action into a ``Choice`` (its words,
  what it costs, the thing on the table it is chosen by); ``action_words`` is the one way an
  action is said to a person (command line, terminal, web app, docs); ``public_move_text`` is
  what the other seats may learn of a move.
* ``narrate_refusals``: ``refusals`` says why the role actions of the cards in hand that cannot
  be taken now are refused.

``views.rules_summary`` is the rules and the role cards in a page. Standard library and the
engine only, so the terminal tools can use it as well as the browser.
"""

from __future__ import annotations

from island_fortress_env.views.narrate_choices import (
    Choice,
    TargetKind,
    action_words,
    describe_choice,
    is_hidden_move,
    pending_text,
    public_move_text,
)
from island_fortress_env.views.narrate_events import (
    BREAKDOWN_LABELS,
    Line,
    Narrator,
    Tone,
    final_score_lines,
    last_lines,
    score_breakdown,
    score_reason_words,
)
from island_fortress_env.views.narrate_refusals import Refusal, refusal_words, refusals
from island_fortress_env.views.narrate_words import (
    MARKS,
    REWARD_WORDS,
    ROLE_NAMES,
    and_list,
    card_rewards,
    card_text,
    cell_label,
    cell_level,
    plural,
    price,
    seat_name,
)

__all__ = [
    "BREAKDOWN_LABELS",
    "MARKS",
    "REWARD_WORDS",
    "ROLE_NAMES",
    "Choice",
    "Line",
    "Narrator",
    "Refusal",
    "TargetKind",
    "Tone",
    "action_words",
    "and_list",
    "card_rewards",
    "card_text",
    "cell_label",
    "cell_level",
    "describe_choice",
    "final_score_lines",
    "is_hidden_move",
    "last_lines",
    "pending_text",
    "plural",
    "price",
    "public_move_text",
    "refusal_words",
    "refusals",
    "score_breakdown",
    "score_reason_words",
    "seat_name",
]
