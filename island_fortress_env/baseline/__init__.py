"""The rule-based baseline player, on the engine alone: ``heuristic`` (``HeuristicAgent``: a
hand-written evaluation and a short greedy look-ahead) and ``heuristic_eval`` (the evaluation and
its weights). It sits just above the core, so that every layer from ``vector`` up may play it; on
a state of the C++ core it plays through its C++ twin (``core.heuristic``).
"""
