"""Games in the browser: a person against agents (``play``), or agents alone (``watch``).

A ``LiveGame`` holds one engine state, the agents of the seats that are not the person's, the
states so far (for the analysis) and every move with its words. The server, not the browser,
decides what a seat sees: ``LiveGame.moves_for`` and ``LiveGame.snapshot`` give a seat its own
moves in full and the other seats' moves as the table would learn them (a kept favor card and
a sealed bid stay hidden); the position is ``seatview.seat_view`` of the person's seat. The seed
of a game being played is never sent: it would tell the deal.

Moves happen one at a time: ``act`` applies the person's choice; ``advance`` lets the seat to
move play, an agent or the person when only one choice is legal (it is applied and shown, not
asked), for at most ``ADVANCE_SECONDS`` a request so that a slow agent's moves come in as they are
made. ``undo`` takes back the person's last decision while no other seat has moved since: the
game is replayed from its seed without it (``records.initial_state``, then every action before
it), exactly as a record replays. A decision that showed the person something hidden (``revealed``:
favor cards drawn from the deck, the other seats' sealed bids) is not taken back: the replay
would deal the same again, so undoing it would be a free look before choosing again. Before the
agents answer the person's last decision, the page asks the person to confirm it (``handover``:
their turn ends, who plays next), so undo stays open until then. A finished game is saved as a
game record in the games directory.

The person's snapshot also carries what the table tells a player (``web.recap``, ``web.words``):
the recap since their last turn, a warning on each choice that loses something or ends the game,
notes on the decision (what the petition gives, why only one block can be built), where they
stand in the round, their hand's progress on the wall (``hand_progress``), and at the end the end
screen with every hand revealed; every snapshot has the scores if the game ended now
(``score_if_ended``, public). None of it holds more than the seat may know.
"""

from __future__ import annotations

import datetime as dt
import operator
import secrets
import threading
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from island_fortress_env.engine import IllegalActionError, visibility
from island_fortress_env.engine import events as ev
from island_fortress_env.engine.actions import NUM_ACTIONS
from island_fortress_env.engine.tables import PLAYER_COUNTS
from island_fortress_env.env.aec import raw_env
from island_fortress_env.env.observation import ObservationEncoder, action_mask
from island_fortress_env.env.records import GameRecord, initial_state
from island_fortress_env.players import Agent, RemoteAgentError
from island_fortress_env.players.seeds import agent_seed, deal_seed
from island_fortress_env.views import narrate
from island_fortress_env.views.seatview import hand_progress, score_if_ended
from island_fortress_env.web.errors import (
    BadGateway,
    BadRequest,
    Conflict,
    Forbidden,
    NotFound,
    TooMany,
    shown,
)
from island_fortress_env.web.moves import Move
from island_fortress_env.web.recap import end_screen, recap
from island_fortress_env.web.seatview import positions, seat_view
from island_fortress_env.web.words import (
    HUMAN,
    consequences,
    decision_notes,
    forced_note,
    guide_words,
    handover_words,
    prison_lines,
    prisons_of,
    score_change,
    seat_names,
    stage_words,
)

if TYPE_CHECKING:
    from island_fortress_env.engine import State
    from island_fortress_env.web.store import RecordStore

MAX_SEED = 2**32 - 1
MAX_GAMES = 64  # live games kept; see GameTable for which one a new game may replace
IDLE_SECONDS = 30 * 60  # an unfinished game untouched this long may be dropped for a new one
MAX_MOVES_PER_REQUEST = 200
ADVANCE_SECONDS = 1.0  # an advance request returns the moves made so far once this has passed


def revealed(before: State, after: State, seat: int) -> str | None:
    """What ``seat``'s move from ``before`` to ``after`` showed it of what it could not see
    (``engine.visibility``), in words, or None: favor cards from the deck coming into its view (a
    draw), or the other seats' sealed bids (the petition, when its bid was the last). Nothing else
    a move of a seat shows depends on what that seat cannot see: the generator's shuffles (of the
    deck after the setup keep, of unkept cards going under it) show nothing, its tie-break of the
    first round's petition comes with the bids, and the hands are shown when the game is over."""
    seen = before.favor_hand[seat] | before.drawn[seat]
    new = (after.favor_hand[seat] | after.drawn[seat]) & ~seen
    if new and any(new >> card & 1 for card in before.deck):
        return "drew favor cards from the deck"
    sealed = visibility.sealed_bidders(before) - {seat}
    if sealed and not sealed <= visibility.sealed_bidders(after):
        return "revealed the other seats' sealed bids"
    return None


def _changed_cells(events: Sequence[ev.Event]) -> tuple[int, ...]:
    out = []
    for e in events:
        if isinstance(e, ev.Place | ev.Replaced | ev.Reinforced | ev.ReinforcementRemoved):
            out.append(e.cell)
    return tuple(out)


def line_json(line: narrate.Line) -> dict[str, Any]:
    return {"text": line.text, "tone": line.tone.value, "seat": line.seat}


@dataclass
class LiveGame:
    """One game being played or watched (see the module doc). Use it under ``lock``."""

    id: str
    token: str
    kind: str  # "play" or "watch"
    seat: int | None  # the person's seat; None when agents play every seat
    specs: tuple[str, ...]  # the agent spec of each seat, HUMAN for the person
    seed: int
    agents: dict[int, Agent]
    state: State
    encoder: ObservationEncoder
    names: tuple[str, ...]
    history: list[State] = field(default_factory=list)  # states[i]: after i actions
    actions: list[int] = field(default_factory=list)
    moves: list[Move] = field(default_factory=list)
    opening: tuple[narrate.Line, ...] = ()
    record_name: str | None = None
    generation: int = 0  # how many undos: the analysis of one generation is not another's
    lock: threading.Lock = field(default_factory=threading.Lock)
    touched: float = field(default_factory=time.monotonic)
    _narrator: narrate.Narrator | None = None
    _log_len: int = 0

    def __post_init__(self) -> None:
        self._start()

    def _start(self) -> None:
        """The game at its start: the narrator, the opening's words, the first position."""
        self._narrator = narrate.Narrator(self.names, self.state.game.deck.cards)
        log = self.state.log
        self.opening = tuple(self._narrator.lines(log))
        self._log_len = len(log)
        self.history = [self.state.clone()]
        self.actions = []
        self.moves = []

    @property
    def rules(self) -> dict[str, Any]:
        return {"num_players": self.state.n, **self.state.game.config.variants}

    @property
    def over(self) -> bool:
        return self.state.is_terminal()

    def check_token(self, token: Any) -> None:
        if not isinstance(token, str) or not secrets.compare_digest(token, self.token):
            raise Forbidden(
                f"game {self.id}: wrong or missing token; only the browser that started it may use it"
            )

    def check_seat(self, seat: Any) -> None:
        """A request that names a seat must name the person's own."""
        if seat is None:
            return
        if self.seat is None:
            raise Forbidden(f"game {self.id}: agents play every seat; no seat is yours")
        if isinstance(seat, bool) or not isinstance(seat, int) or seat != self.seat:
            raise Forbidden(
                f"seat {shown(seat)} is not yours: you play seat {self.seat} ({narrate.MARKS[self.seat]})"
            )

    # ------------------------------------------------------------------ moves

    def _apply(self, action: int, auto: bool) -> Move:
        state = self.state
        seat = state.current_player()
        text = narrate.action_words(state, action)
        public = narrate.public_move_text(state, action)
        prisons = prisons_of(state)
        before = self.history[-1]  # the state now, as kept
        why = forced_note(state, seat) if auto and seat == self.seat else None
        state.apply_action(action)
        log = state.log
        new = log[self._log_len :]
        self._log_len = len(log)
        assert self._narrator is not None
        move = Move(
            step=len(self.actions),
            seat=seat,
            text=text,
            public=public,
            auto=auto,
            lines=(*self._narrator.lines(new), *prison_lines(prisons, prisons_of(state), new)),
            cells=_changed_cells(new),
            scores=tuple(score_change(e) for e in new if isinstance(e, ev.Score)),
            revealed=revealed(before, state, seat),
            why=why,
        )
        self.actions.append(action)
        self.moves.append(move)
        self.history.append(state.clone())
        return move

    def act(self, action: Any) -> Move:
        """The person's choice. Refused (nothing changes) when it is not an action id, not the
        person's turn, or not legal now."""
        if self.seat is None:
            raise Forbidden(f"game {self.id}: agents play every seat; there is no move of yours to make")
        if isinstance(action, bool) or not isinstance(action, int):
            raise BadRequest(f"'action' must be an integer action id, not {shown(action)}")
        if not 0 <= action < NUM_ACTIONS:
            raise BadRequest(f"there is no action {action}: action ids are 0..{NUM_ACTIONS - 1}")
        if self.over:
            raise Conflict("the game is over")
        mover = self.state.current_player()
        if mover != self.seat:
            raise Conflict(f"it is not your turn: {narrate.seat_name(self.names, mover)} is to move")
        legal = self.state.legal_actions()
        if action not in legal:
            words = "; ".join(narrate.action_words(self.state, a) for a in legal[:8])
            more = f" and {len(legal) - 8} more" if len(legal) > 8 else ""
            raise Conflict(
                f"action {action} is not a legal choice now ({self.state.decision_name()}); "
                f"you may choose: {words}{more}"
            )
        try:
            return self._apply(action, auto=False)
        except IllegalActionError as exc:  # pragma: no cover - legality was checked above
            raise Conflict(str(exc)) from None

    def last_decision(self) -> int | None:
        """The step of the person's last decision that was not forced, or None: when no other seat
        has moved since and the game is on (what an undo would take back, with the forced moves
        after it)."""
        if self.seat is None or self.over:
            return None
        for move in reversed(self.moves):
            if move.seat != self.seat:
                return None
            if not move.auto:
                return move.step
        return None

    def shown_hidden(self, step: int) -> Move | None:
        """The first move from ``step`` on that showed the person something hidden (``revealed``)."""
        return next((m for m in self.moves[step:] if m.revealed), None)

    def undoable(self) -> int | None:
        """The step of the person's decision an undo would take back (``last_decision``), or None,
        also when it or a forced move after it showed the person something hidden."""
        step = self.last_decision()
        return None if step is None or self.shown_hidden(step) else step

    def undo_refusal(self) -> str | None:
        """Why the person's last decision stands although no other seat has answered it: what it
        showed them (one sentence), or None."""
        step = self.last_decision()
        move = None if step is None else self.shown_hidden(step)
        if move is None:
            return None
        return (
            f"your move '{move.text}' {move.revealed}, so it stands: an undo would let you choose "
            "again knowing what was hidden"
        )

    def handover(self) -> str | None:
        """What the person is asked to confirm before the other seats move (``words.handover_words``),
        or None: asked while their last decision can still be undone and, once their forced moves
        after it are played (on a copy), another seat is to move. The page lets the agents play
        only once it is confirmed, so undo stays open until then, whatever the pause."""
        if self.seat is None or self.over or self.waiting_for_person():
            return None
        step = self.undoable()
        if step is None:
            return None
        sim = self.state.clone()
        for _ in range(MAX_MOVES_PER_REQUEST):
            if sim.is_terminal() or sim.current_player() != self.seat or len(sim.legal_actions()) != 1:
                break
            sim.apply_action(sim.legal_actions()[0])
        if sim.is_terminal() or sim.current_player() == self.seat:
            return None  # the game ends (asked before the move), or the person chooses again
        return handover_words(self.history[step], sim, self.seat, self.names)

    def undo(self) -> int:
        """Take back the person's last decision (and their forced moves after it): the game is
        replayed from its seed without it (module doc). Returns the step it was taken at.
        Refused once another seat has moved since, when it (or a forced move after it) showed the
        person something hidden (``undo_refusal``), or the game is over (it is saved)."""
        if self.seat is None:
            raise Forbidden(f"game {self.id}: agents play every seat; there is no decision of yours to undo")
        if self.over:
            raise Conflict("the game is over and saved as a record: it cannot be undone (start a rematch)")
        refusal = self.undo_refusal()
        if refusal is not None:
            raise Conflict(refusal)
        step = self.undoable()
        if step is None:
            mine = [m for m in self.moves if m.seat == self.seat and not m.auto]
            if not mine:
                raise Conflict("you have made no decision to undo yet")
            after = next(m for m in self.moves[mine[-1].step + 1 :] if m.seat != self.seat)
            raise Conflict(
                f"{narrate.seat_name(self.names, after.seat)} has moved since your last decision: "
                "only a decision no other seat has answered can be undone"
            )
        kept = [(a, m.auto) for a, m in zip(self.actions[:step], self.moves, strict=False)]
        self.state = initial_state(self.rules, self.seed)
        self._start()
        for action, auto in kept:
            self._apply(action, auto)
        self.generation += 1
        return step

    def waiting_for_person(self) -> bool:
        """The person is to move and has a real choice."""
        return (
            not self.over
            and self.seat is not None
            and self.state.current_player() == self.seat
            and len(self.state.legal_actions()) > 1
        )

    def advance(self, limit: int = 1) -> list[Move]:
        """Up to ``limit`` moves of the agents (and the person's forced moves), stopping when the
        person has a choice to make or the game ends."""
        if self.over:
            raise Conflict("the game is over")
        if self.waiting_for_person():
            raise Conflict("it is your move: the game waits for your choice")
        out: list[Move] = []
        began = time.monotonic()
        while len(out) < limit and not self.over and not self.waiting_for_person():
            if out and time.monotonic() - began > ADVANCE_SECONDS:
                break  # the moves so far go to the browser now; the next request goes on
            state = self.state
            seat = state.current_player()
            legal = state.legal_actions()
            if len(legal) == 1:  # the person's forced moves, and an agent's
                out.append(self._apply(legal[0], auto=True))
                continue
            obs = self.encoder.encode(state, seat)
            try:
                action = operator.index(self.agents[seat].act(obs, action_mask(state), state))
            except RemoteAgentError as exc:  # a bot served elsewhere failed: nothing is applied
                raise BadGateway(str(exc)) from None
            out.append(self._apply(action, auto=False))
        return out

    # ------------------------------------------------------------------ what a seat gets

    def move_json(self, move: Move, viewer: int | None) -> dict[str, Any]:
        own = viewer is None or viewer == move.seat
        out = {
            "step": move.step,
            "seat": move.seat,
            "text": move.text if own else move.public,
            "hidden": not own and move.text != move.public,  # the public words: a kept card, a bid
            # Whether a move was the only legal choice can depend on the mover's hidden hand
            # (which favor card to play): only the mover's own moves say so.
            "auto": move.auto and own,
            "lines": [line_json(line) for line in move.lines],
            "cells": list(move.cells),
            "scores": list(move.scores),
        }
        if own and move.text != move.public:
            out["private"] = True  # the mover's own words of a move the others see less of: told
        if own and move.why:
            out["why"] = move.why
        return out

    def moves_for(self, since: int = 0) -> list[dict[str, Any]]:
        return [self.move_json(m, self.seat) for m in self.moves[since:]]

    def snapshot(self, since: int | None = None) -> dict[str, Any]:
        """The person's (or the spectator's) view now, with the moves from ``since`` on."""
        out: dict[str, Any] = {
            "id": self.id,
            "kind": self.kind,
            "seat": self.seat,
            "names": list(self.names),
            "specs": list(self.specs),
            "step": len(self.actions),
            "view": seat_view(self.state, self.seat, self.names),
            "waiting": self.waiting_for_person(),
            "over": self.over,
            "record": self.record_name,
            "generation": self.generation,
            "if_ended": score_if_ended(self.state),  # public: the engine's final scoring on a copy
        }
        if self.seat is not None:
            out["stage"] = stage_words(self.state, self.seat)
            out["hand"] = hand_progress(self.state, self.seat)  # the person's own hand only
            handover = self.handover()
            if handover is not None:
                out["handover"] = handover  # the page asks to confirm before the agents play
            out["can_undo"] = self.undoable() is not None
            refusal = self.undo_refusal()
            if refusal is not None:
                out["undo_refused"] = refusal  # the page shows its undo button disabled, saying why
            out["recap"] = recap(self.moves, self.seat, self.history, self.names)
            if out["waiting"]:
                out["notes"] = decision_notes(self.state, self.seat)
                out["warnings"] = {
                    str(a): text for a, text in consequences(self.state, self.seat, self.names).items()
                }
        if self.over:
            out["end"] = end_screen(self.state, self.names)
        if since is not None:
            out["moves"] = self.moves_for(since)
            out["positions"] = positions(self.history[since:])
            if since == 0:
                out["opening"] = [line_json(line) for line in self.opening]
                if self.seat is not None:
                    out["guide"] = guide_words()
        return out

    def record(self) -> GameRecord:
        return GameRecord.from_game(self.rules, self.seed, self.actions, self.specs, self.state)


class GameTable:
    """The live games of the server, by id, at most ``MAX_GAMES``. A new game beyond it replaces
    the least recently used finished game, else an unfinished one nobody has touched for
    ``IDLE_SECONDS``; when every game is unfinished and in use it is refused (429), so nobody's
    requests end another person's game."""

    def __init__(self, offered: Sequence[str], make_agent: Callable[[str, int], Agent], store: RecordStore):
        self.offered = tuple(offered)
        self.make_agent = make_agent
        self.store = store
        self._games: dict[str, LiveGame] = {}
        self._lock = threading.Lock()

    def peek(self, game_id: str) -> LiveGame:
        """The game ``game_id`` without its token (for what is public of it), or a 404."""
        game = self._games.get(game_id)
        if game is None:
            raise NotFound(
                f"no game {shown(game_id)} on this server (it ended with the server, or never was)"
            )
        return game

    def get(self, game_id: str, token: Any) -> LiveGame:
        game = self.peek(game_id)
        game.check_token(token)
        game.touched = time.monotonic()
        return game

    def _check_agent(self, spec: Any) -> str:
        if not isinstance(spec, str) or spec not in self.offered:
            raise BadRequest(f"unknown agent {shown(spec)}: this server offers {', '.join(self.offered)}")
        return spec

    def create(self, kind: str, body: dict[str, Any]) -> LiveGame:
        """A new game from a request body: ``play`` {players, seat, opponents, [seed]} or
        ``watch`` {agents, [seed]}."""
        if kind == "play":
            players = body.get("players")
            if isinstance(players, bool) or players not in PLAYER_COUNTS:
                raise BadRequest(f"'players' must be one of {list(PLAYER_COUNTS)}, not {shown(players)}")
            seat = body.get("seat", 0)
            if isinstance(seat, bool) or not isinstance(seat, int) or not 0 <= seat < players:
                raise BadRequest(f"'seat' must be 0..{players - 1} for {players} players, not {shown(seat)}")
            opponents = body.get("opponents")
            if not isinstance(opponents, list) or len(opponents) != players - 1:
                raise BadRequest(
                    f"'opponents' must list {players - 1} agents, one per other seat, in seat order"
                )
            specs = [self._check_agent(s) for s in opponents]
            specs.insert(seat, HUMAN)
            person: int | None = seat
        elif kind == "watch":
            agents = body.get("agents")
            if not isinstance(agents, list) or len(agents) not in PLAYER_COUNTS:
                raise BadRequest(
                    f"'agents' must list {PLAYER_COUNTS[0]}-{PLAYER_COUNTS[-1]} agents, one per seat"
                )
            specs = [self._check_agent(s) for s in agents]
            person = None
        else:  # pragma: no cover - the routes name the kind
            raise NotFound(f"no kind of game {kind!r}")
        with self._lock:  # refused before any work when there is no room (checked again below)
            if len(self._games) >= MAX_GAMES:
                self._victim()
        seed = body.get("seed")
        if seed is None:
            seed = deal_seed()  # 64 bits from the OS (players.seeds); a person's seed is 0..MAX_SEED
        elif isinstance(seed, bool) or not isinstance(seed, int) or not 0 <= seed <= MAX_SEED:
            raise BadRequest(f"'seed' must be an integer 0..{MAX_SEED} or absent, not {shown(seed)}")
        env = raw_env(num_players=len(specs))
        env.reset(seed=seed)
        state = env.game_state
        seats = [p for p in range(len(specs)) if p != person]
        agents = {p: self.make_agent(specs[p], agent_seed(seed, 0, p)) for p in seats}
        names = seat_names(specs)  # "you", a bot level's name ("Casual bot"), else its label
        game = LiveGame(
            id=secrets.token_urlsafe(9),
            token=secrets.token_urlsafe(18),
            kind=kind,
            seat=person,
            specs=tuple(specs),
            seed=seed,
            agents=agents,
            state=state,
            encoder=env.encoder,
            names=names,
        )
        with self._lock:
            if len(self._games) >= MAX_GAMES:
                self._drop_one()
            self._games[game.id] = game
        return game

    def _drop_one(self) -> None:
        """Make room for a new game (see the class doc), or refuse it with a 429."""
        del self._games[self._victim().id]

    def _victim(self) -> LiveGame:
        """The game a new one would replace (see the class doc), or a 429."""
        now = time.monotonic()
        droppable = [g for g in self._games.values() if g.over or now - g.touched >= IDLE_SECONDS]
        if not droppable:
            raise TooMany(
                f"this server holds {MAX_GAMES} unfinished games in use; finish one, or try again "
                f"when one has been left for {IDLE_SECONDS // 60} minutes"
            )
        return min(droppable, key=lambda g: (not g.over, g.touched))

    def finish(self, game: LiveGame) -> None:
        """Save a game that has just ended as a record (once)."""
        if game.over and game.record_name is None:
            stamp = dt.datetime.now().strftime("%Y%m%d-%H%M%S")
            game.record_name = self.store.save(game.record(), f"{game.kind}-{stamp}-{game.id}")
