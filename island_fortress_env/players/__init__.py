"""Every agent an agent spec names: ``random``, ``heuristic``, a checkpoint file (greedy; as
``sample:CHECKPOINT`` its actions drawn from the policy, as ``threshold:P:CHECKPOINT`` drawn from
its actions of probability at least P), an exported network (``onnx:FILE``,
played by onnxruntime without torch: ``agents.onnx_agent``), the search players built on an adapter
(``mcts[:N]``, OpenSpiel's IS-MCTS over the OpenSpiel game) and mixtures of them
(``mixture:FILE``, one member drawn per game: ``players/mixture.py``). A bot served over HTTP
plays as ``remote:URL`` (``players/remote.py``, docs/BOT-PROTOCOL.md). Each kind is one row of
the registry, ``players/kinds.py``, which makes and checks its agents.

    from island_fortress_env.players import make_agent
    agent = make_agent("heuristic", seed=0)
"""

from __future__ import annotations

from island_fortress_env.agents.base import Agent, RandomAgent
from island_fortress_env.players.kinds import AGENTS_HELP, check_agent_spec, make_agent, plays_in_core
from island_fortress_env.players.mixture import MixtureAgent
from island_fortress_env.players.remote import RemoteAgent, RemoteAgentError
from island_fortress_env.players.specs import (
    KINDS,
    AgentKind,
    AgentSpec,
    AgentSpecError,
    KindEntry,
    parse_agent_spec,
    register_kind,
    spec_labels,
)

__all__ = [
    "AGENTS_HELP",
    "KINDS",
    "Agent",
    "AgentKind",
    "AgentSpec",
    "AgentSpecError",
    "KindEntry",
    "MixtureAgent",
    "RandomAgent",
    "RemoteAgent",
    "RemoteAgentError",
    "check_agent_spec",
    "make_agent",
    "parse_agent_spec",
    "plays_in_core",
    "register_kind",
    "spec_labels",
]
