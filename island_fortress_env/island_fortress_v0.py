"""Island Fortress, version 0 of the environment: the public entry, as ``connect_four_v3`` is.

    from island_fortress_env import island_fortress_v0
    env = island_fortress_v0.env(num_players=3)

Importing this module also registers the environment in PettingZoo's registry as ``ENV_ID``
(AEC only: the game is turn-based), so ``pettingzoo.make("aec", ENV_ID, num_players=3)`` gives
the same environment as ``env(num_players=3)``, every option passed through. The registration
happens here, not on ``import island_fortress_env``, so the rules engine imports no RL library.

The implementation is ``island_fortress_env.env.aec``.
"""

import pettingzoo

from island_fortress_env.env.aec import env, raw_env

ENV_ID = "island_fortress/IslandFortress-v0"  # PettingZoo's [namespace/]Name-vN

if ENV_ID not in pettingzoo.aec_registry:  # a second import (a reload) keeps the first entry
    pettingzoo.register("aec", ENV_ID, entry_point=f"{__name__}:env")

__all__ = ["ENV_ID", "env", "raw_env"]
