"""The phases of a round and of the game, each with its decisions' legal choices and effects."""
