"""Island Fortress, version 0 of the environment: the public entry, as ``connect_four_v3`` is.

    from island_fortress_env import island_fortress_v0
    env = island_fortress_v0.env(num_players=3)            # the AEC API: one seat acts per step
    par = island_fortress_v0.parallel_env(num_players=3)   # the Parallel API: the others PASS

Importing this module also registers the environment in PettingZoo's registries as ``ENV_ID``,
so ``pettingzoo.make("aec", ENV_ID, num_players=3)`` gives the same environment as
``env(num_players=3)`` and ``pettingzoo.make("parallel", ENV_ID, ...)`` the same as
``parallel_env(...)``, every option passed through. The registration happens here, not on
``import island_fortress_env``, so the rules engine imports no RL library. PettingZoo has these
registries from 1.27 on; on an earlier release the module pyproject.toml allows (1.25, 1.26) it
imports the same and registers nothing (``REGISTERED`` is then False).

The implementations are ``island_fortress_env.env.aec`` and ``island_fortress_env.env.parallel``.
"""

import pettingzoo

from island_fortress_env.env.aec import env, raw_env
from island_fortress_env.env.parallel import PASS, parallel_env, raw_parallel_env

ENV_ID = "island_fortress/IslandFortress-v0"  # PettingZoo's [namespace/]Name-vN

REGISTERED = hasattr(pettingzoo, "register")  # PettingZoo 1.27+: pettingzoo.register and make
if REGISTERED:
    if ENV_ID not in pettingzoo.aec_registry:  # a second import (a reload) keeps the first entry
        pettingzoo.register("aec", ENV_ID, entry_point=f"{__name__}:env")
    if ENV_ID not in pettingzoo.parallel_registry:
        pettingzoo.register("parallel", ENV_ID, entry_point=f"{__name__}:parallel_env")

__all__ = ["ENV_ID", "PASS", "REGISTERED", "env", "parallel_env", "raw_env", "raw_parallel_env"]
