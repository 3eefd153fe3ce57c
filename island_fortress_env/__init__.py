"""Island Fortress as a PettingZoo AEC environment, on a rules engine with no RL dependency."""

__version__ = "0.1.0"
