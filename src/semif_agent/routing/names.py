"""The names of the routing strategies (importable without loading them: the command line lists them)."""

STRATEGIES = ("chain", "best_leaf", "beam", "shortlist", "examples")
