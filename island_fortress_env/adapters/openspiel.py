"""Island Fortress as an OpenSpiel Python game: ``import island_fortress_env.openspiel``.

Importing this module registers ``python_island_fortress`` with pyspiel, as OpenSpiel's own
Python games register themselves::

    import pyspiel
    import island_fortress_env.openspiel  # noqa: F401  (registers the game)

    game = pyspiel.load_game("python_island_fortress", {"players": 4, "favor_trade_in": True})
    state = game.new_initial_state()

Parameters: ``players`` (2-4, default 3), every option of ``GameConfig`` under its own name and
with its default (``no_replace``, ``extra_jade`` ...; "" for an option whose default is None:
``first_round_incentive`` "" for none, ``favor_deck`` "" for the shipped deck), ``rng_seed`` and ``backend``
(``"core"`` for the C++ core, ``"python"`` for the Python engine, "" for the default: the core where
it is built; both play the same games).

**Chance: carried by the state.** The deck shuffles, the order of unkept cards and the round-1
petition tie-breaks are drawn inside the rules engine from the state's own SplitMix64 generator
(docs/RULES.md E24), part of the state like its hidden cards: a state and the actions applied to
it fix its future. So no state is a chance node and the game type is
``ChanceMode.DETERMINISTIC``; what is random is the deal, drawn when a game's first state is first
used: its seed comes from the ``pyspiel.Game``'s generator, seeded by ``rng_seed``, so a run that
loads the game with the same ``rng_seed`` replays the same deals. (OpenSpiel 2.0 cannot save a
Python game of type ``SAMPLED_STOCHASTIC``: its ``Game::Serialize`` asks the game for
``GetRNGState``, which a Python game cannot provide.) ``state.clone()`` copies the engine state
with its generator: a clone's future draws are the original's. An algorithm that searches a
cloned state therefore knows the future deck order; use ``resample_from_infostate`` (below) to
search what a player may know instead.

**Saving states.** ``pyspiel.serialize_game_and_state(game, state)`` saves a state and
``pyspiel.deserialize_game_and_state(text)`` gives it back equal: the same observations for every
player, legal actions, history, text and future (generator and hidden cards included;
``random_sim_test(serialize=True)`` passes). A state is saved as its record: its first state's
seed and its steps (actions and redeals), replayed on loading (``adapters.saved_states``).
OpenSpiel's own ``deserialize_game_and_state`` unpickles the Python attributes of a state, so it
runs whatever a pickle in the text says (and gives the game string to pyspiel's parser, which
recurses once per nesting level): load with it only texts you made. For a text from elsewhere,
``deserialize_game_and_state`` of this module reads the same format without unpickling anything
(the bounded parser, the exact shape this game writes; the game string parsed by
``saved_states.parse_game_string``, flat and bounded, and the game built from its parameters) and
replays the record with every step checked: a bad text is one ``SavedStateError``.
``game.deserialize_state(text)`` (the ``[State]`` section alone) is this game's own: the same
checked reader, never pyspiel's, which unpickles. The generator of deal seeds belongs to the
game object, not to a state: a loaded game starts it again from ``rng_seed``. A state made by
``state_from_engine`` has no record (its position is taken as it is) and cannot be saved.

**What a player sees.** ``observation_tensor(player)`` is the environment's observation (the
seat-relative float32 vector of ``OBS_SIZE`` described in the README, hidden information
excluded) and ``observation_string(player)`` a short public summary followed by a digest of that
vector (two states give equal strings exactly when the player's observations are equal). There
is no information-state tensor or string (``provides_information_state_* = False``): a
perfect-recall information state over games of several hundred decisions is not a fixed-size
tensor. Algorithms that need one (the CFR family, or OpenSpiel's ``rl_environment`` with
``INFORMATION_STATE``) do not apply; those that take observations (``rl_environment`` with
``ObservationType.OBSERVATION``, IS-MCTS with ``use_observation_string=True``) do.

**Resampling.** ``state.resample_from_infostate(player, sampler)`` returns a state that the
player cannot tell apart from this one, redealt by the engine (``engine.visibility.redeal_unseen``):
the favor cards the player cannot see (the other hands, the cards others are choosing from, the
deck) are dealt again uniformly in the same counts, other players' sealed bids are drawn again
uniformly from their legal bids, and the engine's generator is reseeded. It forgets some
things the player could know (which unkept cards went under the deck), never adds any.
OpenSpiel's IS-MCTS (``ISMCTSBot``) calls it before every simulation; the ``mcts`` agent
(``island_fortress_env.players.ismcts``) is built on it.

Returns are the environment's ``win_loss`` rewards (zero-sum; a sole winner +1, each loser
-1/(n-1), tied winners share). Action ids, names and legality are the environment's.
"""

from __future__ import annotations

import hashlib
from collections.abc import Iterable
from typing import Any

import numpy as np
import pyspiel

from island_fortress_env.adapters.saved_states import DEFAULT_PLAYERS as DEFAULT_PLAYERS  # read from here too
from island_fortress_env.adapters.saved_states import (
    GAME_PARAMETERS,
    SHORT_NAME,
    Record,
    SavedState,
    SavedStateError,
    Step,
    game_config,
    parse_record,
    read_serialized,
    read_state,
    record_text,
)
from island_fortress_env.core import Game
from island_fortress_env.engine import NUM_ACTIONS, tables
from island_fortress_env.engine import State as EngineState
from island_fortress_env.engine.state import IllegalActionError
from island_fortress_env.engine.visibility import redeal_unseen
from island_fortress_env.env.observation import OBS_SIZE, ObservationEncoder
from island_fortress_env.views.text import render_text

# An upper bound on the decisions in one game (OpenSpiel's random simulation test checks it).
# The rules bound the rounds (one Governor block leaves the stockpile per round) but not the
# decisions of a turn, so these are measured, not derived: over four times the longest of 300
# random games per table size, half of them with the most resource-rich variants (256, 369 and
# 448 decisions for 2, 3 and 4 players); a test plays random games against half of them.
MAX_GAME_LENGTH = {2: 1000, 3: 1500, 4: 2000}

GAME_TYPE = pyspiel.GameType(
    short_name=SHORT_NAME,
    long_name="Python Island Fortress",
    dynamics=pyspiel.GameType.Dynamics.SEQUENTIAL,
    chance_mode=pyspiel.GameType.ChanceMode.DETERMINISTIC,  # chance is in the state (module doc)
    information=pyspiel.GameType.Information.IMPERFECT_INFORMATION,
    utility=pyspiel.GameType.Utility.ZERO_SUM,
    reward_model=pyspiel.GameType.RewardModel.TERMINAL,
    max_num_players=tables.MAX_PLAYERS,
    min_num_players=tables.MIN_PLAYERS,
    provides_information_state_string=False,
    provides_information_state_tensor=False,
    provides_observation_string=True,
    provides_observation_tensor=True,
    parameter_specification=GAME_PARAMETERS,
)


class IslandFortressGame(pyspiel.Game):
    """The pyspiel game: a validated engine ``Game`` plus the generator of game seeds."""

    def __init__(self, params: dict[str, Any] | None = None) -> None:
        params = {**GAME_PARAMETERS, **(params or {})}
        self.engine_game = Game(game_config(params), backend=params["backend"] or None)
        n = self.engine_game.num_players
        info = pyspiel.GameInfo(
            num_distinct_actions=NUM_ACTIONS,
            max_chance_outcomes=0,
            num_players=n,
            min_utility=-1.0 / (n - 1),  # a loser's share (docs/RULES.md E23)
            max_utility=1.0,
            utility_sum=0.0,
            max_game_length=MAX_GAME_LENGTH[n],
        )
        super().__init__(GAME_TYPE, info, params)
        self._seeds = np.random.default_rng(int(params["rng_seed"]))
        self.encoder = ObservationEncoder(self.engine_game)

    def next_game_seed(self) -> int:
        return int(self._seeds.integers(0, 2**63 - 1))

    def new_initial_state(self) -> IslandFortressState:
        return IslandFortressState(self)

    def deserialize_state(self, text: str) -> IslandFortressState:
        """A state of this game from its text (``state.serialize()``), read by the checked reader
        (``saved_states.read_state``: nothing is unpickled) and its record replayed with every step
        checked. Replaces pyspiel's ``Game.deserialize_state``, which unpickles the text's
        ``__dict__=``. A bad text is one ``SavedStateError``."""
        return _checked_state(self, read_state(text))

    def make_py_observer(
        self, iig_obs_type: pyspiel.IIGObservationType | None = None, params: dict | None = None
    ) -> IslandFortressObserver:
        return IslandFortressObserver(self, iig_obs_type, params)


_Steps = tuple[Any, Step] | None  # the steps since the first state, newest first: (earlier, step)


class _Deal:
    """The engine state of one pyspiel state, created on first use, and its record: the seed of
    its first state and the steps since (``steps``, shared with the clones it was copied to).

    pyspiel clones a Python state by making a new initial state and deep-copying the original's
    attributes over it: creating the engine state lazily keeps those throwaway initial states
    from drawing game seeds, and ``__deepcopy__`` copies the engine state with ``clone()``
    (flat lists; the engine ``Game`` is shared, not copied). OpenSpiel saves a state by pickling
    its attributes: ``__reduce__`` pickles the record alone, as a call of ``_saved_deal``.
    ``seed`` is None for a position taken as it is (``state_from_engine``): it has no record.
    """

    __slots__ = ("engine", "game", "seed", "steps")

    def __init__(
        self,
        game: IslandFortressGame,
        engine: EngineState | None = None,
        seed: int | None = None,
        steps: _Steps = None,
    ) -> None:
        self.game = game
        self.engine = engine
        self.seed = seed
        self.steps = steps

    def get(self) -> EngineState:
        if self.engine is None:
            self.seed = self.game.next_game_seed()
            self.engine = self.game.engine_game.new_initial_state(self.seed)
        return self.engine

    def add(self, step: Step) -> None:
        self.steps = (self.steps, step)

    def step_list(self) -> list[Step]:
        steps: list[Step] = []
        link = self.steps
        while link is not None:
            link, step = link
            steps.append(step)
        steps.reverse()
        return steps

    def record(self) -> str:
        self.get()
        if self.seed is None:
            raise SavedStateError(
                "this state was made from an engine position (state_from_engine) and has no record "
                "of how it was reached, so it cannot be saved"
            )
        return record_text(self.game.engine_game.config.to_dict(), self.seed, self.step_list())

    def __deepcopy__(self, memo: dict) -> _Deal:
        engine = self.get().clone()
        return _Deal(self.game, engine, self.seed, self.steps)

    def __reduce__(self) -> tuple[Any, ...]:
        return (_saved_deal, (self.record(),))


class _SavedDeal:
    """A record read back by OpenSpiel's deserialization (``_saved_deal``), replayed when it is
    set on the state being made (``IslandFortressState._deal``)."""

    __slots__ = ("record",)

    def __init__(self, record: Record) -> None:
        self.record = record


def _saved_deal(text: str) -> _SavedDeal:
    """What ``_Deal.__reduce__`` pickles: the record, checked (``SavedStateError``)."""
    return _SavedDeal(parse_record(text))


def _replay(game: IslandFortressGame, record: Record) -> tuple[_Deal, list[tuple[int, int]]]:
    """The deal ``record`` makes in ``game``, every step checked (``SavedStateError``), and its
    moves: (player, action) for each action, as OpenSpiel's history has them."""
    if record.config != game.engine_game.config.to_dict():
        raise SavedStateError(
            f"the record is of a game configured {record.config}, not this game's "
            f"{game.engine_game.config.to_dict()}"
        )
    deal = _Deal(game, game.engine_game.new_initial_state(record.seed), record.seed)
    moves = []
    for i, step in enumerate(record.steps):
        engine = deal.get()
        if isinstance(step, int) and not engine.is_terminal():
            moves.append((engine.current_player(), step))
        deal.engine = _replayed(engine, step, i)
        deal.add(step)
    return deal, moves


def _replayed(engine: EngineState, step: Step, i: int) -> EngineState:
    """``engine`` after ``step`` (changed in place for an action)."""
    if isinstance(step, int):
        try:
            engine.apply_action(step)
        except IllegalActionError as error:
            raise SavedStateError(f"step {i} of the record: {error}") from None
        return engine
    seat, seed = step
    if seat >= engine.n:
        raise SavedStateError(f"step {i} of the record redeals for seat {seat} of a {engine.n}-player game")
    return redeal_unseen(engine, seat, seed)


class IslandFortressState(pyspiel.State):
    """A pyspiel state over one engine ``State`` (``state.engine``)."""

    def __init__(self, game: IslandFortressGame) -> None:
        super().__init__(game)
        self._deal = _Deal(game)

    @property
    def _deal(self) -> _Deal:
        return self.__dict__["_deal"]

    @_deal.setter
    def _deal(self, deal: _Deal | _SavedDeal) -> None:
        """Set by this module, by pyspiel's clone (a deep copy) and by OpenSpiel's deserialization
        (a record read back: replayed here and checked against the history OpenSpiel read)."""
        if isinstance(deal, _SavedDeal):
            deal, moves = _replay(self.__dict__["_deal"].game, deal.record)
            history = [(item.player, item.action) for item in self.full_history()]
            if moves != history or self.move_number() != len(moves):
                raise SavedStateError("the record's actions are not the history OpenSpiel read")
        self.__dict__["_deal"] = deal

    @property
    def engine(self) -> EngineState:
        """The rules engine's state (hidden information included)."""
        deal = self._deal
        if deal.engine is None and self.move_number():  # a deal is drawn for a first state only
            raise SavedStateError("this state has a history but no record of its deal (saved without it?)")
        return deal.get()

    def current_player(self) -> int:
        engine = self.engine
        return pyspiel.PlayerId.TERMINAL if engine.is_terminal() else engine.current_player()

    def _legal_actions(self, player: int) -> list[int]:
        engine = self.engine
        if engine.is_terminal() or player != engine.current_player():
            return []
        return list(engine.legal_actions())

    def _apply_action(self, action: int) -> None:
        action = int(action)
        self.engine.apply_action(action)
        self._deal.add(action)

    def _action_to_string(self, player: int, action: int) -> str:
        return self.engine.action_to_string(action)

    def is_terminal(self) -> bool:
        return self.engine.is_terminal()

    def returns(self) -> list[float]:
        return list(self.engine.returns())

    def resample_from_infostate(self, player: int, sampler: Any) -> IslandFortressState:
        """A state ``player`` cannot tell from this one (see the module doc), with the draws
        seeded by one value of ``sampler`` (a pyspiel probability sampler, a callable giving
        floats in [0, 1))."""
        return self.resampled(player, np.random.default_rng(int(sampler() * 2**53)))

    def resampled(self, player: int, draw: np.random.Generator) -> IslandFortressState:
        """``resample_from_infostate`` with the redeal seeded by one value of ``draw`` (the
        engine's ``visibility.redeal_unseen`` does the redeal)."""
        other = self.clone()
        seed = int(draw.integers(0, 2**63 - 1))
        deal = self._deal
        redealt = redeal_unseen(deal.get(), player, seed)
        other._deal = _Deal(deal.game, redealt, deal.seed, (deal.steps, (player, seed)))
        return other

    def __str__(self) -> str:
        return render_text(self.engine)


def deserialize_game_and_state(
    text: str, favor_decks: Iterable[str] = ()
) -> tuple[IslandFortressGame, IslandFortressState]:
    """``pyspiel.deserialize_game_and_state`` for this game without unpickling anything: the text
    is read by ``saved_states.read_serialized`` (the game string parsed there, never by pyspiel),
    the game built from the parsed parameters, the record replayed through ``apply_action`` with
    every step checked, and the history and move number compared with the text's. A game string
    may name a favor deck file only if it is one of ``favor_decks``. A bad text raises one
    ``SavedStateError``."""
    saved = read_serialized(text, favor_decks)
    try:
        game = IslandFortressGame(saved.parameters)
    except (pyspiel.SpielError, ValueError) as error:  # a ConfigError, a deck file's DeckError
        raise SavedStateError(f"the game string cannot be loaded: {error}") from None
    return game, _checked_state(game, saved.state)


def _checked_state(game: IslandFortressGame, saved: SavedState) -> IslandFortressState:
    """The state ``saved`` records in ``game``, every step checked (``SavedStateError``)."""
    record = saved.record
    state = IslandFortressState(game)
    state._deal, _ = _replay(game, Record(record.config, record.seed, ()))
    for i, step in enumerate(record.steps):
        if isinstance(step, int):
            if step not in state.legal_actions():
                _replayed(state.engine.clone(), step, i)  # raises SavedStateError naming the step
            state.apply_action(step)
        else:
            deal = state._deal
            deal.engine = _replayed(deal.get(), step, i)
            deal.add(step)
    history = tuple((item.player, item.action) for item in state.full_history())
    if history != saved.history or state.move_number() != saved.move_number:
        raise SavedStateError("the record's actions are not the text's history= and move_number=")
    return state


def state_from_engine(game: IslandFortressGame, engine: EngineState) -> IslandFortressState:
    """A pyspiel state over a copy of ``engine`` (a state of ``game``'s configuration), e.g. to
    search from a position of a game played through the PettingZoo environment. Its pyspiel
    history is empty: the position is taken as it is."""
    if engine.cfg != game.engine_game.config:
        raise ValueError(f"the engine state's configuration {engine.cfg} is not the game's")
    state = game.new_initial_state()
    state._deal = _Deal(game, engine.clone())
    return state


class IslandFortressObserver:
    """OpenSpiel's ``PyObserver``: the environment's observation of one seat."""

    def __init__(
        self, game: IslandFortressGame, iig_obs_type: pyspiel.IIGObservationType | None, params: Any
    ) -> None:
        if params:
            raise ValueError(f"observation parameters are not supported; got {params}")
        if iig_obs_type is not None and (
            iig_obs_type.perfect_recall
            or not iig_obs_type.public_info
            or iig_obs_type.private_info != pyspiel.PrivateInfoType.SINGLE_PLAYER
        ):
            raise ValueError(
                "python_island_fortress offers one observation: a seat's own view without perfect "
                "recall (public information plus that seat's private information)"
            )
        self._encoder = game.encoder
        self.tensor = np.zeros(OBS_SIZE, np.float32)
        self.dict = {"observation": self.tensor}

    def set_from(self, state: IslandFortressState, player: int) -> None:
        self.tensor[:] = self._encoder.encode(state.engine, player)

    def string_from(self, state: IslandFortressState, player: int) -> str:
        engine = state.engine
        digest = hashlib.blake2b(self._encoder.encode(engine, player).tobytes(), digest_size=12)
        mover = "over" if engine.is_terminal() else f"p{engine.current_player()} {engine.decision_name()}"
        public = f"seat {player}; round {engine.round}; to move: {mover}; scores {engine.score}"
        return f"{public}; {digest.hexdigest()}"


pyspiel.register_game(GAME_TYPE, IslandFortressGame)
