"""Training (native multi-agent PPO, SB3, RLlib), evaluation and plotting for Island Fortress
(``island-fortress train|evaluate``)."""
