"""The terminal tools say what happened in a board-game player's words: ``play`` tells every
seat's moves (income, scores with their reasons, the petition, the final breakdown), takes a
bid by its amount, does not ask a decision with one legal choice and shows the rules on
``help``; ``replay`` and ``demo`` tell the game through the Narrator with one name per seat;
the text board draws its coordinates and tells the last events in words."""

from __future__ import annotations

import contextlib
import io
import random
import re

import pytest

from island_fortress_env.engine import Game
from island_fortress_env.engine import actions as A
from island_fortress_env.engine import events as ev
from island_fortress_env.engine.describe import event_to_string
from island_fortress_env.env import records
from island_fortress_env.views import narrate
from island_fortress_env.views.rules_summary import rules_summary
from island_fortress_env.views.text import render_text

pytest.importorskip("rich", reason="play needs the [render] extra (rich)")


from terminal_person import Person

from island_fortress_env.cli.play import COMMANDS, parse_choice, play_game


@pytest.fixture(scope="module")
def whole_game(tmp_path_factory) -> tuple[Person, records.GameRecord]:
    person = Person()
    save = tmp_path_factory.mktemp("play") / "game.json"
    record = play_game(["random"], seed=5, save_path=save, ask=person, console=person.console)
    assert record is not None and records.load(save) == record
    return person, record


# --------------------------------------------------------------------------- play


def test_typing_2_at_a_bid_bids_2_jade(whole_game):
    person, record = whole_game
    states = records.states(record)
    bids = [
        action - A.BID
        for state, action in zip(states, record.actions, strict=False)
        if state.current_player() == 0 and A.family_of(action).start == A.BID
    ]
    assert bids and all(b == 2 for b in bids), bids
    assert "Bids revealed: A 2," in person.out.getvalue()
    assert "  (type the bid: 0-" in person.out.getvalue()
    assert "    2. Bid 2 Jade: costs 2 Jade if it wins" in person.out.getvalue()


def test_a_decision_with_one_legal_choice_is_taken_not_asked(whole_game):
    person, record = whole_game
    states = records.states(record)
    mine = [s for s, _ in zip(states, record.actions, strict=False) if s.current_player() == 0]
    one = [s for s in mine if len(s.legal_actions()) == 1]
    assert one, "the game had no one-choice decision to check"
    assert len(person.asked) == len(mine) - len(one)  # every entry was good: one prompt a decision
    assert person.out.getvalue().count("A (you): the only choice, ") == len(one)


def test_the_narration_tells_income_scores_rounds_and_the_final_breakdown(whole_game):
    person, record = whole_game
    text = person.out.getvalue()
    final = records.states(record)[-1]
    for seat in ("A (you)", "B (random)"):
        assert re.search(rf"^{re.escape(seat)} takes \d+ Jade of income\.$", text, re.MULTILINE)
        assert f"{seat}: {final.score[0 if seat[0] == 'A' else 1]} VP = " in text
    assert "Round 1 ends." in text and "Round 2 begins: everyone takes income." in text
    scores = [e for e in final.log if isinstance(e, ev.Score)]
    assert scores and text.count(" scores ") >= len(scores)
    assert "Final scoring." in text and "Game over. Final scores: " in text
    assert re.search(r"loses \d+ Workers?", text)  # Workers lost are told
    assert "B (random) seals a petition bid." in text  # the other seat's bid, sealed
    assert not re.search(r"B \(random\):? ([Kk]eep [A-Z]|[Bb]ids? \d)", text)
    # A seat is never named another way.
    assert not re.search(r"\b[AB]\(\d\)|player[ _]\d", text)


def test_the_choices_have_their_costs_and_refused_role_actions_say_why(whole_game):
    person, _ = whole_game
    text = person.out.getvalue()
    assert re.search(r"^\s+\d+\. Collect Jade: free: gains \d+ Jade$", text, re.MULTILINE)
    assert "Not possible now:" in text
    assert re.search(r"^ {7}Collect 6 Convicts: needs 2 Laborers; you have [01]$", text, re.MULTILINE)


def test_help_shows_the_rules_and_the_role_cards():
    person = Person(first=("help", "quit"))
    assert play_game(["random"], seed=1, ask=person, console=person.console) is None
    text = person.out.getvalue()
    after_help = text[text.index("A (you) to decide: ") :]
    for section in rules_summary():
        assert f"{section.title}:" in after_help
        for line in section.lines:
            assert f"  - {line}" in after_help
    assert COMMANDS in after_help


def test_a_bid_in_base_101_digits_is_typed_digit_by_digit():
    person = Person(bid="1", other="1", first=())
    answers = iter(range(10_000))

    def ask(prompt: str) -> str:
        next(answers)
        if person.asked.count("choose role action") >= 1:
            return "quit"
        return person(prompt)

    rules = {"unlimited_components": True, "extra_jade": 10**9}
    assert play_game(["random"], seed=3, rules=rules, ask=ask, console=person.console) is None
    text = person.out.getvalue()
    digits = person.asked.count("petition bid")
    assert digits > 1 and "  (type the digit: 0-100)" in text
    bid = sum(101**i for i in range(digits))  # the digit 1 typed at every place
    assert f"Bids revealed: A {bid}," in text


def test_a_bid_is_read_by_its_amount():
    legal = [A.BID + 0, A.BID + 1, A.BID + 2]
    labels = ["Bid 0 Jade", "Bid 1 Jade", "Bid 2 Jade"]
    assert parse_choice("2", legal, labels, [0, 1, 2], "bid").action == A.BID + 2
    assert parse_choice("0", legal, labels, [0, 1, 2], "bid").action == A.BID
    assert parse_choice("bid 1", legal, labels, [0, 1, 2], "bid").action == A.BID + 1
    assert parse_choice("3", legal, labels, [0, 1, 2], "bid").message == "There is no bid 3: choose 0-2."
    gap = parse_choice("1", [7, 9], ["x", "y"], [0, 2], "digit")
    assert gap.action is None and "There is no digit 1" in gap.message


# --------------------------------------------------------------------------- replay and demo


def test_replay_tells_the_game_in_words(tmp_path):
    from test_records import play

    from island_fortress_env.cli.replay import run_replay

    record, final = play(seed=8)
    path = records.save(record, tmp_path / "g.json")
    out = io.StringIO()
    run_replay(path, interactive=False, out=out)
    text = out.getvalue()
    assert "2 players (A (random), B (random))" in text
    assert re.search(r"step \d+/\d+: B \(random\) chooses: Bid \d+ Jade", text)
    assert "Bids revealed: " in text and "A (random) takes" in text
    assert "Game over. Final scores: " in text
    assert f"B (random): {final.score[1]} VP = " in text
    assert not re.search(r"\b[AB]\(\d\)|player[ _]\d", text)
    raw = [event_to_string(e) for e in final.log if isinstance(e, (ev.JadeCollected, ev.PrisonCollected))]
    assert raw and not any(line in text for line in raw)


def test_demo_names_each_seat_one_way():
    from island_fortress_env.cli.demo import run_demo

    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        scores = run_demo(players=3, seed=2, agents=["random", "heuristic", "random"])
    text = out.getvalue()
    named = set(re.findall(r"\b([A-D]) \(([a-z]+)\)", text))
    assert named == {("A", "random"), ("B", "heuristic"), ("C", "random")}
    assert not re.search(r"player[ _]\d|\b[A-D]\(\d\)|seat \d", text)
    assert "Bids revealed:" in text and " scores +" in text and "Round 2 begins" in text
    tail = text.rstrip().splitlines()[-4:]
    assert tail[0] == "Final scores:"
    for p, line in enumerate(tail[1:]):
        assert line.split()[:3] == ["ABC"[p], ["(random)", "(heuristic)", "(random)"][p], str(scores[p])]
        assert " = " in line


# --------------------------------------------------------------------------- the board


def _played(seed: int, steps: int, n: int = 3) -> object:
    state = Game(num_players=n).new_initial_state(seed)
    pick = random.Random(seed)
    for _ in range(steps):
        if state.is_terminal():
            break
        state.apply_action(pick.choice(state.legal_actions()))
    return state


@pytest.mark.parametrize("n,seed", [(2, 1), (3, 4), (4, 7)])
def test_the_board_draws_every_block_under_its_coordinates(n, seed):
    state = _played(seed, 400, n)
    text = render_text(state, 0)
    lines = text.splitlines()
    header = next(line for line in lines if line.lstrip().startswith("C1 C2 C3 C4 C5"))
    rows = {line.split()[0]: line for line in lines if re.match(r"^  L[1-4]  ", line)}
    placed = 0
    for cell in range(state.geo.regions * 17):
        bit = state.geo.cell_bits[cell]
        if not state.occ >> bit & 1:
            continue
        label = narrate.cell_label(cell)  # R2-L3-C4
        region, level, column = (int(x[1:]) for x in label.split("-"))
        at = [m.start() + 1 for m in re.finditer(f"C{column}", header)][region - 1]
        owner = next((p for p in range(state.n) if state.own[p] >> bit & 1), None)
        expected = "G" if state.gov_bits >> bit & 1 else "ABCD"[owner]
        assert rows[f"L{level}"][at].upper() == expected, label
        placed += 1
    assert placed > 5


def test_the_board_names_the_mover_and_tells_the_last_events_in_words():
    state = _played(3, 250)
    names = ("you", "heuristic", "random")
    text = render_text(state, 5, names)
    mover = narrate.seat_name(names, state.current_player())
    assert f"Round {state.round}: {mover} to move: " in text
    assert "A (you)" in text and "C (random)" in text
    told = narrate.last_lines(state.log, names, state.game.deck.cards, 5)
    tail = text.splitlines()[-len(told) :]
    assert [line.strip() for line in tail] == [line.text for line in told]
    assert not any(event_to_string(e) in text for e in state.log[-5:])
    # env.render()'s board (no names): the marks alone, the events still in words.
    plain = render_text(state)
    assert f"Round {state.round}: {'ABC'[state.current_player()]} to move: " in plain
    assert "What happened last:" in plain


def test_the_last_events_are_told_as_a_whole_log_would_tell_them():
    """Reading the log's start without words keeps what the later sentences need (the
    Governor marker for a petition's tie-break, the scores for the final breakdown)."""
    state = _played(11, 10_000)
    assert state.is_terminal()
    names = ("x", "y", "z")
    whole = narrate.Narrator(names, state.game.deck.cards)
    per_event = [whole.event(e) for e in state.log]
    for count in (1, 4, 40, len(state.log)):
        expected = [line for lines in per_event[-count:] for line in lines]
        assert narrate.last_lines(state.log, names, state.game.deck.cards, count) == expected


# --------------------------------------------------------------------------- numbering


def _at_laborers_with_the_governor_block(seed: int = 39):
    """A 2-player game played at random until a build asks how many Laborers while the
    Governor block may be placed (its cells come before the counts in the action ids)."""
    from island_fortress_env.engine.decisions import Decision

    state = Game(num_players=2).new_initial_state(seed)
    pick = random.Random(seed)
    while not state.is_terminal():
        legal = state.legal_actions()
        if state.decision == Decision.ASSIGN_LABORERS and any(a in A.ACTION_FAMILIES[13] for a in legal):
            return state
        state.apply_action(pick.choice(legal))
    raise AssertionError("no such decision in this game")


def test_at_how_many_laborers_typing_the_count_picks_that_count():
    """The bug of issue 58: the Governor cells were listed 1-10 and the counts after them, so
    typing 1 placed the Governor block. Now a count is listed (and typed) by itself and the
    Governor cells by g1, g2, ..."""
    from island_fortress_env.cli.play import _ask_person, menu

    state = _at_laborers_with_the_governor_block()
    assert A.ACTION_FAMILIES[13].name == "governor"
    legal = state.legal_actions()
    counts = [a - A.LABORERS for a in legal if A.family_of(a).start == A.LABORERS]
    governor = [a for a in legal if A.family_of(a).start == A.GOVERNOR]
    assert counts == [2, 3] and len(governor) == 10
    listing = menu(state, legal)
    assert listing.numbers == counts and listing.governor == governor and listing.what == "count of Laborers"
    seat = state.current_player()
    for entries, expected in (
        (["2"], A.LABORERS + 2),
        (["3"], A.LABORERS + 3),
        (["1", "2"], A.LABORERS + 2),  # no count 1: explained, asked again
        (["g1"], governor[0]),
        (["G 10"], governor[9]),
        (["g11", "3"], A.LABORERS + 3),
    ):
        person = Person(first=tuple(entries))
        assert _ask_person(state, seat, ("you", "random"), person, person.console) == expected
    text = person.out.getvalue()
    assert "  (type the count of Laborers: 2-3)" in text
    assert re.search(r"^    2\. 2 Laborers and \d+ Convicts?: loses 1 Laborer", text, re.MULTILINE)
    assert re.search(r"^   g1\. Governor block at R\d-L\d-C\d$", text, re.MULTILINE)
    assert text.index("    3. 3 Laborers") < text.index("   g1. Governor block")
    assert "There is no Governor cell 11: choose g1-g10." in text


def test_other_counts_are_typed_by_their_count():
    """Recruit, buy, build and draw counts are listed by the count itself."""
    from island_fortress_env.cli.play import menu
    from island_fortress_env.engine.decisions import Decision

    seen = set()
    for seed in range(30):
        state = Game(num_players=3).new_initial_state(seed)
        pick = random.Random(seed)
        while not state.is_terminal():
            legal = state.legal_actions()
            if (
                state.decision
                in (
                    Decision.RECRUIT_COUNT,
                    Decision.BUY_BLOCKS_COUNT,
                    Decision.BUILD_COUNT,
                    Decision.DRAW_FAVORS_COUNT,
                )
                and len(legal) > 1
            ):
                listing = menu(state, legal)
                words = [narrate.describe_choice(state, a).label for a in listing.legal]
                for number, label in zip(listing.numbers, words, strict=True):
                    assert re.search(rf"\b{number}\b", label), (number, label)
                seen.add(state.decision)
            state.apply_action(pick.choice(legal))
    assert len(seen) == 4


# --------------------------------------------------------------------------- the deal, the hand, quit


def test_the_board_at_the_deal_says_the_deal_not_round_0(whole_game):
    person, _ = whole_game
    out = person.out.getvalue()
    assert "Round 0" not in out
    assert "The deal: A (you) to move: " in out  # the setup keep, before round 1
    assert "Round 1: " in out
    state = Game(num_players=2).new_initial_state(seed=3)
    assert state.round == 0 and render_text(state).startswith("The deal: ")


def test_the_hand_is_told_in_the_narrators_words_not_raw_keys(whole_game):
    person, record = whole_game
    out = person.out.getvalue()
    heads = ("Your favor hand:", "You are choosing from:")
    hands = [line for line in out.splitlines() if line.startswith(heads)]
    assert hands and any("[" in line for line in hands)
    keys = "vp|buyback_chips|wall_blocks|jade|convicts|laborers|treasure|income|petition"
    raw = re.compile(rf"->|\b({keys}) \d")
    assert not any(raw.search(line) for line in hands), [line for line in hands if raw.search(line)][:3]
    deck = records.states(record)[0].game.deck.cards
    told = {f"{card.name} [{' / '.join(card.pattern)}]: {narrate.card_rewards(card)}" for card in deck}
    parts = [part.strip() for line in hands for part in line.split(":", 1)[1].split(";")]
    said = {part for part in parts if part != "empty"}
    assert said and said <= told, sorted(said - told)[:3]


def test_quit_says_why_nothing_is_saved_and_how_to_deal_the_game_again(tmp_path):
    answers = iter(["quit"])
    person = Person()
    save = tmp_path / "g.json"
    done = play_game(
        ["random", "heuristic"], seat=1, seed=12, save_path=save,
        ask=lambda prompt: next(answers), console=person.console,
    )  # fmt: skip
    out = person.out.getvalue()
    assert done is None and not save.exists()
    assert "Game stopped; nothing saved. A game record holds a finished game: it is saved at " in out
    command = f"island-fortress play --agents random heuristic --seat 1 --seed 12 --save {save}"
    again = r"To play this deal again \(\d+ decisions were made\): " + re.escape(command)
    assert re.search(again, out), out[-500:]
    assert "'quit' stops (a game is saved when it ends)" in COMMANDS
