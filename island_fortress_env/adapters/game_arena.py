"""Island Fortress in Kaggle's Game Arena: an OpenSpiel game for kaggle-environments' OpenSpiel
runner and a ``GameHarness`` (``kaggle_environments.core_harness``) that turns it into prompts for
a language model and its replies into moves.

What the arena offers. Kaggle's Game Arena runs LLM players on OpenSpiel games through
kaggle-environments (1.33): its OpenSpiel environment (``envs/open_spiel_env``) steps a pyspiel
game and sends each seat an observation; a game's harness implements the ``GameHarness``
protocol (``get_legal_moves``, ``make_prompt``, ``parse_response``) and
``core_harness.create_agent_fn(harness)`` makes the agent that prompts the model, parses its
reply, asks again with the refusal on an illegal one, and forfeits after ``max_retries``
(OpenSpiel's invalid action, -1, the arena's convention). The PyPI packages named Game Arena are
other things: ``game-arena`` 0.1.0 is the older harness kit, ``game-arena-sdk`` 1.1 a client for
the arena's own two-player board games over a websocket; neither runs an OpenSpiel game.

Importing this module registers with pyspiel ``python_island_fortress_arena`` (the OpenSpiel
adapter's game, ``adapters.openspiel``, with the arena's observation) and with kaggle-environments
``open_spiel_island_fortress_2p``, ``_3p`` and ``_4p``::

    from island_fortress_env.adapters import game_arena

    env = game_arena.make(players=3)
    agent = game_arena.agent(model=("openai/...", {...}))   # any litellm model, or scripted_model()
    env.run([agent] * 3)

**What a seat is sent.** Each step every seat gets ``observationString``: a JSON object
(``view``) with its ``seat``, the ``players``, the seat ``to_move`` (-1 once over), ``text``
(``views.prompt.prompt(state, seat)``: everything the seat may know in words, and for the seat to
move its numbered moves and how to answer), ``moves`` (the seat to move's ``number``, action
``id`` and ``text``; none for the others) and at the end ``returns``. The same object is the
state's OpenSpiel 2.0 structured observation (``state.to_observation_struct(seat)``; an action's
is ``{"id", "text"}``, ``state.action_to_struct``). The state says it hides itself
(``hides_state_from_agents``), so the runner sends no ``serializedGameAndState``: it would
rebuild the deal. ``legalActions`` and ``legalActionStrings`` are the seat to move's (the runner's
``includeLegalActions``, on here, so its ``random`` agent plays too).

**Deals.** By default (``rng_seed`` -1) every game is dealt from 64 bits of the operating system
(``secrets``, as ``engine.rng.deal_seed`` deals). A ``rng_seed`` of 0 or more deals as the
OpenSpiel adapter does, the same games for the same seed; it is part of the configuration every
agent is given, so an agent could deal the game again: for tests and replays, never a contest.

**The harness** (``IslandFortressHarness``): ``get_legal_moves`` is ``{id: "[k] words"}`` from the
view (unique strings, the prompt's own lines), ``make_prompt`` the view's text (after a refused
reply, followed by the refusal and the reply), ``parse_response`` reads the reply as the text face
does (``[k]``, ``k``, the move's words, ``#<id>``: the whole reply, or else its last non-empty
line, where a model that reasons puts its answer).
"""

from __future__ import annotations

import json
import os
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, ClassVar

# litellm fetches its model price list from the network when first imported unless told not to:
# this module imports it, so import this module before anything that imports litellm.
os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")

import kaggle_environments
import litellm
import pyspiel
from kaggle_environments import core_harness  # re-exported: import it from here, after litellm's setting
from kaggle_environments.envs.open_spiel_env import open_spiel_env as kaggle_open_spiel

from island_fortress_env.adapters import openspiel as base
from island_fortress_env.engine.rng import deal_seed
from island_fortress_env.views.prompt import Move, ReplyError, legal_moves, parse_among, prompt

SHORT_NAME = "python_island_fortress_arena"
ENV_NAMES = {n: f"open_spiel_island_fortress_{n}p" for n in (2, 3, 4)}
PARAMETERS: dict[str, Any] = {**base.GAME_PARAMETERS, "rng_seed": -1}  # -1: deals from the OS
MAX_VIEW_CHARS = 200_000  # an observation string longer than this is refused, unread
MAX_ANSWER_CHARS = 4_000  # the part of a reply read as the answer (the whole, or its last line)

GAME_TYPE = pyspiel.GameType(
    short_name=SHORT_NAME,
    long_name="Python Island Fortress (Game Arena)",
    dynamics=base.GAME_TYPE.dynamics,
    chance_mode=base.GAME_TYPE.chance_mode,
    information=base.GAME_TYPE.information,
    utility=base.GAME_TYPE.utility,
    reward_model=base.GAME_TYPE.reward_model,
    max_num_players=base.GAME_TYPE.max_num_players,
    min_num_players=base.GAME_TYPE.min_num_players,
    provides_information_state_string=False,
    provides_information_state_tensor=False,
    provides_observation_string=True,
    provides_observation_tensor=True,
    parameter_specification=PARAMETERS,
)


def view(engine: Any, seat: int) -> dict[str, Any]:
    """What ``seat`` is sent of an engine state (module doc): its text face and, when it is to
    move, its numbered moves."""
    over = bool(engine.is_terminal())
    to_move = -1 if over else int(engine.current_player())
    moves = legal_moves(engine) if seat == to_move else []
    return {
        "game": "island_fortress",
        "seat": seat,
        "players": int(engine.n),
        "to_move": to_move,
        "text": prompt(engine, seat),
        "moves": [{"number": m.number, "id": m.action, "text": m.text} for m in moves],
        "returns": [float(r) for r in engine.returns()] if over else None,
    }


class ArenaGame(pyspiel.Game):
    """The OpenSpiel adapter's game (``self.wrapped``) with the arena's observation and deals."""

    def __init__(self, params: Mapping[str, Any] | None = None) -> None:
        params = {**PARAMETERS, **(params or {})}
        self.fixed_deals = int(params["rng_seed"]) >= 0
        self.wrapped = base.IslandFortressGame({**params, "rng_seed": max(int(params["rng_seed"]), 0)})
        info = pyspiel.GameInfo(
            num_distinct_actions=self.wrapped.num_distinct_actions(),
            max_chance_outcomes=0,
            num_players=self.wrapped.num_players(),
            min_utility=self.wrapped.min_utility(),
            max_utility=self.wrapped.max_utility(),
            utility_sum=0.0,
            max_game_length=self.wrapped.max_game_length(),
        )
        super().__init__(GAME_TYPE, info, params)

    def new_initial_state(self) -> ArenaState:
        if self.fixed_deals:
            return ArenaState(self, self.wrapped.new_initial_state())
        engine = self.wrapped.engine_game.new_initial_state(deal_seed())
        return ArenaState(self, base.state_from_engine(self.wrapped, engine))

    def make_py_observer(
        self, iig_obs_type: pyspiel.IIGObservationType | None = None, params: dict | None = None
    ) -> ArenaObserver:
        return ArenaObserver(self.wrapped.make_py_observer(iig_obs_type, params))


class ArenaState(pyspiel.State):
    """A state of the OpenSpiel adapter (``self.wrapped``) seen through ``view``."""

    def __init__(self, game: ArenaGame, wrapped: base.IslandFortressState) -> None:
        super().__init__(game)
        self.wrapped = wrapped

    @property
    def engine(self) -> Any:
        return self.wrapped.engine

    def current_player(self) -> int:
        return self.wrapped.current_player()

    def _legal_actions(self, player: int) -> list[int]:
        return self.wrapped.legal_actions(player)

    def _apply_action(self, action: int) -> None:
        self.wrapped.apply_action(action)

    def _action_to_string(self, player: int, action: int) -> str:
        return self.wrapped.action_to_string(player, action)

    def is_terminal(self) -> bool:
        return self.wrapped.is_terminal()

    def returns(self) -> list[float]:
        return self.wrapped.returns()

    def hides_state_from_agents(self) -> bool:
        """The runner's hook: send no ``serializedGameAndState`` (it rebuilds the deal)."""
        return True

    def view(self, player: int) -> dict[str, Any]:
        return view(self.engine, player)

    # OpenSpiel 2.0's structured observations and actions, as a Python game offers them.
    def _to_observation_struct(self, player: int) -> dict[str, Any]:
        return self.view(player)

    def _action_to_struct(self, player: int, action: int) -> dict[str, Any]:
        for move in legal_moves(self.engine):
            if move.action == action:
                return {"id": action, "text": move.text}
        return {"id": action, "text": self.wrapped.action_to_string(player, action)}

    def _struct_to_actions(self, struct: Mapping[str, Any]) -> list[int]:
        action = struct.get("id") if isinstance(struct, Mapping) else None
        if isinstance(action, bool) or not isinstance(action, int):
            raise ValueError(f"an action struct is {{'id': <action id>}}, not {struct!r:.200}")
        return [action]

    def __str__(self) -> str:
        return str(self.wrapped)  # the spectator's board (the runner's replay log, not an agent's)


class ArenaObserver:
    """OpenSpiel's ``PyObserver``: the adapter's tensor, and ``view`` as the string."""

    def __init__(self, inner: Any) -> None:
        self._inner = inner
        self.tensor = inner.tensor
        self.dict = inner.dict

    def set_from(self, state: ArenaState, player: int) -> None:
        self._inner.set_from(state.wrapped, player)

    def string_from(self, state: ArenaState, player: int) -> str:
        return json.dumps(state.view(player))


pyspiel.register_game(GAME_TYPE, ArenaGame)


@dataclass(frozen=True)
class View:
    """An observation as the harness reads it (``read_view``)."""

    seat: int
    to_move: int
    text: str
    moves: tuple[Move, ...]


def _fail(why: str) -> ValueError:
    return ValueError(f"not an Island Fortress arena observation: {why}")


def read_view(observation: Mapping[str, Any]) -> View:
    """The view in a runner's observation, checked (one ``ValueError`` naming what is wrong)."""
    raw = observation.get("observationString") if isinstance(observation, Mapping) else None
    if not isinstance(raw, str):
        raise _fail("it has no observationString")
    if len(raw) > MAX_VIEW_CHARS:
        raise _fail(f"its observationString is over {MAX_VIEW_CHARS} characters")
    try:
        data = json.loads(raw)
    except json.JSONDecodeError as error:
        raise _fail(f"its observationString is not JSON ({error.msg})") from None
    if not isinstance(data, dict) or data.get("game") != "island_fortress":
        raise _fail("its observationString is not this game's view")
    seat, to_move, text, moves = data.get("seat"), data.get("to_move"), data.get("text"), data.get("moves")
    if not (_is_int(seat) and _is_int(to_move) and isinstance(text, str) and isinstance(moves, list)):
        raise _fail("its seat, to_move, text or moves is missing or of the wrong type")
    assert isinstance(seat, int) and isinstance(to_move, int)
    read = []
    for k, move in enumerate(moves, start=1):
        if not (isinstance(move, dict) and move.get("number") == k and _is_int(move.get("id"))):
            raise _fail(f"its move {k} is not {{number: {k}, id, text}}")
        if not isinstance(move.get("text"), str):
            raise _fail(f"its move {k} has no text")
        read.append(Move(k, move["id"], move["text"]))
    return View(seat, to_move, text, tuple(read))


def _is_int(value: Any) -> bool:
    return isinstance(value, int) and not isinstance(value, bool)


def move_string(move: Move) -> str:
    """A move as the harness lists it: the prompt's own line, ``[k] words`` (unique)."""
    return f"[{move.number}] {move.text}"


def choose(moves: Sequence[Move], reply: str) -> Move:
    """The move ``reply`` names among ``moves``, read as ``views.prompt.parse_reply`` reads a
    reply ("[k]", "k", the move's words, "#<id>"), first the whole reply and then its last
    non-empty line; ``ReplyError`` (saying how to answer) if it names none."""
    if not moves:
        raise ReplyError("there is no move to make")
    lines = [line.strip() for line in reply.splitlines() if line.strip()]
    answers = [reply.strip()] + ([lines[-1]] if len(lines) > 1 else [])
    for answer in answers:
        if len(answer) <= MAX_ANSWER_CHARS:
            found = _named(moves, answer)
            if found is not None:
                return found
    last, first = moves[-1].number, moves[0].number
    said = (lines[-1] if lines else "")[:80]
    raise ReplyError(
        f"the reply {said!r} names no legal move: answer with a move's number in brackets from "
        f"[{first}] to [{last}], or its words as listed, on the last line"
    )


def _named(moves: Sequence[Move], answer: str) -> Move | None:
    try:
        action = parse_among(moves, answer)
    except ReplyError:
        return None
    return next(m for m in moves if m.action == action)


class IslandFortressHarness:
    """Kaggle's ``GameHarness`` for the arena game (module doc)."""

    def get_legal_moves(self, observation: Mapping[str, Any]) -> dict[int, str]:
        """The seat to move's moves; none for an observation the runner has not filled yet (its
        first probe) or for another seat."""
        if not observation.get("observationString"):
            return {}
        return {m.action: move_string(m) for m in read_view(observation).moves}

    def make_prompt(
        self,
        observation: Mapping[str, Any],
        move_history: list[str],
        previous_response: str | None = None,
        previous_action: str | None = None,
    ) -> str:
        """The seat's text; after a refused reply, the refusal too. ``move_history`` (the seat's
        own moves) is not repeated: the text tells what happened since the seat's last move."""
        current = read_view(observation)
        if previous_response is None:
            return current.text
        try:
            choose(current.moves, previous_response)
            why = "it was not understood"
        except ReplyError as error:
            why = str(error)
        tail = previous_response.strip()[-500:]
        return f"{current.text}\n\nYour previous reply was refused: {why}.\nIt ended: {tail}"

    def parse_response(
        self,
        response: str,
        legal_action_strings: Sequence[str] | None,
        *,
        observation: Mapping[str, Any] | None = None,
    ) -> core_harness.ParseResult:
        if observation is not None:
            moves = read_view(observation).moves
        else:  # the listed strings alone: "[k] words", in order
            moves = tuple(
                Move(k, k, s.split("] ", 1)[-1]) for k, s in enumerate(legal_action_strings or (), 1)
            )
        lines = [line.strip() for line in response.splitlines() if line.strip()]
        raw = lines[-1][:MAX_ANSWER_CHARS] if lines else None
        try:
            move = choose(moves, response)
        except ReplyError:
            return core_harness.ParseResult(legal_action=None, raw_action=raw)
        return core_harness.ParseResult(legal_action=move_string(move), raw_action=raw)


HARNESS = IslandFortressHarness()


def _spec(players: int) -> dict[str, Any]:
    built = kaggle_open_spiel._build_env(f"{SHORT_NAME}(players={players})")
    spec = built["specification"]
    spec["name"] = ENV_NAMES[players]
    spec["title"] = f"Island Fortress, {players} players"
    spec["description"] = (
        "Island Fortress (adapters.game_arena): the OpenSpiel game with the text face's views."
    )
    spec["configuration"]["includeLegalActions"]["default"] = True
    return built


for _players in ENV_NAMES:
    kaggle_environments.register(ENV_NAMES[_players], _spec(_players))


def make(
    players: int = 3,
    rng_seed: int | None = None,
    options: Mapping[str, Any] | None = None,
    **configuration: Any,
) -> Any:
    """kaggle-environments' environment for a ``players``-seat game (``kaggle_environments.make``,
    its OpenSpiel runner): ``options`` are the game's (``adapters.openspiel``'s parameters),
    ``rng_seed`` deals reproducibly (module doc: not for contests), ``configuration`` the
    runner's (``debug=True`` is ``make``'s own)."""
    if players not in ENV_NAMES:
        raise ValueError(f"players must be 2, 3 or 4, not {players!r}")
    parameters = dict(options or {})
    allowed = sorted(set(PARAMETERS) - {"players", "rng_seed"})
    unknown = sorted(set(parameters) - set(allowed))
    if unknown:
        raise ValueError(f"unknown game option(s) {unknown}; the options are {allowed}")
    debug = bool(configuration.pop("debug", False))
    if rng_seed is not None:
        parameters["rng_seed"] = int(rng_seed)
    if parameters:
        configuration["openSpielGameParameters"] = parameters
    return kaggle_environments.make(ENV_NAMES[players], configuration=configuration, debug=debug)


class _Scripted(litellm.CustomLLM):
    """A litellm provider whose models are Python functions of the prompt (``scripted_model``)."""

    answers: ClassVar[dict[str, Callable[[str], str]]] = {}

    def streaming(self, model: str, messages: list, *args: Any, **kwargs: Any) -> Iterator[Any]:
        answer = self.answers[model.split("/", 1)[-1]](str(messages[-1]["content"]))
        usage = {"prompt_tokens": 0, "completion_tokens": 0, "total_tokens": 0}
        yield {
            "text": answer,
            "is_finished": True,
            "finish_reason": "stop",
            "usage": usage,
            "index": 0,
            "tool_use": None,
        }


SCRIPTED_PROVIDER = "island_fortress_scripted"


def scripted_model(name: str, answer: Callable[[str], str]) -> tuple[str, dict[str, Any]]:
    """A model that stands in for a language model: ``answer(prompt)`` gives its reply. Reached
    through litellm like any model (a custom provider, nothing downloaded or sent); the pair is
    ``create_agent_fn``'s ``model_override``."""
    if not any(entry.get("provider") == SCRIPTED_PROVIDER for entry in litellm.custom_provider_map):
        litellm.custom_provider_map.append({"provider": SCRIPTED_PROVIDER, "custom_handler": _Scripted()})
    _Scripted.answers[name] = answer
    return f"{SCRIPTED_PROVIDER}/{name}", {}


def agent(
    model: tuple[str, dict[str, Any]] | None = None, max_retries: int = 2
) -> Callable[..., dict[str, Any]]:
    """The arena's agent for this game: ``create_agent_fn`` over ``HARNESS`` with ``model``
    (litellm's name and keyword arguments; None: the ``MODEL_NAME`` and proxy variables the arena
    reads), asking up to ``max_retries`` times before it forfeits."""
    return core_harness.create_agent_fn(HARNESS, max_retries=max_retries, model_override=model)
