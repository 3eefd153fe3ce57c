"""Every agent an agent spec names: ``random``, ``heuristic``, a checkpoint file (greedy; as
``sample:CHECKPOINT`` its actions drawn from the policy, as ``threshold:P:CHECKPOINT`` drawn from
its actions of probability at least P), an exported network (``onnx:FILE``,
played by onnxruntime without torch: ``agents.onnx_agent``), the search players built on an adapter
(``mcts[:N]``, OpenSpiel's IS-MCTS over the OpenSpiel game) and mixtures of them
(``mixture:FILE``, one member drawn per game: ``players/mixture.py``). A bot served over HTTP
plays as ``remote:URL`` (``players/remote.py``, docs/BOT-PROTOCOL.md).

    from island_fortress_env.players import make_agent
    agent = make_agent("heuristic", seed=0)
"""

from __future__ import annotations

import importlib.util
from pathlib import Path

from island_fortress_env.agents.base import Agent, RandomAgent
from island_fortress_env.agents.checkpoint import (
    NATIVE_FORMAT,
    CheckpointAgent,
    CheckpointError,
    check_signature,
    read_metadata,
)
from island_fortress_env.agents.heuristic import HeuristicAgent
from island_fortress_env.agents.onnx_agent import OnnxAgent, OnnxModelError, check_onnx_model, is_onnx_path
from island_fortress_env.players.ismcts import MCTSAgent
from island_fortress_env.players.mixture import MixtureAgent, read_mixture
from island_fortress_env.players.remote import RemoteAgent, RemoteAgentError, check_remote
from island_fortress_env.players.search import SearchAgent
from island_fortress_env.players.specs import (
    AGENTS_HELP,
    KINDS,
    AgentKind,
    AgentSpec,
    AgentSpecError,
    parse_agent_spec,
    spec_labels,
)


def _no_file(spec: AgentSpec, path: Path) -> AgentSpecError:
    what = "a directory, not a checkpoint file" if path.is_dir() else "no such file"
    if path.exists() and not path.is_dir():
        what = "not a regular file"  # a named pipe, a device
    if spec.kind is AgentKind.CHECKPOINT:
        return AgentSpecError(
            f"unknown agent {spec.text!r}: expected one of {AGENTS_HELP} or the path to a checkpoint "
            f"file (.zip), and {spec.text!r} is {what}"
        )
    return AgentSpecError(f"agent {spec.text!r}: {str(path)!r} is {what}")


def _check_checkpoint(spec: AgentSpec, path: Path, native_only: bool = False) -> None:
    """The checkpoint file of ``spec`` exists and fits this environment (a native one, with
    ``native_only``); an ONNX model for ``onnx:FILE`` and a search's ``FILE.onnx``."""
    if not path.is_file():
        if spec.kind is AgentKind.SEARCH and not path.exists():
            raise AgentSpecError(f"agent {spec.text!r}: no checkpoint file {str(path)!r}")
        raise _no_file(spec, path)
    if spec.kind is AgentKind.ONNX or (spec.kind is AgentKind.SEARCH and is_onnx_path(path)):
        try:
            check_onnx_model(path)
        except OnnxModelError as error:
            raise AgentSpecError(str(error)) from None
        return
    if spec.kind is AgentKind.CHECKPOINT and is_onnx_path(path):
        raise AgentSpecError(f"agent {spec.text!r}: an ONNX model plays as onnx:{spec.text}")
    try:
        metadata = read_metadata(path)
        check_signature(path, metadata)
    except CheckpointError as error:
        raise AgentSpecError(str(error)) from None
    if native_only and metadata.get("format") != NATIVE_FORMAT:
        raise AgentSpecError(f"agent {spec.text!r}: search needs a native checkpoint, not an SB3 one")


def check_agent_spec(spec: str | AgentSpec) -> AgentSpec:
    """The parsed spec, once its files are checked: a checkpoint whose metadata fits this
    environment (greedy, sampled or guiding a search), an ONNX model that fits it (``onnx:FILE``,
    or guiding a search), a mixture file of such agents, OpenSpiel installed for ``mcts``.
    Anything else raises ``AgentSpecError`` with one clear sentence."""
    parsed = parse_agent_spec(spec)
    kind = parsed.kind
    if kind is AgentKind.MIXTURE:
        try:
            members = read_mixture(parsed.text)
        except ValueError as error:
            raise AgentSpecError(f"agent {parsed.text!r}: {error}") from None
        for member in members:
            try:
                check_agent_spec(member.spec)
            except AgentSpecError as error:
                raise AgentSpecError(f"agent {parsed.text!r}: member {error}") from None
    elif kind is AgentKind.REMOTE:
        _check_remote(parsed)
    elif kind is AgentKind.MCTS:
        if importlib.util.find_spec("pyspiel") is None:
            raise AgentSpecError(
                f"agent {parsed.text!r} needs OpenSpiel: pip install 'island-fortress-env[openspiel]'"
            )
    elif parsed.path is not None:
        _check_checkpoint(parsed, parsed.path, native_only=kind is AgentKind.SEARCH)
    return parsed


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


def make_agent(spec: str | AgentSpec, seed: int | None = None) -> Agent:
    """The agent ``spec`` names (``AGENTS_HELP``), seeded with ``seed``: a checkpoint plays
    greedily, ``sample:CHECKPOINT`` draws its actions from the policy, ``threshold:P:CHECKPOINT``
    from its actions of probability at least P (renormalised), ``onnx:FILE`` plays an
    exported network greedily (``sample:FILE.onnx`` and ``threshold:P:FILE.onnx`` draw as a
    checkpoint does), ``mixture:FILE`` draws one member per game."""
    parsed = parse_agent_spec(spec)
    kind = parsed.kind
    if kind is AgentKind.RANDOM:
        return RandomAgent(seed=seed)
    if kind is AgentKind.HEURISTIC:
        return HeuristicAgent(seed=seed)
    if kind is AgentKind.MIXTURE:
        return MixtureAgent(read_mixture(parsed.text), make_agent, seed=seed)
    if kind is AgentKind.REMOTE:
        target = parsed.remote
        assert target is not None
        fallback = target.fallback
        make_fallback = None if fallback is None else (lambda s: make_agent(fallback, s))
        return RemoteAgent(target, seed=seed, make_fallback=make_fallback, name=parsed.label)
    if kind is AgentKind.MCTS:
        assert parsed.simulations is not None
        return MCTSAgent(parsed.simulations, seed=seed)
    assert parsed.path is not None
    if kind is AgentKind.SEARCH:
        assert parsed.simulations is not None
        return SearchAgent(parsed.path, parsed.simulations, seed=seed)
    if kind is AgentKind.SAMPLE:
        return CheckpointAgent(parsed.path, seed=seed, deterministic=False, name=f"sample:{parsed.path.stem}")
    if kind is AgentKind.THRESHOLD:
        assert parsed.threshold is not None
        return CheckpointAgent(
            parsed.path, seed=seed, deterministic=False, name=parsed.label, threshold=parsed.threshold
        )
    if kind is AgentKind.ONNX:
        mode = parsed.onnx_mode
        return OnnxAgent(
            parsed.path, seed=seed, deterministic=mode.greedy, name=parsed.label, threshold=mode.threshold
        )
    return CheckpointAgent(parsed.path, seed=seed)


def plays_in_core(spec: str | AgentSpec) -> bool:
    """Whether ``spec``'s agent plays from the observation and mask alone, so a batch of core
    games can seat it: random, heuristic (in C++), checkpoints, ONNX models, and mixtures of those;
    the search players read a game state."""
    parsed = parse_agent_spec(spec)
    if parsed.kind is AgentKind.MIXTURE:
        return all(plays_in_core(member.spec) for member in read_mixture(parsed.text))
    return parsed.info.in_core


__all__ = [
    "AGENTS_HELP",
    "KINDS",
    "Agent",
    "AgentKind",
    "AgentSpec",
    "AgentSpecError",
    "MixtureAgent",
    "RandomAgent",
    "RemoteAgent",
    "RemoteAgentError",
    "check_agent_spec",
    "make_agent",
    "parse_agent_spec",
    "plays_in_core",
    "spec_labels",
]
