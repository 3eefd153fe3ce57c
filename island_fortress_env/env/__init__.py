"""The PettingZoo environment over the engine: ``aec`` (``raw_env``/``env``), the seat-relative
``observation`` and action mask, PettingZoo's ``global_state``, the fast ``order_enforcing``
wrapper, and game ``records`` (reset seed + action ids, replayed through the env's seed rule)."""
