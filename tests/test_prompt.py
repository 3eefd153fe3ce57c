"""The text face of the game (``views/prompt.py``): a seat's information set in words, its legal
moves numbered, and the reply parser.

* Hidden information: for every seat at every decision kind reached (the setup keep, the sealed
  bids, the action phase, the drawn cards, the end), a redeal of everything the seat cannot see
  (``engine.visibility.redeal_unseen``) leaves ``prompt`` and ``observation_text`` byte for byte
  the same; and a redeal for another seat, which changes this seat's own cards, changes its text
  (so the hand is in it).
* The replies: "[k]", "k", the move's words, "#<id>" give the legal action; anything else is one
  ``ReplyError`` that says how to answer, the state unchanged.
* A scripted agent that reads only the text and answers with a number it finds listed there
  plays 100 whole games at 2, 3 and 4 players without one reply refused, and no text is longer
  than ``TEXT_BUDGET`` (under 4,000 characters). ``examples/text_agent.py`` plays them and prints
  the lengths (docs/LIBRARIES.md, "Language-model agents").
"""

from __future__ import annotations

import random

import numpy as np
import pytest

from island_fortress_env import core
from island_fortress_env.core import Game
from island_fortress_env.engine.decisions import Decision
from island_fortress_env.engine.visibility import redeal_unseen
from island_fortress_env.players.seeds import stream_key
from island_fortress_env.views import prompt as P
from island_fortress_env.views.narrate import action_words

REDEALS = (1, 2, 3)
HIDDEN = {Decision.KEEP_DEALT_FAVORS, Decision.PETITION_BID, Decision.KEEP_DRAWN_FAVORS}


def states_of_every_kind(n: int, seed: int, backend: str, per_kind: int = 3) -> list:
    """Clones of one random game's states, up to ``per_kind`` of every decision kind reached,
    spread over the game, and its last state."""
    state = Game(num_players=n, backend=backend).new_initial_state(seed)
    chooser = random.Random(seed)
    seen: dict[int, int] = {}
    out = []
    step = 0
    while not state.is_terminal():
        kind = state.decision
        if seen.get(kind, 0) < per_kind and (kind in HIDDEN or step % 5 == 0):
            seen[kind] = seen.get(kind, 0) + 1
            out.append(state.clone())
        state.apply_action(chooser.choice(state.legal_actions()))
        step += 1
    out.append(state.clone())
    return out


@pytest.mark.parametrize("n,seed", [(2, 11), (3, 12), (4, 13)])
def test_a_seats_text_is_the_same_whatever_it_cannot_see(backend, n, seed):
    states = states_of_every_kind(n, seed, backend)
    kinds = {s.decision for s in states}
    assert HIDDEN | {Decision.CHOOSE_ROLE_ACTION, Decision.GAME_OVER} <= kinds
    for state in states:
        for seat in range(n):
            text, seen = P.prompt(state, seat), P.observation_text(state, seat)
            for redeal in REDEALS:
                other = redeal_unseen(state, seat, redeal)
                assert P.prompt(other, seat) == text, (Decision(state.decision).name, seat, redeal)
                assert P.observation_text(other, seat) == seen


def test_a_seats_own_cards_are_in_its_text(backend):
    """The converse: a redeal for another seat deals this seat new cards, and its text says so."""
    changed = 0
    for state in states_of_every_kind(4, 5, backend):
        for seat in range(4):
            if not state.favor_hand[seat] and not state.drawn[seat]:
                continue
            other = redeal_unseen(state, (seat + 1) % 4, 9)
            if (other.favor_hand[seat], other.drawn[seat]) != (state.favor_hand[seat], state.drawn[seat]):
                assert P.observation_text(other, seat) != P.observation_text(state, seat)
                changed += 1
    assert changed > 10


def test_both_backends_give_the_same_text():
    if not core.available():
        pytest.skip("the C++ core is not built")
    for n in (2, 3, 4):
        engine = states_of_every_kind(n, 21, "python", per_kind=1)
        native = states_of_every_kind(n, 21, "core", per_kind=1)
        assert len(engine) == len(native)
        for a, b in zip(engine, native, strict=True):
            for seat in range(n):
                assert P.prompt(a, seat) == P.prompt(b, seat)


def _midgame(n: int = 3, steps: int = 40, seed: int = 4):
    state = Game(num_players=n).new_initial_state(seed)
    chooser = random.Random(seed)
    for _ in range(steps):
        state.apply_action(chooser.choice(state.legal_actions()))
    return state


def test_the_moves_are_the_legal_actions_numbered_in_order():
    state = _midgame()
    moves = P.legal_moves(state)
    assert [m.action for m in moves] == list(state.legal_actions())
    assert [m.number for m in moves] == list(range(1, len(moves) + 1))
    assert len({m.text.casefold() for m in moves}) == len(moves)
    text = P.prompt(state, state.current_player())
    assert P.listed_numbers(text) == [m.number for m in moves]
    for m in moves:
        assert f"\n[{m.number}] {m.text}" in text
    with pytest.raises(AttributeError):
        moves[0].number = 2  # frozen


def test_another_seat_sees_no_moves():
    state = _midgame()
    other = (state.current_player() + 1) % state.n
    text = P.prompt(state, other)
    assert P.CHOOSE not in text
    assert P.listed_numbers(text) == []
    assert text.startswith(P.observation_text(state, other))
    assert "move, not yours" in text


def test_every_reply_form_names_its_move():
    state = _midgame()
    for m in P.legal_moves(state):
        for reply in (f"[{m.number}]", f" [ {m.number} ] ", str(m.number), f"0{m.number}", f"#{m.action}"):
            assert P.parse_reply(state, reply) == m.action
        assert P.parse_reply(state, "  " + "  ".join(m.text.upper().split()) + " ") == m.action


@pytest.mark.parametrize(
    ("reply", "words"),
    [
        ("", "names no legal move"),
        ("   ", "names no legal move"),
        ("[0]", "there is no move [0]"),
        ("[999]", "there is no move [999]"),
        ("9" * 5000, "there is no move"),  # no int() of a huge number
        ("#99999", "is not legal now"),
        ("#" + "7" * 5000, "is not legal now"),
        ("build a castle", "names no legal move"),
        ("[1] [2]", "names no legal move"),
        ("\x1b[2J\x07", "names no legal move"),
        ("x" * 100_000, "names no legal move"),
    ],
)
def test_a_reply_that_names_no_move_is_one_clear_error(reply, words):
    state = _midgame()
    before = (list(state.legal_actions()), len(state.log))
    with pytest.raises(P.ReplyError) as refused:
        P.parse_reply(state, reply)
    message = str(refused.value)
    assert words in message
    assert len(message) < 300 and message.isprintable()
    assert "answer" in message
    assert (list(state.legal_actions()), len(state.log)) == before


def test_a_reply_that_is_no_text_or_comes_too_late_is_refused():
    state = _midgame()
    with pytest.raises(P.ReplyError, match="a reply is text"):
        P.parse_reply(state, 3)  # type: ignore[arg-type]
    while not state.is_terminal():
        state.apply_action(state.legal_actions()[0])
    with pytest.raises(P.ReplyError, match="the game is over"):
        P.parse_reply(state, "[1]")
    assert P.legal_moves(state) == []
    assert "The game is over" in P.prompt(state, 0)


def test_moves_that_read_the_same_are_told_apart_by_their_cost():
    """Buying the Taskmaster back with Jade or with a chip: one sentence, two costs."""
    for seed in range(40):
        state = Game(num_players=2).new_initial_state(seed)
        chooser = random.Random(seed)
        while not state.is_terminal():
            moves = P.legal_moves(state)
            words = [action_words(state, m.action) for m in moves]
            if len(set(words)) < len(words):
                texts = [m.text for m in moves]
                assert len(set(texts)) == len(texts)
                assert any("Buyback Chip" in t for t in texts) and any("Jade)" in t for t in texts)
                return
            state.apply_action(chooser.choice(state.legal_actions()))
    pytest.fail("no two moves read the same in 40 games")


@pytest.mark.parametrize("seat", [-1, 3, True, "0", None, 1.0])
def test_a_seat_off_the_table_is_one_error(seat):
    state = _midgame(n=3)
    for face in (P.prompt, P.observation_text):
        with pytest.raises(ValueError, match="seat must be an integer from 0 to 2"):
            face(state, seat)


def _agent(seed: int, game: int, seat: int) -> np.random.Generator:
    """The scripted text agent's generator, spawned by name from the run's seed."""
    sequence = np.random.SeedSequence(seed, spawn_key=(stream_key("text-agent"), game, seat))
    return np.random.default_rng(sequence)


def test_a_text_agent_plays_whole_games_within_the_budget():
    """An agent that reads only the text and answers "[k]" with a number listed in it."""
    games = 100  # 2, 3, 4 players in turn; examples/text_agent.py plays the same and prints the lengths
    lengths: dict[int, list[int]] = {2: [], 3: [], 4: []}
    refused = 0
    for game in range(games):
        n = 2 + game % 3
        state = Game(num_players=n).new_initial_state(1000 + game)
        agents = [_agent(7, game, seat) for seat in range(n)]
        while not state.is_terminal():
            seat = state.current_player()
            text = P.prompt(state, seat)
            lengths[n].append(len(text))
            numbers = P.listed_numbers(text)
            try:
                action = P.parse_reply(state, f"[{agents[seat].choice(numbers)}]")
            except (P.ReplyError, ValueError):
                refused += 1
                action = state.legal_actions()[0]
            state.apply_action(action)
        assert state.is_terminal()
    assert refused == 0
    assert max(lengths[4]) < 4000
    assert max(max(v) for v in lengths.values()) <= P.TEXT_BUDGET
    assert all(len(v) > 100 for v in lengths.values())


def test_a_long_history_is_cut_oldest_first_within_the_budget():
    cut = 0
    for seed in range(6):
        state = Game(num_players=4).new_initial_state(seed)
        chooser = random.Random(seed)
        while not state.is_terminal():
            text = P.prompt(state, state.current_player())
            assert len(text) <= P.TEXT_BUDGET
            if "left out)" in text:
                cut += 1
                assert text.index("earlier sentence") < text.index(P.CHOOSE)
            state.apply_action(chooser.choice(state.legal_actions()))
    assert cut > 0


def test_every_line_is_printable():
    state = _midgame(n=4, steps=120)
    for seat in range(4):
        assert all(line.isprintable() for line in P.prompt(state, seat).split("\n"))
