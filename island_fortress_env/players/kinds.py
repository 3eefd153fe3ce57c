"""The registry of agent kinds: one ``KindEntry`` row per kind, all it does in one place (how its
spec is parsed, checked, labelled and made into an agent, and the seat policy it plays as in a
batch), and the public functions that look a spec's row up: ``make_agent``, ``check_agent_spec``,
``plays_in_core`` (``players.seat_policies.seat_policy`` and ``AgentSpec.label`` read the same
rows). A new kind is a new row in ``ROWS`` (and its agent class, if it is new).

    from island_fortress_env.players.kinds import make_agent
    agent = make_agent("search:8", seed=0)
"""

from __future__ import annotations

import importlib.util
from collections.abc import Callable
from pathlib import Path
from typing import Any

from island_fortress_env.agents.base import Agent, RandomAgent
from island_fortress_env.agents.checkpoint import (
    NATIVE_FORMAT,
    CheckpointAgent,
    CheckpointError,
    check_signature,
    read_metadata,
)
from island_fortress_env.agents.onnx_agent import OnnxAgent, OnnxModelError, check_onnx_model, is_onnx_path
from island_fortress_env.baseline.heuristic import HeuristicAgent
from island_fortress_env.players.ismcts import MCTSAgent
from island_fortress_env.players.mixture import MixtureAgent, read_mixture
from island_fortress_env.players.remote import RemoteAgent, check_remote
from island_fortress_env.players.runner import SeatPolicy
from island_fortress_env.players.search import SearchAgent, SearchSeats
from island_fortress_env.players.seat_policies import AgentSeats, CheckpointSeats, MixtureSeats, seat_policy
from island_fortress_env.players.specs import (
    DEFAULT_MCTS_SIMULATIONS,
    DEFAULT_SEARCH_SIMULATIONS,
    GREEDY,
    KINDS,
    SAMPLED,
    SHIPPED_POLICY,
    AgentKind,
    AgentSpec,
    AgentSpecError,
    KindEntry,
    MakeAgent,
    PlayMode,
    Spelling,
    checkpoint_name,
    file_name,
    names_a_kind,
    parse_agent_spec,
    read_remote_target,
    read_simulations,
    read_threshold,
    register_kind,
)

# --------------------------------------------------------------------------- shared by several rows


def _argument(spec: AgentSpec) -> str:
    """What follows the spec's first colon."""
    return spec.text.partition(":")[2]


def _nothing_to_check(spec: AgentSpec) -> None:
    pass


def _agent_seats(spec: AgentSpec, make: MakeAgent) -> SeatPolicy:
    """The kind's single-game agents, one per seat and game (made by ``make``)."""
    return AgentSeats(lambda seed: make(spec.text, seed), name=spec.label)


def _network_seats(spec: AgentSpec, make: MakeAgent) -> SeatPolicy:
    """A checkpoint or an ONNX model: one forward pass for all its seats, when ``make`` gives an
    agent with a batch's ``probabilities`` (``CheckpointAgent``, ``OnnxAgent``); else its agents."""
    agent = make(spec.text, None)
    if hasattr(agent, "probabilities") and hasattr(agent, "deterministic"):
        return CheckpointSeats(agent, name=spec.label)
    return _agent_seats(spec, make)


def _what(path: Path) -> str:
    if path.exists() and not path.is_dir():
        return "not a regular file"  # a named pipe, a device
    return "a directory, not a checkpoint file" if path.is_dir() else "no such file"


def _missing(spec: AgentSpec, path: Path) -> AgentSpecError:
    return AgentSpecError(f"agent {spec.text!r}: {str(path)!r} is {_what(path)}")


def _checked_metadata(path: Path) -> dict[str, Any]:
    """The metadata of a checkpoint file that fits this environment."""
    try:
        metadata = read_metadata(path)
        check_signature(path, metadata)
    except CheckpointError as error:
        raise AgentSpecError(str(error)) from None
    return metadata


def _check_onnx_file(path: Path) -> None:
    try:
        check_onnx_model(path)
    except OnnxModelError as error:
        raise AgentSpecError(str(error)) from None


# --------------------------------------------------------------------------- random, heuristic


def _word_parser(kind: AgentKind) -> Callable[[str], AgentSpec]:
    """The parser of a kind spelt by its word alone (it takes no argument)."""
    return lambda text: AgentSpec(kind, text)


# --------------------------------------------------------------------------- a checkpoint's play modes


def _parse_checkpoint(text: str) -> AgentSpec:
    return AgentSpec(AgentKind.CHECKPOINT, text, path=Path(text))


def _check_checkpoint(spec: AgentSpec) -> None:
    path = spec.path
    if path is None:
        return
    if not path.is_file():
        raise AgentSpecError(
            f"unknown agent {spec.text!r}: expected one of {AGENTS_HELP} or the path to a checkpoint "
            f"file (.zip), and {spec.text!r} is {_what(path)}"
        )
    if is_onnx_path(path):
        raise AgentSpecError(f"agent {spec.text!r}: an ONNX model plays as onnx:{spec.text}")
    _checked_metadata(path)


def _check_drawn_checkpoint(spec: AgentSpec) -> None:
    """``sample:CHECKPOINT``'s and ``threshold:P:CHECKPOINT``'s file."""
    path = spec.path
    if path is None:
        return
    if not path.is_file():
        raise _missing(spec, path)
    _checked_metadata(path)


def _make_checkpoint(spec: AgentSpec, seed: int | None) -> Agent:
    assert spec.path is not None
    return CheckpointAgent(spec.path, seed=seed)


def _parse_sample(text: str) -> AgentSpec:
    argument = text.partition(":")[2]
    if not argument or names_a_kind(argument):
        raise AgentSpecError(f"agent {text!r}: expected sample:CHECKPOINT, the path to a checkpoint file")
    if is_onnx_path(argument):
        return AgentSpec(AgentKind.ONNX, text, path=Path(argument), onnx_mode=SAMPLED)
    return AgentSpec(AgentKind.SAMPLE, text, path=Path(argument))


def _make_sample(spec: AgentSpec, seed: int | None) -> Agent:
    assert spec.path is not None
    return CheckpointAgent(spec.path, seed=seed, deterministic=False, name=f"sample:{spec.path.stem}")


def _parse_threshold(text: str) -> AgentSpec:
    threshold, path = read_threshold(text, text.partition(":")[2])
    if is_onnx_path(path):
        mode = PlayMode(threshold=threshold)
        return AgentSpec(AgentKind.ONNX, text, path=path, threshold=threshold, onnx_mode=mode)
    return AgentSpec(AgentKind.THRESHOLD, text, path=path, threshold=threshold)


def _make_threshold(spec: AgentSpec, seed: int | None) -> Agent:
    assert spec.path is not None and spec.threshold is not None
    return CheckpointAgent(
        spec.path, seed=seed, deterministic=False, name=spec.label, threshold=spec.threshold
    )


def _threshold_label(spec: AgentSpec) -> str:
    p, _, path = _argument(spec).partition(":")
    return f"{spec.kind.value}:{p}:{checkpoint_name(path)}"


def _threshold_mode(spec: AgentSpec) -> PlayMode:
    assert spec.threshold is not None
    return PlayMode(threshold=spec.threshold)


# --------------------------------------------------------------------------- onnx:FILE


def _parse_onnx(text: str) -> AgentSpec:
    argument = text.partition(":")[2]
    if not argument:
        raise AgentSpecError(f"agent {text!r}: expected onnx:FILE, a model from island-fortress export")
    return AgentSpec(AgentKind.ONNX, text, path=Path(argument))


def _check_onnx(spec: AgentSpec) -> None:
    path = spec.path
    if path is None:
        return
    if not path.is_file():
        raise _missing(spec, path)
    _check_onnx_file(path)


def _make_onnx(spec: AgentSpec, seed: int | None) -> Agent:
    assert spec.path is not None
    mode = spec.onnx_mode
    return OnnxAgent(
        spec.path, seed=seed, deterministic=mode.greedy, name=spec.label, threshold=mode.threshold
    )


def _onnx_label(spec: AgentSpec) -> str:
    model = f"{spec.kind.value}:{file_name(str(spec.path)).removesuffix('.onnx')}"
    if spec.onnx_mode.greedy:
        return model
    drawn = "sample:" if spec.threshold is None else f"threshold:{_argument(spec).partition(':')[0]}:"
    return drawn + model


# --------------------------------------------------------------------------- the search players


GUMBEL = AgentKind("gumbel")  # gumbel[:CHECKPOINT][:N], the search with Gumbel root selection


def _parse_search(text: str) -> AgentSpec:
    """``search``, ``search:N``, ``search:CHECKPOINT`` or ``search:CHECKPOINT:N`` (``gumbel`` alike)."""
    word = AgentKind(text.partition(":")[0])
    _, sep, argument = text.partition(":")
    path, simulations = SHIPPED_POLICY, ""
    if argument:
        head, colon, tail = argument.rpartition(":")
        if colon and tail.isascii() and tail.isdigit():
            path, simulations = Path(head), tail
        elif argument.isascii() and argument.isdigit():
            simulations = argument
        else:
            path = Path(argument)
    if sep and not argument:
        raise AgentSpecError(f"agent {text!r}: expected {word}[:CHECKPOINT][:N]")
    n = read_simulations(text, simulations, DEFAULT_SEARCH_SIMULATIONS)
    return AgentSpec(word, text, path=path, simulations=n)


def _check_search(spec: AgentSpec) -> None:
    """The guiding network: a native checkpoint or an ONNX model that fits this environment."""
    path = spec.path
    if path is None:
        return
    if not path.is_file():
        if not path.exists():
            raise AgentSpecError(f"agent {spec.text!r}: no checkpoint file {str(path)!r}")
        raise _missing(spec, path)
    if is_onnx_path(path):
        _check_onnx_file(path)
        return
    if _checked_metadata(path).get("format") != NATIVE_FORMAT:
        raise AgentSpecError(f"agent {spec.text!r}: search needs a native checkpoint, not an SB3 one")


def _make_search(spec: AgentSpec, seed: int | None) -> Agent:
    assert spec.path is not None and spec.simulations is not None
    return SearchAgent(spec.path, spec.simulations, seed=seed, gumbel=spec.kind is GUMBEL)


def _search_seats(spec: AgentSpec, make: MakeAgent) -> SeatPolicy:
    """Every game it is to move in searched at once (the core's batched search)."""
    assert spec.path is not None and spec.simulations is not None
    return SearchSeats(spec.path, spec.simulations, name=spec.label, gumbel=spec.kind is GUMBEL)


def _parse_mcts(text: str) -> AgentSpec:
    n = read_simulations(text, text.partition(":")[2], DEFAULT_MCTS_SIMULATIONS)
    return AgentSpec(AgentKind.MCTS, text, simulations=n)


def _check_mcts(spec: AgentSpec) -> None:
    if importlib.util.find_spec("pyspiel") is None:
        raise AgentSpecError(
            f"agent {spec.text!r} needs OpenSpiel: pip install 'island-fortress-env[openspiel]'"
        )


def _make_mcts(spec: AgentSpec, seed: int | None) -> Agent:
    assert spec.simulations is not None
    return MCTSAgent(spec.simulations, seed=seed)


# --------------------------------------------------------------------------- remote:URL


def _parse_remote(text: str) -> AgentSpec:
    return AgentSpec(AgentKind.REMOTE, text, remote=read_remote_target(text, text.partition(":")[2]))


def _check_remote(spec: AgentSpec) -> None:
    """A remote agent's fallback is an agent of this process, Pillow draws the seat's view it is
    sent, and its URL answers in the protocol (``players.remote.check_remote``)."""
    target = spec.remote
    assert target is not None
    if target.fallback is not None:
        try:
            check_agent_spec(target.fallback)
        except AgentSpecError as error:
            raise AgentSpecError(f"agent {spec.text!r}: fallback {error}") from None
    if importlib.util.find_spec("PIL") is None:
        raise AgentSpecError(
            f"agent {spec.text!r} sends its seat's view, which needs Pillow: "
            "pip install 'island-fortress-env[web]'"
        )
    check_remote(target)


def _make_remote(spec: AgentSpec, seed: int | None) -> Agent:
    target = spec.remote
    assert target is not None
    fallback = target.fallback
    make_fallback = None if fallback is None else (lambda s: make_agent(fallback, s))
    return RemoteAgent(target, seed=seed, make_fallback=make_fallback, name=spec.label)


def _remote_label(spec: AgentSpec) -> str:
    """The URL without the client's options."""
    return spec.text if spec.remote is None else f"{spec.kind.value}:{spec.remote.url}"


# --------------------------------------------------------------------------- mixture:FILE


def _parse_mixture(text: str) -> AgentSpec:
    argument = text.partition(":")[2]
    if not argument:
        raise AgentSpecError(
            f"agent {text!r}: expected mixture:FILE, FILE a JSON file of agent specs and weights"
        )
    return AgentSpec(AgentKind.MIXTURE, text, path=Path(argument))


def _check_mixture(spec: AgentSpec) -> None:
    try:
        members = read_mixture(spec.text)
    except ValueError as error:
        raise AgentSpecError(f"agent {spec.text!r}: {error}") from None
    for member in members:
        try:
            check_agent_spec(member.spec)
        except AgentSpecError as error:
            raise AgentSpecError(f"agent {spec.text!r}: member {error}") from None


def _make_mixture(spec: AgentSpec, seed: int | None) -> Agent:
    return MixtureAgent(read_mixture(spec.text), make_agent, seed=seed)


def _mixture_seats(spec: AgentSpec, make: MakeAgent) -> SeatPolicy:
    """Its members' seat policies, one drawn per game and seat."""
    members = [(m.weight, seat_policy(m.spec, make)) for m in read_mixture(spec.text)]
    return MixtureSeats(members, name=spec.label)


def _mixture_members(spec: AgentSpec) -> list[str]:
    return [member.spec for member in read_mixture(spec.text)]


# --------------------------------------------------------------------------- the rows

ROWS = (
    KindEntry(
        kind=AgentKind.RANDOM,
        syntax="random",
        parse=_word_parser(AgentKind.RANDOM),
        check=_nothing_to_check,
        make=lambda spec, seed: RandomAgent(seed=seed),
        seats=_agent_seats,
        in_core=True,
        league=True,
        spelling=Spelling.WORD,
    ),
    KindEntry(
        kind=AgentKind.HEURISTIC,
        syntax="heuristic",
        parse=_word_parser(AgentKind.HEURISTIC),
        check=_nothing_to_check,
        make=lambda spec, seed: HeuristicAgent(seed=seed),
        seats=_agent_seats,
        in_core=True,
        league=True,
        spelling=Spelling.WORD,
    ),
    KindEntry(
        kind=AgentKind.CHECKPOINT,
        syntax="a checkpoint file (greedy)",
        parse=_parse_checkpoint,
        check=_check_checkpoint,
        make=_make_checkpoint,
        seats=_network_seats,
        in_core=True,
        league=True,
        label=lambda spec: checkpoint_name(spec.text),
        play_mode=lambda spec: GREEDY,
        spelling=Spelling.PATH,
    ),
    KindEntry(
        kind=AgentKind.SAMPLE,
        syntax="sample:CHECKPOINT (its actions sampled)",
        parse=_parse_sample,
        check=_check_drawn_checkpoint,
        make=_make_sample,
        seats=_network_seats,
        in_core=True,
        league=True,
        label=lambda spec: f"{spec.kind.value}:{checkpoint_name(_argument(spec))}",
        play_mode=lambda spec: SAMPLED,
    ),
    KindEntry(
        kind=AgentKind.THRESHOLD,
        syntax="threshold:P:CHECKPOINT (sampled from its actions of probability >= P)",
        parse=_parse_threshold,
        check=_check_drawn_checkpoint,
        make=_make_threshold,
        seats=_network_seats,
        in_core=True,
        league=True,
        label=_threshold_label,
        play_mode=_threshold_mode,
    ),
    KindEntry(
        kind=AgentKind.SEARCH,
        syntax="search[:CHECKPOINT][:N]",
        parse=_parse_search,
        check=_check_search,
        make=_make_search,
        seats=_search_seats,
        in_core=True,
        league=False,
    ),
    KindEntry(
        kind=GUMBEL,
        syntax="gumbel[:CHECKPOINT][:N]",
        parse=_parse_search,
        check=_check_search,
        make=_make_search,
        seats=_search_seats,
        in_core=True,
        league=False,
    ),
    KindEntry(
        kind=AgentKind.MCTS,
        syntax="mcts[:N]",
        parse=_parse_mcts,
        check=_check_mcts,
        make=_make_mcts,
        seats=_agent_seats,
        in_core=False,
        league=False,
    ),
    # a remote bot is sent its seat's view, read off the game's state (the Python engine's)
    KindEntry(
        kind=AgentKind.REMOTE,
        syntax="remote:URL[#timeout=S&game_timeout=S&fallback=AGENT]",
        parse=_parse_remote,
        check=_check_remote,
        make=_make_remote,
        seats=_agent_seats,
        in_core=False,
        league=False,
        label=_remote_label,
    ),
    KindEntry(
        kind=AgentKind.MIXTURE,
        syntax="mixture:FILE",
        parse=_parse_mixture,
        check=_check_mixture,
        make=_make_mixture,
        seats=_mixture_seats,
        in_core=True,
        members=_mixture_members,
        league=True,
        label=lambda spec: f"{spec.kind.value}:{file_name(_argument(spec))}",
    ),
    # a league holds snapshots as weights: an ONNX opponent plays as an agent, as a search player does
    KindEntry(
        kind=AgentKind.ONNX,
        syntax="onnx:FILE (an exported network, greedy; sample:FILE.onnx and threshold:P:FILE.onnx draw)",
        parse=_parse_onnx,
        check=_check_onnx,
        make=_make_onnx,
        seats=_network_seats,
        in_core=True,
        league=False,
        label=_onnx_label,
        play_mode=lambda spec: spec.onnx_mode,
    ),
)
for _row in ROWS:
    register_kind(_row)
AGENTS_HELP = ", ".join(entry.syntax for entry in ROWS)  # every built-in kind, for --help


# --------------------------------------------------------------------------- the lookups


def check_agent_spec(spec: str | AgentSpec) -> AgentSpec:
    """The parsed spec, once its kind has checked what it needs: a checkpoint whose metadata fits
    this environment (greedy, sampled or guiding a search), an ONNX model that fits it
    (``onnx:FILE``, or guiding a search), a mixture file of such agents, OpenSpiel installed for
    ``mcts``. Anything else raises ``AgentSpecError`` with one clear sentence."""
    parsed = parse_agent_spec(spec)
    parsed.info.check(parsed)
    return parsed


def make_agent(spec: str | AgentSpec, seed: int | None = None) -> Agent:
    """The agent ``spec`` names (``AGENTS_HELP``), seeded with ``seed``: a checkpoint plays
    greedily, ``sample:CHECKPOINT`` draws its actions from the policy, ``threshold:P:CHECKPOINT``
    from its actions of probability at least P (renormalised), ``onnx:FILE`` plays an
    exported network greedily (``sample:FILE.onnx`` and ``threshold:P:FILE.onnx`` draw as a
    checkpoint does), ``mixture:FILE`` draws one member per game."""
    parsed = parse_agent_spec(spec)
    return parsed.info.make(parsed, seed)


def plays_in_core(spec: str | AgentSpec) -> bool:
    """Whether ``spec``'s agent plays from the observation and mask alone, so a batch of core
    games can seat it: random, heuristic (in C++), checkpoints, ONNX models, the batched search
    (it reads the core's states), and mixtures of those; OpenSpiel's IS-MCTS and remote bots read
    the Python engine's state."""
    parsed = parse_agent_spec(spec)
    return parsed.info.in_core and all(plays_in_core(member) for member in parsed.info.members(parsed))


__all__ = ["AGENTS_HELP", "KINDS", "ROWS", "check_agent_spec", "make_agent", "plays_in_core"]
