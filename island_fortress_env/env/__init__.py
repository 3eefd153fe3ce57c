"""The PettingZoo environments over the engine: ``aec`` (``raw_env``/``env``), ``parallel``
(``raw_parallel_env``/``parallel_env``: PettingZoo's Parallel API, PASS for waiting seats), the seat-relative
``observation`` and action mask, PettingZoo's ``global_state``, the fast ``order_enforcing``
wrapper, and game ``records`` (reset seed + action ids, replayed through the env's seed rule)."""
