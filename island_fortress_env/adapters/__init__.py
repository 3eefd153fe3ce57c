"""Adapters to other libraries' own routes. Each submodule imports its library; importing this
package does not.

* ``island_fortress_env.adapters.openspiel``: the game registered with OpenSpiel (``pyspiel``).
* ``island_fortress_env.adapters.rllib``: Ray RLlib (new API stack), a turn-based
  ``MultiAgentEnv``, an action-masking ``RLModule`` built on ``agents.network.ActorCritic`` and a
  converter from RLlib checkpoints to the project's own checkpoint format.
"""
