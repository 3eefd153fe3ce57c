"""Island Fortress, version 0 of the environment: the public entry, as ``connect_four_v3`` is.

    from island_fortress_env import island_fortress_v0
    env = island_fortress_v0.env(num_players=3)

The implementation is ``island_fortress_env.env.aec``.
"""

from island_fortress_env.env.aec import env, raw_env

__all__ = ["env", "raw_env"]
