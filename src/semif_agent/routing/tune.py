"""Tune the ``none`` threshold on a validation split, and keep what was tuned in the workspace.

Tuned values live in ``data/routing.json``; ``[routing]`` in ``semif.toml``
overrides them, and command-line flags override both.
"""

from __future__ import annotations

import json
import os
import tempfile
from collections.abc import Callable
from pathlib import Path
from typing import Any

from ..workspace import Workspace
from .evaluate import Example, Outcome, route_all, summarize
from .strategies import RoutingStrategy

ROUTING_FILE = "routing.json"
DEFAULT_GRID = tuple(round(0.05 + 0.025 * i, 3) for i in range(27))  # 0.05 .. 0.70

async def tune_threshold(
    make: Callable[[float], RoutingStrategy],
    validation: list[Example],
    tree: Any,
    *,
    grid: tuple[float, ...] = DEFAULT_GRID,
    progress: Callable[[int], None] | None = None,
) -> tuple[float, dict[str, Any]]:
    """The grid threshold with the best balanced accuracy on ``validation`` (ties: the middle one)."""
    results: list[tuple[float, dict[str, Any]]] = []
    for threshold in grid:
        outcomes: list[Outcome] = await route_all(make(threshold), validation)
        results.append((threshold, summarize(outcomes, tree)))
        if progress is not None:
            progress(1)
    best = max(r[1]["balanced_accuracy"] or 0.0 for r in results)
    ties = [r for r in results if (r[1]["balanced_accuracy"] or 0.0) == best]
    return ties[len(ties) // 2]

def routing_settings(workspace: Workspace, engine: str | None = None) -> dict[str, Any]:
    """What routes this workspace: tuned values, overridden by ``[routing]`` in semif.toml.

    Tuned values apply only to the engine they were tuned with (``engine``,
    when given): a threshold tuned on cosines means nothing to a model.
    """
    tuned: dict[str, Any] = {}
    path = workspace.data_dir / ROUTING_FILE
    if path.is_file():
        try:
            tuned = json.loads(path.read_text(encoding="utf-8"))
        except (OSError, json.JSONDecodeError):
            tuned = {}
    if engine is not None and tuned.get("engine") not in (None, engine):
        tuned = {}
    settings = {k: tuned[k] for k in ("strategy", "threshold") if k in tuned}
    settings.update(workspace.settings.get("routing", {}))
    return settings

def save_tuned(workspace: Workspace, values: dict[str, Any]) -> Path:
    """Write ``data/routing.json`` atomically."""
    path = workspace.data_dir / ROUTING_FILE
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=".routing-", suffix=".json")
    with os.fdopen(fd, "w", encoding="utf-8") as handle:
        json.dump(values, handle, indent=2)
        handle.write("\n")
    os.replace(tmp, path)
    return path
