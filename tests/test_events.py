"""The event log is typed: every record is its kind's NamedTuple, with each field of the
declared type, and score events carry ScoreReason members (no text to parse)."""

from __future__ import annotations

import typing

import numpy as np
import pytest

from island_fortress_env.core import Game
from island_fortress_env.engine.describe import event_to_string
from island_fortress_env.engine.events import RECORD_TYPES, EventKind, Score, ScoreReason

VARIANTS = [
    {"num_players": 2},
    {"num_players": 4, "favor_trade_in": True, "first_round_incentive": "treasure"},
    {"num_players": 3, "extra_region": True, "start_convicts": 4},
]


def _check_field(value, hint) -> bool:
    origin = typing.get_origin(hint)
    if origin is tuple:
        return isinstance(value, tuple) and all(isinstance(v, int) for v in value)
    if hint is int:
        return isinstance(value, int) and not isinstance(value, bool)
    return isinstance(value, hint)


@pytest.mark.parametrize("options", VARIANTS, ids=str)
def test_every_logged_event_is_its_kinds_record_with_typed_fields(backend, options):
    game = Game(backend=backend, **options)
    seen: set[EventKind] = set()
    reasons: set[ScoreReason] = set()
    for seed in range(4):
        state = game.new_initial_state(seed)
        chooser = np.random.default_rng(seed)
        while not state.is_terminal():
            legal = state.legal_actions()
            state.apply_action(legal[int(chooser.integers(len(legal)))])
        for event in state.log:
            record = RECORD_TYPES[event.kind]
            assert type(event) is record
            hints = typing.get_type_hints(record)
            for name in record._fields:
                assert _check_field(getattr(event, name), hints[name]), (event, name)
            if isinstance(event, Score):
                reasons.add(event.reason)
                rowish = event.reason in (ScoreReason.ROW, ScoreReason.ROW_AT_END)
                assert (event.region >= 0) == rowish
            assert event_to_string(event)
            seen.add(event.kind)
    assert {EventKind.SCORE, EventKind.PLACE, EventKind.ROLE, EventKind.PETITION} <= seen
    assert len(reasons) >= 6


def test_every_event_kind_has_one_record_type():
    assert set(RECORD_TYPES) == set(EventKind)
    assert len(set(RECORD_TYPES.values())) == len(EventKind)
    for record in RECORD_TYPES.values():
        assert record._fields[0] == "kind"
