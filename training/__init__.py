"""Self-play training, evaluation and plotting for Island Fortress (``island-fortress train|evaluate``)."""
