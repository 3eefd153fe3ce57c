"""Agents that play from a seat's observation: ``act(observation, action_mask, state=None) -> action``.

``base`` (the interface and the random agent), ``heuristic`` (the rule-based bot),
``checkpoint`` (a trained policy; ``network`` is its torch model, under the ``train`` extra) and
``onnx_agent`` (a policy exported by ``onnx_export``, played by onnxruntime without torch).
An agent *spec* (``"heuristic"``, ``"mcts:50"``, a checkpoint path) is turned into an agent by
``island_fortress_env.players.make_agent``, one layer up, where the search players live too.
"""

from island_fortress_env.agents.base import Agent, RandomAgent

__all__ = ["Agent", "RandomAgent"]
