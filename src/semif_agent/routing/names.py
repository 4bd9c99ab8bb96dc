"""The names of the routing strategies and tuning measures (importable without loading them: the command line lists them)."""

# What `semif eval --tune --measure NAME` maximises: NAME -> its metric in the report.
MEASURES = {"accuracy": "accuracy", "balanced": "balanced_accuracy", "leaf": "leaf_accuracy"}

STRATEGIES = ("chain", "best_leaf", "beam", "shortlist", "examples", "learned")
