"""views/narrate.py: events and choices in a board-game player's words."""

from __future__ import annotations

import random

import pytest

from island_fortress_env.engine import actions as A
from island_fortress_env.engine import events as ev
from island_fortress_env.engine import tables
from island_fortress_env.engine.decisions import Decision
from island_fortress_env.env.aec import raw_env
from island_fortress_env.views import narrate
from island_fortress_env.views.narrate import Narrator, TargetKind, Tone
from island_fortress_env.views.rules_summary import rules_summary

K = ev.EventKind
NAMES = ("you", "heuristic", "random")


def random_game(players: int, seed: int, **rules):
    """A finished game of random legal moves (and every state on the way)."""
    env = raw_env(num_players=players, **rules)
    env.reset(seed=seed)
    state = env.game_state
    draw = random.Random(seed)
    seen = [state.clone()]
    while not state.is_terminal():
        legal = state.legal_actions()
        state.apply_action(legal[draw.randrange(len(legal))])
        seen.append(state.clone())
    return state, seen


@pytest.mark.parametrize(
    ("players", "rules"),
    [
        (2, {}),
        (3, {"favor_trade_in": True, "first_round_incentive": "treasure"}),
        (4, {"extra_region": True}),
    ],
)
def test_every_event_of_whole_games_is_put_into_words(players, rules):
    final, _ = random_game(players, seed=players, **rules)
    names = NAMES[:players] if players <= 3 else (*NAMES, "mcts")
    narrator = Narrator(names, final.game.deck.cards)
    kinds = set()
    for event in final.log:
        lines = narrator.event(event)
        kinds.add(event.kind)
        if event.kind is not K.SETUP and event.kind is not K.PASS:
            assert lines, event
        for line in lines:
            assert line.text and line.text[0].isupper() and line.text.endswith("."), line
            assert "player_" not in line.text
    assert {K.ROUND, K.INCOME, K.PETITION, K.ROLE, K.SCORE, K.GAME_OVER} <= kinds


def test_a_score_says_its_points_and_reason():
    narrator = Narrator(NAMES, ())
    row = narrator.event(ev.Score(K.SCORE, 0, 6, ev.ScoreReason.ROW, 1, 0))
    assert [line.text for line in row] == [
        "A (you) scores +6 VP for the majority of the completed row 1 of region 2."
    ]
    assert row[0].tone is Tone.SCORE and row[0].seat == 0
    end = narrator.event(ev.Score(K.SCORE, 2, -3, ev.ScoreReason.FEWEST_TREASURE))
    assert [line.text for line in end] == [
        "Final scoring.",
        "C (random) scores -3 VP for the fewest Treasure.",
    ]
    assert end[1].tone is Tone.LOSS
    tower = narrator.event(ev.Score(K.SCORE, 1, 5, ev.ScoreReason.TOWER))
    assert tower[0].text == "B (heuristic) scores +5 VP for a block on level 4."


def test_income_workers_lost_and_a_lost_governor_block():
    narrator = Narrator(NAMES, ())
    assert narrator.event(ev.Income(K.INCOME, 1, 4))[0].text == "B (heuristic) takes 4 Jade of income."
    workers = narrator.event(ev.Workers(K.WORKERS, 0, 3, 1, 2))[0]
    assert workers.text == (
        "A (you) builds with 3 Laborers and 1 Convict and loses 3 Workers: 2 Laborers and 1 Convict."
    )
    assert workers.tone is Tone.LOSS
    assert "no Worker is lost" in narrator.event(ev.Workers(K.WORKERS, 0, 0, 0, 0))[0].text
    lost = narrator.event(ev.GovernorLost(K.GOVERNOR_LOST, 2))[0]
    assert lost.text == "C (random) did not place the Governor block in time: it goes back to the box."


def test_the_round_end_is_said_before_the_next_round():
    narrator = Narrator(NAMES, ())
    assert [line.text for line in narrator.event(ev.RoundStarted(K.ROUND, 1))] == [
        "Round 1 begins: everyone takes income."
    ]
    assert [line.text for line in narrator.event(ev.RoundStarted(K.ROUND, 2))] == [
        "Round 1 ends.",
        "Round 2 begins: everyone takes income.",
    ]


def test_a_purchase_that_costs_nothing_is_free_and_three_names_read_as_a_list():
    narrator = Narrator(NAMES, ())
    said = [line.text for e in (
        ev.Bought(K.BOUGHT, 0, 1, 0), ev.Recruited(K.RECRUITED, 1, 2, 1), ev.Build(K.BUILD, 2, 2, 0),
    ) for line in narrator.event(e)]  # fmt: skip
    assert said == [
        "A (you) buys 1 Wall Block for free.",
        "B (heuristic) recruits 2 Laborers for 1 Jade.",
        "C (random) builds 2 blocks, the second free.",
    ]
    tie = narrator.event(ev.Petition(K.PETITION, (2, 2, 2), (2, 2, 2), 2))[0].text
    assert "A, B and C tie at 2" in tie
    assert narrate.and_list(["A"]) == "A" and narrate.and_list(["A", "B"]) == "A and B"


def test_the_petition_shows_the_bids_and_each_tie_break():
    narrator = Narrator(NAMES, ())
    first = narrator.event(ev.Petition(K.PETITION, (2, 2, 0), (2, 2, 0), 1))[0].text
    assert first.startswith(
        "Bids revealed: A 2, B 2, C 0. A and B tie at 2 with equal Jade: in the first round"
    )
    assert "B (heuristic) pays 2 Jade" in first
    bonus = narrator.event(ev.Petition(K.PETITION, (3, 1, 0), (3, 3, 0), 0))[0].text
    assert (
        "B 1 + 2 favor bonus = 3" in bonus and "A and B tie at 3; A (you) wins with more Jade bid." in bonus
    )
    clockwise = narrator.event(ev.Petition(K.PETITION, (1, 1, 1), (1, 1, 1), 1))[0].text
    assert "the Governor marker moves clockwise from A; B (heuristic) wins." in clockwise
    plain = narrator.event(ev.Petition(K.PETITION, (0, 4, 1), (0, 4, 1), 1))[0].text
    winner = "B (heuristic)"
    assert plain.endswith(
        f"{winner} wins the petition. {winner} pays 4 Jade, takes the Governor marker and plays first."
    )


def test_the_final_score_comes_with_its_breakdown():
    final, _ = random_game(3, seed=11)
    lines = Narrator(NAMES, final.game.deck.cards).lines(final.log)
    breakdown = narrate.score_breakdown(final.log, final.n)
    assert [sum(parts.values()) for parts in breakdown] == final.score
    tail = [line.text for line in lines[-4:]]
    assert tail[0].startswith(
        f"Game over. Final scores: A {final.score[0]}, B {final.score[1]}, C {final.score[2]}."
    )
    for p in range(3):
        assert tail[1 + p].startswith(f"{narrate.seat_name(NAMES, p)}: {final.score[p]} VP = ")
        for label, points in breakdown[p].items():
            if points:
                assert f"{label} {points}" in tail[1 + p]


def _states_at(decision: Decision, games=range(8)):
    for seed in games:
        _, seen = random_game(3, seed)
        for state in seen:
            if not state.is_terminal() and state.decision == decision:
                yield state


def test_every_choice_says_what_it_costs():
    role = next(_states_at(Decision.CHOOSE_ROLE_ACTION))
    convicts = narrate.describe_choice(role, A.ROLE + A.OP_COLLECT_CONVICTS)
    assert (convicts.label, convicts.cost) == ("Collect 6 Convicts", "costs 2 Laborers")
    assert narrate.describe_choice(role, A.REPEAT + A.OP_BUILD).cost.startswith("costs 2 Jade")
    recruit = next(_states_at(Decision.RECRUIT_COUNT))
    for action in recruit.legal_actions():
        choice = narrate.describe_choice(recruit, action)
        k = action - A.RECRUIT_COUNT + 1
        cost = tables.PURCHASE_COST[k]
        assert choice.label == f"Recruit {narrate.plural(k, 'Laborer')}"
        assert choice.cost == (f"costs {cost} Jade" if cost else "free")
    build = next(_states_at(Decision.BUILD_CELL))
    for action in build.legal_actions():
        choice = narrate.describe_choice(build, action)
        if choice.kind is TargetKind.CELL:
            level = narrate.cell_level(choice.value)
            assert choice.cost == f"needs {tables.WORKERS_PER_LEVEL[level]} Workers"
            assert choice.label == f"Build at {narrate.cell_label(choice.value)}"
    workers = next(_states_at(Decision.ASSIGN_LABORERS))
    for action in workers.legal_actions():
        laborers = action - A.LABORERS
        convicts = workers.worker_need - laborers
        dead = narrate.plural((laborers + 1) // 2, "Laborer")
        assert (
            narrate.describe_choice(workers, action).cost
            == f"loses {dead} and {narrate.plural(convicts, 'Convict')}"
        )


def test_a_bid_is_chosen_by_its_amount():
    bid = next(_states_at(Decision.PETITION_BID))
    choices = [narrate.describe_choice(bid, a) for a in bid.legal_actions()]
    assert [c.kind for c in choices] == [TargetKind.BID] * len(choices)
    assert [c.value for c in choices] == list(range(len(choices)))
    assert choices[0].cost == "free" and choices[-1].cost == f"costs {len(choices) - 1} Jade if it wins"


def test_every_legal_choice_of_whole_games_has_words_and_a_target():
    for seed in range(3):
        _, seen = random_game(3, seed)
        for state in seen[:-1]:
            for action in state.legal_actions():
                choice = narrate.describe_choice(state, action)
                assert choice.action == action and choice.label
                if choice.kind in (TargetKind.CELL, TargetKind.GOVERNOR):
                    assert narrate.cell_label(choice.value) in choice.label


def test_a_refused_role_action_says_why():
    found = []
    for state in _states_at(Decision.CHOOSE_ROLE_ACTION):
        p = state.current_player()
        for refusal in narrate.refusals(state):
            assert refusal.op not in [a - A.ROLE for a in state.legal_actions() if A.ROLE <= a < A.REPEAT]
            if refusal.kind is TargetKind.ROLE and refusal.op == A.OP_COLLECT_CONVICTS:
                assert refusal.reason == f"needs 2 Laborers; you have {state.laborers[p]}"
                found.append(refusal)
    assert found
    assert narrate.refusals(next(_states_at(Decision.PETITION_BID))) == []


def test_cell_labels_are_the_engine_coordinates():
    env = raw_env(num_players=4, extra_region=True)
    env.reset(seed=0)
    geo = env.game_state.geo
    assert [narrate.cell_label(i) for i in range(len(geo.cell_bits))] == [
        geo.cell_name(b) for b in geo.cell_bits
    ]


def test_kept_cards_and_bids_stay_hidden_in_the_public_words():
    keep = next(_states_at(Decision.KEEP_DEALT_FAVORS))
    for action in keep.legal_actions():
        card = keep.game.deck.cards[action - A.KEEP_FAVOR]
        assert card.name in narrate.describe_choice(keep, action).label
        assert narrate.public_move_text(keep, action) == "keeps a favor card"
        assert narrate.is_hidden_move(action)
    bid = next(_states_at(Decision.PETITION_BID))
    assert {narrate.public_move_text(bid, a) for a in bid.legal_actions()} == {"seals a petition bid"}
    role = next(_states_at(Decision.CHOOSE_ROLE_ACTION))
    action = role.legal_actions()[0]
    assert narrate.public_move_text(role, action) == narrate.describe_choice(role, action).label
    assert not narrate.is_hidden_move(action)


def test_what_is_pending_in_a_compound_move_is_shown():
    for state in _states_at(Decision.ASSIGN_LABORERS):
        role = [e for e in state.log if isinstance(e, ev.Role)][-1]
        if role.op != A.OP_BUILD:
            continue
        text = narrate.pending_text(state, NAMES)
        places = [e for e in state.log[state.log.index(role) :] if isinstance(e, ev.Place) and not e.governor]
        assert text.startswith(f"{narrate.seat_name(NAMES, state.current_player())}: Builder A, Build Wall (")
        assert all(f"block at {narrate.cell_label(p.cell)}" in text for p in places)
        assert text.endswith("now: how many Laborers.")
        return
    pytest.fail("no build in the games played")


def test_the_rules_summary_has_the_numbers_of_the_rules_tables():
    text = "\n".join(line for section in rules_summary() for line in section.lines)
    titles = [section.title for section in rules_summary()]
    assert titles[1:6] == list(A.ROLE_NAMES)
    assert "/".join(map(str, tables.PURCHASE_COST[1:])) in text
    assert f"{tables.TASKMASTER_BUYBACK_COST} Jade for the Taskmaster" in text
    assert "/".join(map(str, tables.WORKERS_PER_LEVEL)) in text
