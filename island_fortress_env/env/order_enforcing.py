"""PettingZoo's ``OrderEnforcingWrapper`` with its per-step attributes forwarded directly.

The stock wrapper reaches the wrapped env's ``agents``, ``agent_selection``, ``rewards``,
``terminations``, ``truncations``, ``infos`` and ``_cumulative_rewards`` through
``__getattr__``, which Python calls only after a normal lookup has failed: the standard
``agent_iter()`` / ``last()`` / ``step()`` loop makes eight such lookups per step, about 5 µs
on our machine, more than the rules engine spends on a decision. This subclass declares
those attributes as read-only properties with the same before-reset checks, and ``last()``
asks the wrapped env directly. Everything else is PettingZoo's own code: it *is* an
``OrderEnforcingWrapper`` (``isinstance``, ``agent_iter``, errors and warnings alike).
"""

from __future__ import annotations

from operator import attrgetter
from typing import Any

from pettingzoo.utils import wrappers


def _forwarded(name: str) -> property:
    read = attrgetter(name)
    checked = not name.startswith("_")  # the stock wrapper checks the public names only

    def get(self: OrderEnforcingWrapper) -> Any:
        if checked and not self._has_reset:
            raise AttributeError(f"{name} cannot be accessed before reset")
        return read(self.env)

    return property(get, doc=f"The wrapped env's ``{name}`` (read-only; only after reset).")


class OrderEnforcingWrapper(wrappers.OrderEnforcingWrapper):
    """Drop-in for ``pettingzoo.utils.wrappers.OrderEnforcingWrapper`` (see the module doc)."""

    agents = _forwarded("agents")
    agent_selection = _forwarded("agent_selection")
    rewards = _forwarded("rewards")
    terminations = _forwarded("terminations")
    truncations = _forwarded("truncations")
    infos = _forwarded("infos")
    _cumulative_rewards = _forwarded("_cumulative_rewards")

    def last(self, observe: bool = True) -> tuple[Any, float, bool, bool, dict[str, Any]]:
        if not self._has_reset:
            raise AttributeError("agent_selection cannot be accessed before reset")
        return self.env.last(observe)

    def __str__(self) -> str:
        return str(self.env)  # as the stock wrapper prints itself: the env's name


# The attributes forwarded as properties (one list: the class body above).
FORWARDED = tuple(name for name, v in vars(OrderEnforcingWrapper).items() if isinstance(v, property))
