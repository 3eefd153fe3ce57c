"""Island Fortress as a TextArena environment (``textarena`` 0.7.4), for 2-4 players.

Importing this module registers three ids with ``ta.register``::

    import textarena as ta
    import island_fortress_env.adapters.textarena  # noqa: F401  (registers the ids)

    env = ta.make("IslandFortress-v0")  # wrapped in LLMObservationWrapper, ActionFormattingWrapper
    env.reset(num_players=3, seed=7)
    done = False
    while not done:
        player_id, observation = env.get_observation()
        done, info = env.step(action=agents[player_id](observation))
    rewards, game_info = env.close()

* ``IslandFortress-v0``: TextArena's default wrappers (``LLMObservationWrapper``, which gives an
  agent every message of the game so far, and ``ActionFormattingWrapper``);
* ``IslandFortress-v0-train``: ``GameBoardObservationWrapper`` and ``ActionFormattingWrapper``,
  the rules and the latest position only (what a model with a short context reads);
* ``IslandFortress-v0-raw``: no wrapper.

The messages are TextArena's ``(from_id, text, ObservationType)``: at the reset each seat gets a
``PROMPT`` (which seat it is and the rules, ``views.rules_summary``); whenever a seat is to move it
gets a ``GAME_BOARD``, ``views.prompt.prompt(state, seat)``: what it may know of the table, what
happened since its last move and its legal moves numbered ``[1]``..``[k]``; at the end each seat gets
the final position. A reply is echoed to its sender only, never to the table (a sealed bid or a
card kept stays the sender's); the others learn of a move from the narrator's sentences in their
next position. No message goes to a seat that is not built from what that seat may see
(``tests/integrations/test_textarena.py`` redeals what a seat cannot see and checks each message).

A reply is read by ``views.prompt.parse_reply`` ("[3]", "3", a move's words, "#<action id>"), or,
as TextArena's games read their actions, by the last bracketed part of a longer reply ("I take
[3]"). A reply that names no legal move is refused by TextArena's own convention,
``FFAMultiPlayerState.set_invalid_move``: the seat is told why and asked again, up to
``error_allowance`` times in a row (1 by default, as in TextArena), and the next refusal forfeits
the game, which the other seats win (``set_winners``, as TextArena's three-player games do). At the
end of a game the winners (ties included) get reward 1 and the others -1.
"""

from __future__ import annotations

import re
from typing import Any

import textarena as ta
from textarena.envs.registration import ENV_REGISTRY

from island_fortress_env.core import Game
from island_fortress_env.engine import tables
from island_fortress_env.engine.rng import deal_seed
from island_fortress_env.views.narrate import MARKS, and_list
from island_fortress_env.views.prompt import ReplyError, parse_reply, prompt
from island_fortress_env.views.rules_summary import rules_summary

__all__ = ["ENV_IDS", "IslandFortressEnv", "register"]

ENV_ID = "IslandFortress-v0"
ENV_IDS = (ENV_ID, f"{ENV_ID}-train", f"{ENV_ID}-raw")
MIN_PLAYERS, MAX_PLAYERS = tables.MIN_PLAYERS, tables.MAX_PLAYERS
ECHO_CHARS = 2000  # the most of a reply echoed back to its sender (a reply may be a model's essay)
_BRACKETED = re.compile(r"\[([^\[\]]*)\]")


class IslandFortressEnv(ta.Env):
    """One game of Island Fortress between 2-4 TextArena agents (``ta.Env``).

    ``backend``: the engine's (``"core"``, ``"python"``, or None for the default);
    ``error_allowance``: the refused replies a seat may make in a row before it forfeits
    (TextArena's ``error_allowance``); ``options``: the game's options (``Game(**options)``)."""

    def __init__(self, backend: str | None = None, error_allowance: int = 1, **options: Any) -> None:
        if isinstance(error_allowance, bool) or not isinstance(error_allowance, int) or error_allowance < 0:
            raise ValueError(f"error_allowance must be an integer >= 0, not {error_allowance!r}")
        self.backend = backend
        self.error_allowance = error_allowance
        self.options = options
        self.position: Any = None  # the engine's state of the game being played

    # ------------------------------------------------------------------ TextArena's Env API

    def reset(self, num_players: int, seed: int | None = None) -> None:
        """A new game for ``num_players`` (2-4), dealt from ``seed`` (None: a fresh seed from the
        operating system: ``engine.rng.deal_seed``)."""
        if isinstance(num_players, bool) or not isinstance(num_players, int):
            raise ValueError(f"num_players must be an integer, not {num_players!r}")
        if not MIN_PLAYERS <= num_players <= MAX_PLAYERS:
            raise ValueError(f"Island Fortress is for {MIN_PLAYERS}-{MAX_PLAYERS} players, not {num_players}")
        game = Game(num_players=num_players, backend=self.backend, **self.options)
        position = game.new_initial_state(deal_seed() if seed is None else seed)
        self.position = position
        self.state = ta.FFAMultiPlayerState(
            num_players=num_players, seed=seed, error_allowance=self.error_allowance
        )
        self.state.reset(game_state={"position": position}, player_prompt_function=self._introduction)
        self._show_position()

    def step(self, action: str) -> tuple[bool, ta.Info]:
        """Play the reply ``action`` of the seat to move, or refuse it (TextArena's invalid move)."""
        if self.state.done:
            return self.state.step(rotate_player=False)
        seat = self.state.current_player_id
        reply = action if isinstance(action, str) else repr(action)
        self.state.add_observation(
            from_id=seat,
            to_id=seat,
            message=reply[:ECHO_CHARS],
            observation_type=ta.ObservationType.PLAYER_ACTION,
        )
        try:
            chosen = read_reply(self.position, action)
        except ReplyError as refusal:
            if self.state.set_invalid_move(reason=f"{refusal}."):
                others = [p for p in range(self.state.num_players) if p != seat]
                self.state.set_winners(others, reason=f"Player {seat} forfeits: {refusal}.")
            return self.state.step(rotate_player=False)
        self.position.apply_action(chosen)
        if self.position.is_terminal():
            self._finish()
        done, info = self.state.step(rotate_player=False)
        if not done:
            self._show_position()
        return done, info

    # ------------------------------------------------------------------ messages

    def _introduction(self, player_id: int, game_state: dict[str, Any]) -> str:
        """The ``PROMPT`` of seat ``player_id``: which seat it is and the rules (nothing dealt)."""
        rules = "\n".join(
            f"{section.title}:\n" + "\n".join(f"  {line}" for line in section.lines)
            for section in rules_summary()
        )
        return (
            f"You are Player {player_id} in a game of Island Fortress for {self.state.num_players} players; "
            f"on the table you are {MARKS[player_id]}.\n\nThe rules in a page:\n{rules}\n\n"
            "When it is your move you are sent the table as you see it and your legal moves, numbered. "
            "Answer with one number in brackets, as the message asks."
        )

    def _show_position(self) -> None:
        """Send the seat to move its position and its numbered moves (``views.prompt.prompt``)."""
        seat = self.position.current_player()
        self.state.manually_set_current_player_id(seat, force=True)
        self.state.add_observation(
            to_id=seat, message=prompt(self.position, seat), observation_type=ta.ObservationType.GAME_BOARD
        )

    def _finish(self) -> None:
        """The game is over: every seat is sent the final position; the winners are set."""
        position = self.position
        for seat in range(self.state.num_players):
            self.state.add_observation(
                to_id=seat, message=prompt(position, seat), observation_type=ta.ObservationType.GAME_MESSAGE
            )
        winners = sorted(position.winners)
        won = and_list([f"Player {w} ({MARKS[w]})" for w in winners])
        scores = ", ".join(f"{MARKS[p]} {points}" for p, points in enumerate(position.score))
        verb = "win (tied)" if len(winners) > 1 else "wins"
        self.state.set_winners(winners, reason=f"{won} {verb}. Final scores: {scores}.")


def read_reply(position: Any, reply: Any) -> int:
    """The legal action a TextArena reply names: the whole reply as ``views.prompt.parse_reply``
    reads it, else the last bracketed part of it ("I take [3]", or "[Recruit 3 Laborers]" as
    ``ActionFormattingWrapper`` sends a bare reply); ``ReplyError`` when neither names one."""
    if not isinstance(reply, str):
        raise ReplyError(f"a reply is text (a str), not {type(reply)}")
    try:
        return parse_reply(position, reply)
    except ReplyError as whole:
        inside = _BRACKETED.findall(reply)
        if not inside:
            raise
        last = inside[-1].strip()
        if last.isdigit():
            last = f"[{last}]"
        try:
            return parse_reply(position, last)
        except ReplyError:
            raise whole from None


def register() -> None:
    """Register ``ENV_IDS`` with TextArena (once; importing this module does it)."""
    entry = f"{__name__}:IslandFortressEnv"
    wrappers = {
        ENV_ID: [ta.wrappers.LLMObservationWrapper, ta.wrappers.ActionFormattingWrapper],
        f"{ENV_ID}-train": [ta.wrappers.GameBoardObservationWrapper, ta.wrappers.ActionFormattingWrapper],
        f"{ENV_ID}-raw": [],
    }
    for env_id, default_wrappers in wrappers.items():
        if env_id not in ENV_REGISTRY:
            ta.register(id=env_id, entry_point=entry, default_wrappers=default_wrappers)


register()
