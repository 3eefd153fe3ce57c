"""The picture render: size and type, what changes on the table changes in the picture, hidden
information stays hidden for a seat, the env's rgb_array / human modes, and no cost without them;
the pictures of states of both backends (``backend``), and hidden changes made on engine states."""

from __future__ import annotations

import random

import numpy as np
import pytest
from test_hidden_information import hidden_from, interesting_states, swap_hand_with_deck

pytest.importorskip("PIL", reason="the picture render needs the [render] extra (Pillow)")

from island_fortress_env import island_fortress_v0
from island_fortress_env.core import Game
from island_fortress_env.views import picture
from island_fortress_env.views.picture import (
    GOVERNOR_COLOUR,
    HEIGHT,
    SEAT_COLOURS,
    WIDTH,
    cell_box,
    render_rgb,
    table_view,
)


def _states_along(n: int, seed: int, every: int, backend: str = "python") -> list:
    """Clones of a random game's states every ``every`` decisions, and the final state."""
    state = Game(backend=backend, num_players=n).new_initial_state(seed)
    chooser = random.Random(seed)
    out = []
    step = 0
    while not state.is_terminal():
        if step % every == 0:
            out.append(state.clone())
        state.apply_action(chooser.choice(state.legal_actions()))
        step += 1
    out.append(state.clone())
    return out


def _cell_fill(frame: np.ndarray, box: tuple[int, int, int, int]) -> tuple[int, ...]:
    left, top, _, _ = box
    return tuple(int(v) for v in frame[top + 2, left + 2])  # inside the outline, outside any frame


@pytest.mark.parametrize("n,seed", [(2, 1), (3, 2), (4, 3)])
def test_pictures_show_every_block_with_its_owner(backend, n, seed):
    states = _states_along(n, seed, every=60, backend=backend)
    assert len(states) >= 4 and states[-1].occ, "the game built nothing: the checks below would be empty"
    for state in states:
        frame = render_rgb(state)
        assert frame.shape == (HEIGHT, WIDTH, 3) and frame.dtype == np.uint8
        geo = state.geo
        for bit in geo.cell_bits:
            level, column = divmod(bit, 20)
            region, col = divmod(column, 5)
            owner = state.owner_at(bit)
            fill = _cell_fill(frame, cell_box(geo.regions, region, level, col))
            if owner is None:
                assert fill not in SEAT_COLOURS and fill != GOVERNOR_COLOUR
            elif owner < 0:
                assert fill == GOVERNOR_COLOUR
            else:
                assert fill == SEAT_COLOURS[owner], f"cell {geo.cell_name(bit)} should show seat {owner}"


def test_what_changes_on_the_table_changes_in_the_picture(backend):
    """Consecutive pictures differ exactly when the visible table differs."""
    states = _states_along(3, 5, every=1, backend=backend)[:400:7]
    frames = [render_rgb(s) for s in states]
    views = [table_view(s) for s in states]
    changed = 0
    for i in range(1, len(states)):
        same_view = views[i] == views[i - 1]
        same_frame = np.array_equal(frames[i], frames[i - 1])
        assert same_view == same_frame
        changed += not same_frame
    assert changed > len(states) // 2


def test_marks_read_in_grey():
    """Seat colours have clearly different brightness, and every block carries its letter."""
    grey = [0.299 * r + 0.587 * g + 0.114 * b for r, g, b in (*SEAT_COLOURS, GOVERNOR_COLOUR)]
    assert min(abs(a - b) for i, a in enumerate(grey) for b in grey[i + 1 :]) >= 20
    # The mark: a block's pixels are not all one colour (the letter is drawn on it).
    state = _states_along(2, 4, every=1000)[-1]
    frame = render_rgb(state)
    bit = next(b for b in state.geo.cell_bits if state.owner_at(b) is not None)
    level, column = divmod(bit, 20)
    left, top, right, bottom = cell_box(state.geo.regions, column // 5, level, column % 5)
    block = frame[top + 4 : bottom - 4, left + 4 : right - 4].reshape(-1, 3)
    assert len(np.unique(block, axis=0)) > 2


@pytest.mark.parametrize("n,seed", [(2, 11), (3, 12), (4, 11)])
def test_a_seat_sees_nothing_hidden(n, seed):
    """A state and a copy differing only in what seat x cannot see (another seat's hand or
    drawn cards, a sealed bid, the deck order) give x the same view, and the same pixels
    (drawn for the first few changes of each kind)."""
    checked = 0
    drawn: dict[str, int] = {}
    for state in interesting_states(n, seed):
        for x in range(n):
            view = table_view(state, x)
            frame = None
            for name, changed in hidden_from(state, x):
                assert table_view(changed, x) == view, f"seat {x} sees '{name}' at {state.decision_name()}"
                checked += 1
                kind = name.split("(")[0].replace(f"player {(x + 1) % n}", "player")
                if drawn.get(kind, 0) < 2:
                    drawn[kind] = drawn.get(kind, 0) + 1
                    frame = render_rgb(state, x) if frame is None else frame
                    assert np.array_equal(render_rgb(changed, x), frame), f"seat {x}'s picture shows '{name}'"
    assert checked > 100
    assert any("hand" in kind for kind in drawn) and any("bid" in kind for kind in drawn)
    assert "deck order" in drawn and any("drawn" in kind for kind in drawn)


@pytest.mark.parametrize("n,seed", [(3, 12)])
def test_own_hand_and_spectator_see_the_cards(n, seed):
    """The converse: a seat's own hand changes its picture; a spectator sees every hand."""
    seen_own = seen_spectator = 0
    for state in interesting_states(n, seed)[::6]:
        for x in range(n):
            changed = swap_hand_with_deck(state, x)
            if changed is None:
                continue
            assert not np.array_equal(render_rgb(changed, x), render_rgb(state, x))
            seen_own += 1
            other = (x + 1) % n
            assert table_view(changed, other) == table_view(state, other)
            assert table_view(changed, None) != table_view(state, None)
            seen_spectator += 1
    assert seen_own and seen_spectator


def test_seat_is_checked():
    state = Game(num_players=2).new_initial_state(0)
    with pytest.raises(ValueError, match="seat"):
        table_view(state, 2)


# --------------------------------------------------------------------------- the env


def test_env_rgb_array_render(backend):
    env = island_fortress_v0.env(backend=backend, num_players=3, render_mode="rgb_array")
    env.reset(seed=1)
    first = env.render()
    assert isinstance(first, np.ndarray) and first.shape == (HEIGHT, WIDTH, 3) and first.dtype == np.uint8
    for _ in range(40):
        obs, *_ = env.last()
        env.step(int(np.flatnonzero(obs["action_mask"])[-1]))
    assert not np.array_equal(env.render(), first)
    assert "rgb_array" in env.metadata["render_modes"]


def test_env_render_seat_hides_other_hands(backend):
    spectator = island_fortress_v0.env(backend=backend, num_players=3, render_mode="rgb_array")
    seat0 = island_fortress_v0.env(backend=backend, num_players=3, render_mode="rgb_array", render_seat=0)
    for env in (spectator, seat0):
        env.reset(seed=2)
    state = seat0.unwrapped.game_state  # the setup deal: every seat is choosing from its cards
    assert np.array_equal(seat0.render(), render_rgb(state, 0))
    assert np.array_equal(spectator.render(), render_rgb(spectator.unwrapped.game_state, None))
    assert not np.array_equal(seat0.render(), render_rgb(state, 1))  # seat 0's view, not seat 1's
    assert not np.array_equal(spectator.render(), seat0.render())  # the spectator sees every hand
    view = table_view(state, 0)
    assert view.players[0].choosing is not None and view.players[0].choosing_count > 0
    assert [p.choosing for p in view.players[1:]] == [None, None]
    assert [p.choosing_count for p in view.players] == [state.drawn[p].bit_count() for p in range(3)]


@pytest.mark.parametrize("seat", [3, -1, "0", True])
def test_env_render_seat_must_be_a_seat(seat):
    with pytest.raises(ValueError, match="render_seat"):
        island_fortress_v0.env(num_players=3, render_mode="rgb_array", render_seat=seat)


def test_human_mode_opens_a_window(monkeypatch):
    pytest.importorskip("pygame", reason="the window needs the [render] extra (pygame-ce)")
    monkeypatch.setenv("SDL_VIDEODRIVER", "dummy")
    monkeypatch.setitem(island_fortress_v0.raw_env.metadata, "render_fps", 1000)
    env = island_fortress_v0.env(num_players=2, render_mode="human")
    env.reset(seed=3)
    raw = env.unwrapped
    assert raw._window is not None, "reset in human mode shows the table, as the classic envs do"
    import pygame

    obs, *_ = env.last()
    env.step(int(np.flatnonzero(obs["action_mask"])[0]))
    assert env.render() is None
    shown = np.transpose(pygame.surfarray.array3d(pygame.display.get_surface()), (1, 0, 2))
    assert np.array_equal(shown, render_rgb(raw.game_state))
    env.close()
    assert raw._window is None


@pytest.mark.parametrize("mode", [None, "rgb_array", "ansi"])
def test_step_draws_nothing_unless_asked(monkeypatch, mode):
    """Without the human mode, stepping never draws: the picture code is not even reached."""

    def boom(*args, **kwargs):
        raise AssertionError("env.step drew a picture")

    monkeypatch.setattr(picture, "render_rgb", boom)
    monkeypatch.setattr(picture, "draw_table", boom)
    env = island_fortress_v0.env(num_players=3, render_mode=mode)
    env.reset(seed=0)
    for _ in range(300):
        obs, _r, term, trunc, _i = env.last()
        env.step(None if term or trunc else int(np.flatnonzero(obs["action_mask"])[0]))
        if not env.agents:
            break
