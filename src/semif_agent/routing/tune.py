"""Tune routing on a labelled dataset, and keep the result in the workspace only when it is a real gain.

:func:`tune_routing` tunes each strategy's ``none`` threshold on the
validation half (grid search on the chosen measure) and the probabilities'
temperature, measures the current settings and every candidate on the
held-out half, and lets :func:`.compare.decide` keep or change them.

Tuned values live in ``data/routing.json``; ``[routing]`` in ``semif.toml``
overrides them, and command-line flags override both.
"""

from __future__ import annotations

import json
import math
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

from pydantic import ValidationError

from .._files import replace_file
from ..tree.tree import SkillTree
from ..workspace import Workspace
from ..workspace.settings import RoutingSettings
from .compare import Decision, Trial, decide
from .evaluate import Example, RoutedExample, expected_calibration_error, route_all, summarize
from .names import MEASURES
from .strategies import RoutingStrategy

ROUTING_FILE = "routing.json"
DEFAULT_GRID = tuple(round(0.05 + 0.025 * i, 3) for i in range(27))  # 0.05 .. 0.70
TEMPERATURES = (0.01, 0.02, 0.03, 0.05, 0.075, 0.1, 0.15, 0.2, 0.3, 0.5, 1.0, 2.0)
MIN_CALIBRATION_EXAMPLES = 50  # fewer, and a tuned temperature fits noise (measured: it then hurts held-out ECE)

# ``make(strategy, threshold, temperature)`` builds a strategy; ``None`` leaves its default.
StrategyFactory = Callable[[str, float | None, float | None], RoutingStrategy]


async def tune_routing(
    make: StrategyFactory,
    names: Sequence[str],
    current: dict[str, Any],
    validation: list[Example],
    test: list[Example],
    tree: SkillTree,
    *,
    measure: str = "accuracy",
    progress: Callable[[int], None] | None = None,
) -> tuple[Trial, list[Trial], Decision]:
    """Tune each of ``names`` on ``validation``, measure them and ``current`` on ``test``, and decide.

    ``current`` holds the routing in use (``strategy``, and ``threshold`` and
    ``temperature`` when set). Returns the current settings' trial, one trial
    per strategy, and the decision (see :func:`.compare.decide`).
    """
    routed = make(current["strategy"], current.get("threshold"), current.get("temperature"))
    outcomes = await route_all(routed, test)
    now = Trial(
        current["strategy"], threshold_of(routed), current.get("temperature"), outcomes, summarize(outcomes, tree)
    )
    trials = [
        await tune_strategy(make, name, validation, test, tree, measure=measure, progress=progress) for name in names
    ]
    return now, trials, decide(now, trials, measure)


async def tune_strategy(
    make: StrategyFactory,
    name: str,
    validation: list[Example],
    test: list[Example],
    tree: SkillTree,
    *,
    measure: str = "accuracy",
    progress: Callable[[int], None] | None = None,
) -> Trial:
    """Strategy ``name`` with its threshold and temperature tuned on ``validation``, measured on ``test``."""
    threshold, tuned = await tune_threshold(
        lambda t: make(name, t, None), validation, tree, measure=measure, progress=progress
    )
    temperature = tune_temperature(await route_all(make(name, threshold, None), validation))
    untuned = expected_calibration_error(await route_all(make(name, threshold, None), test))
    outcomes = await route_all(make(name, threshold, temperature), test)
    metrics = {**summarize(outcomes, tree), "calibration_error_untuned": untuned}
    return Trial(name, threshold, temperature, outcomes, metrics, validation=tuned[MEASURES[measure]])


def threshold_of(strategy: RoutingStrategy) -> float | None:
    """The ``none`` threshold ``strategy`` routes with: its own, or its engine's (the chain)."""
    found = getattr(strategy, "threshold", None)
    if found is None:
        found = getattr(getattr(strategy, "engine", None), "threshold", None)
    return None if found is None else float(found)


async def tune_threshold(
    make: Callable[[float], RoutingStrategy],
    validation: list[Example],
    tree: SkillTree,
    *,
    measure: str = "accuracy",
    grid: tuple[float, ...] = DEFAULT_GRID,
    progress: Callable[[int], None] | None = None,
) -> tuple[float, dict[str, Any]]:
    """The grid threshold with the best ``measure`` (see ``MEASURES``) on ``validation`` (ties: the middle one)."""
    key = MEASURES[measure]
    results: list[tuple[float, dict[str, Any]]] = []
    for threshold in grid:
        outcomes: list[RoutedExample] = await route_all(make(threshold), validation)
        results.append((threshold, summarize(outcomes, tree)))
        if progress is not None:
            progress(1)
    best = max(r[1][key] or 0.0 for r in results)
    ties = [r for r in results if (r[1][key] or 0.0) == best]
    return ties[len(ties) // 2]


def tune_temperature(outcomes: list[RoutedExample], grid: tuple[float, ...] = TEMPERATURES) -> float | None:
    """The softmax temperature whose probabilities best predict being right on ``outcomes``.

    The objective is the log loss of "the decision is right" under the
    decision's probability for its answer (smooth, unlike binned calibration
    error, so it holds up on small validation sets). Routing does not change
    with the temperature, only how sure the scores say it is, so the
    decisions made once are rescored for every candidate. ``None`` when the
    decisions carried no scores, or when there are fewer than
    ``MIN_CALIBRATION_EXAMPLES`` of them.
    """
    if sum(o.scores is not None for o in outcomes) < MIN_CALIBRATION_EXAMPLES:
        return None
    losses = {t: loss for t in grid if (loss := _log_loss(outcomes, t)) is not None}
    return min(losses, key=losses.__getitem__) if losses else None


def _log_loss(outcomes: list[RoutedExample], temperature: float) -> float | None:
    confidences = [(o.confidence_at(temperature), o.correct) for o in outcomes]
    pairs = [(min(max(c, 1e-6), 1 - 1e-6), ok) for c, ok in confidences if c is not None]
    if not pairs:
        return None
    return -sum(math.log(c) if ok else math.log(1 - c) for c, ok in pairs) / len(pairs)


def routing_settings(workspace: Workspace, engine: str | None = None) -> RoutingSettings:
    """What routes this workspace: tuned values, overridden by ``[routing]`` in semif.toml.

    Tuned values apply only to the engine they were tuned with (``engine``,
    when given): a threshold tuned on cosines means nothing to a model. A
    tuned file of the wrong shape is left out, as one that cannot be read.
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
    values = {k: tuned[k] for k in ("strategy", "threshold", "temperature", "encoder") if tuned.get(k) is not None}
    try:
        RoutingSettings.model_validate(values)
    except ValidationError:
        values = {}
    return RoutingSettings.model_validate({**values, **workspace.settings.routing.given()})


def save_tuned(workspace: Workspace, values: dict[str, Any]) -> Path:
    """Write ``data/routing.json`` atomically. The encoder the routing belongs to (its ``encoder``, which training
    and ``semif encoder`` set) is kept when ``values`` do not say it: tuning a threshold does not change encoders."""
    path = workspace.data_dir / ROUTING_FILE
    path.parent.mkdir(parents=True, exist_ok=True)
    if "encoder" not in values and path.is_file():
        try:
            said = json.loads(path.read_text(encoding="utf-8"))
        except (OSError, json.JSONDecodeError):
            said = {}
        if isinstance(said, dict) and said.get("encoder") is not None:
            values = {**values, "encoder": said["encoder"]}
    replace_file(path, json.dumps(values, indent=2) + "\n")
    return path
