"""The five role cards, one module each: every action's start, legal choices and effect."""
