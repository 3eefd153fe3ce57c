"""Adapters to RL libraries. Each submodule imports its library; importing this package does not.

* ``island_fortress_env.integrations.rllib``: Ray RLlib (new API stack), a turn-based
  ``MultiAgentEnv``, an action-masking ``RLModule`` built on ``network.ActorCritic`` and a
  converter from RLlib checkpoints to the project's own checkpoint format.
"""
