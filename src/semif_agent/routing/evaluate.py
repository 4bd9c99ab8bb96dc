"""Evaluate a routing strategy on a labelled dataset: accuracy, out-of-scope, latency, tokens, calibration.

A dataset is JSON lines ``{"text": "...", "skill": "category.name"}``, with
``"skill": null`` for a request that fits no skill.
"""

from __future__ import annotations

import asyncio
import json
import statistics
import time
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from .._json import split_json_lines
from ..engine.base import embedding_function
from ..engine.decisions import softmax
from ..errors import UserError
from ..tree.router import Route
from ..tree.tree import SkillTree
from .calibration import expected_calibration_error as calibration_error
from .strategies import RoutingStrategy


@dataclass(frozen=True)
class Example:
    text: str
    skill: str | None


def request_lines(path: str | Path, what: str, needs: str = "") -> Iterator[tuple[int, dict[str, Any]]]:
    """The objects of a JSON-lines file of requests with their line numbers (blank lines skipped).

    A file that cannot be read, a line that is not JSON, or one without a
    non-empty ``"text"`` is a :class:`UserError` naming the file and line.
    """
    path = Path(path)
    try:
        lines = split_json_lines(path.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError) as exc:
        raise UserError(f"{path}: cannot read the {what} ({exc})") from exc
    for number, line in enumerate(lines, start=1):
        if not line.strip():
            continue
        try:
            item = json.loads(line)
        except json.JSONDecodeError as exc:
            raise UserError(f"{path}:{number}: invalid JSON ({exc.msg})") from exc
        if not isinstance(item, dict) or not isinstance(item.get("text"), str) or not item["text"].strip():
            raise UserError(f'{path}:{number}: each line needs "text" (a non-empty string){needs}')
        yield number, item


def load_dataset(path: str | Path) -> list[Example]:
    """Read a dataset; a malformed line is an error naming the file and line."""
    examples = []
    for number, item in request_lines(path, "dataset", ' and "skill"'):
        skill = item.get("skill")
        if skill is not None and not isinstance(skill, str):
            raise UserError(f'{path}:{number}: "skill" must be a skill name or null')
        examples.append(Example(item["text"], skill))
    if not examples:
        raise UserError(f"{path}: the dataset is empty")
    return examples


def check_labels(dataset: list[Example], tree: SkillTree) -> None:
    unknown = sorted({e.skill for e in dataset if e.skill is not None and e.skill not in tree.skills})
    if unknown:
        shown = ", ".join(unknown[:5]) + (f" and {len(unknown) - 5} more" if len(unknown) > 5 else "")
        raise UserError(f"the dataset names skills the tree does not have: {shown}")


@dataclass
class RoutedExample:
    """One routed example."""

    example: Example
    predicted: str | None
    decisions: int
    latency_ms: float
    prompt_tokens: int
    confidence: float | None
    scores: dict[str, float] | None = None  # the last decision's raw scores, for recalibration
    selected: str | None = None  # the last decision's answer
    gated: tuple[float, bool] | None = None  # what the act gate does with the route, when asked (route_all's on_route)

    def confidence_at(self, temperature: float) -> float | None:
        """The last decision's probability for its answer, were its scores softmaxed at ``temperature``."""
        if not self.scores or self.selected not in self.scores:
            return None
        return softmax(self.scores, temperature)[self.selected]

    @property
    def correct(self) -> bool:
        return self.predicted == self.example.skill


EMBED_BATCH = 64
"""Requests embedded in one go before they are routed: two model runs' worth, few enough to stay in memory."""


async def route_all(
    strategy: RoutingStrategy,
    dataset: Sequence[Example],
    *,
    progress: Callable[[int], None] | None = None,
    on_route: Callable[[Example, Route], tuple[float, bool]] | None = None,
    batch_size: int = EMBED_BATCH,
) -> list[RoutedExample]:
    """Route every example of ``dataset``; what ``on_route`` makes of each route is kept as its outcome's ``gated``
    (the act gate's figures, :func:`semif_agent.loop.act_threshold.gate_routes`).

    When the strategy's scores embed texts, each ``batch_size`` requests are
    embedded in one model run first (the embedder keeps them, so routing finds
    each one embedded): an embedding does not depend on its batch, so the
    decisions are those of routing one at a time. Each outcome's latency
    includes its share of its batch's embedding.
    """
    embed = embedding_of(strategy)
    outcomes = []
    for first in range(0, len(dataset), batch_size):
        batch = dataset[first : first + batch_size]
        started = time.perf_counter()
        if embed is not None:
            await asyncio.to_thread(embed, [e.text for e in batch])
        share = (time.perf_counter() - started) * 1000 / len(batch)
        for example in batch:
            outcomes.append(await _route_one(strategy, example, on_route, share))
            if progress is not None:
                progress(1)
    return outcomes


async def _route_one(
    strategy: RoutingStrategy,
    example: Example,
    on_route: Callable[[Example, Route], tuple[float, bool]] | None,
    embedding_ms: float,
) -> RoutedExample:
    start = time.perf_counter()
    route = await strategy.aroute(example.text)
    elapsed = (time.perf_counter() - start) * 1000 + embedding_ms
    gated = on_route(example, route) if on_route is not None else None
    last = route.decisions[-1].result if route.decisions else None
    confidence = None
    if last is not None and last.probabilities:
        confidence = last.probabilities.get(last.selected)
    tokens = sum(int((d.result.usage or {}).get("input_tokens", 0)) for d in route.decisions)
    return RoutedExample(
        example,
        route.skill.name if route.skill else None,
        len(route.decisions),
        elapsed,
        tokens,
        confidence,
        dict(last.scores) if last and last.probabilities else None,
        last.selected if last else None,
        gated,
    )


def embedding_of(strategy: object) -> Callable[[Sequence[str]], object] | None:
    """How the strategy's scores embed texts, if they do (the leaf scorer's engine, else the strategy's engine)."""
    scorer = getattr(strategy, "scorer", None)
    for engine in (getattr(scorer, "engine", None), getattr(strategy, "engine", None)):
        if (embed := embedding_function(engine)) is not None:
            return embed
    return None


def summarize(outcomes: list[RoutedExample], tree: SkillTree) -> dict[str, object]:
    """The metrics ``semif eval`` reports."""
    inside = [o for o in outcomes if o.example.skill is not None]
    outside = [o for o in outcomes if o.example.skill is None]
    said_none = [o for o in outcomes if o.predicted is None]
    top: dict[str | None, str] = {name: (tree.path_to(name) or [""])[0] for name in tree.skills}  # None: no skill
    latencies = sorted(o.latency_ms for o in outcomes)
    return {
        "examples": len(outcomes),
        "in_scope": len(inside),
        "out_of_scope": len(outside),
        "accuracy": _ratio(sum(o.correct for o in outcomes), len(outcomes)),
        "balanced_accuracy": _balanced(inside, outside),
        "leaf_accuracy": _ratio(sum(o.correct for o in inside), len(inside)),
        "category_accuracy": _ratio(
            sum(o.predicted is not None and top.get(o.predicted) == top.get(o.example.skill) for o in inside),
            len(inside),
        ),
        "out_of_scope_precision": _ratio(sum(o.example.skill is None for o in said_none), len(said_none)),
        "out_of_scope_recall": _ratio(sum(o.predicted is None for o in outside), len(outside)),
        "decisions_per_request": _ratio(sum(o.decisions for o in outcomes), len(outcomes)),
        "latency_ms_p50": round(statistics.median(latencies), 3) if latencies else None,
        "latency_ms_p90": round(latencies[int(0.9 * (len(latencies) - 1))], 3) if latencies else None,
        "prompt_tokens_per_request": _ratio(sum(o.prompt_tokens for o in outcomes), len(outcomes)),
        "calibration_error": expected_calibration_error(outcomes),
    }


def expected_calibration_error(
    outcomes: list[RoutedExample], bins: int = 10, *, temperature: float | None = None
) -> float | None:
    """ECE of the final decision's probability for its choice against being right (None without probabilities).

    With ``temperature``, the probabilities are recomputed from the decisions' scores at that temperature.
    """
    pairs = [(o.confidence if temperature is None else o.confidence_at(temperature), o.correct) for o in outcomes]
    scored = [(c, ok) for c, ok in pairs if c is not None]
    return calibration_error([c for c, _ in scored], [ok for _, ok in scored], bins)


def _balanced(inside: list[RoutedExample], outside: list[RoutedExample]) -> float | None:
    """The mean of in-scope leaf accuracy and out-of-scope recall (either alone when only one kind is present).

    Overall accuracy rewards answering ``none`` to everything on a set full of
    out-of-scope requests; this does not.
    """
    parts = [sum(o.correct for o in group) / len(group) for group in (inside, outside) if group]
    return round(sum(parts) / len(parts), 4) if parts else None


def _ratio(numerator: float, denominator: int) -> float | None:
    return round(numerator / denominator, 4) if denominator else None


def split(dataset: list[Example], validation_share: float = 0.5) -> tuple[list[Example], list[Example]]:
    """A deterministic split by text hash: (validation, test)."""
    import hashlib

    validation: list[Example] = []
    test: list[Example] = []
    for example in dataset:
        bucket = int(hashlib.sha256(example.text.encode()).hexdigest()[:8], 16) / 0xFFFFFFFF
        (validation if bucket < validation_share else test).append(example)
    return validation, test
