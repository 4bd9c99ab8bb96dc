"""The skill loop's spans: ``semif.run`` over its phases, each decision a ``semif.decision`` under its phase.

A run is one ``semif.run`` span (:func:`traced_run` wraps
:meth:`SkillRunner.arun`); its phases (``semif.route``, ``semif.predict``,
``semif.act``, ``semif.assess``) are recorded when each is over, from a
:class:`PhaseMark` taken when it began (:func:`trace_phase`): the phase's
decisions are the rows logged since the mark, and each becomes a
``semif.decision`` span with its question, options, choice and probability.
A decision's span lasts its engine's latency; the decisions of a phase are
laid end to end from the phase's start, in the order they were made.

The spans go to the process's span pipeline (:mod:`semif_agent.spans`):
OpenTelemetry when tracing is on, and any processor the application added.
The run span is current while the run goes on, so the spans of the skill
scripts it runs nest under it. With no processor, a mark is a clock reading
and a row count, and nothing else happens.
"""

from __future__ import annotations

import functools
from collections.abc import Callable, Coroutine, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, ParamSpec

from .. import spans, telemetry
from ..records import DecisionRow, LogRow
from ..workspace import Workspace

if TYPE_CHECKING:
    from .runner import RunResult

P = ParamSpec("P")
OPTIONS_SHOWN = 16  # option ids kept on a decision span (a SemIf decision has at most 16)


@dataclass(frozen=True)
class PhaseMark:
    """When a phase began (nanoseconds since the epoch) and how many rows the run had logged by then."""

    ns: int
    rows: int


def configure_tracing(workspace: Workspace) -> bool:
    """Start exporting spans if ``[telemetry]`` of ``workspace`` or the environment asks (once per process)."""
    return telemetry.configure_from(workspace.settings.telemetry.given())


def phase_mark(rows: Sequence[LogRow]) -> PhaseMark:
    """A mark for a phase beginning now, in a run that has logged ``rows``."""
    return PhaseMark(telemetry.now_ns(), len(rows))


def traced_run(
    arun: Callable[P, Coroutine[Any, Any, RunResult]],
) -> Callable[P, Coroutine[Any, Any, RunResult]]:
    """Wrap a run in a ``semif.run`` span (current while it runs, so its phases and scripts nest under it)."""

    @functools.wraps(arun)
    async def traced(*args: P.args, **kwargs: P.kwargs) -> RunResult:
        source = spans.source()
        if not source.enabled:
            return await arun(*args, **kwargs)
        span = source.start_span("semif.run")
        with spans.use_span(span):
            try:
                result = await arun(*args, **kwargs)
            except BaseException as exc:
                source.end_span(span, ok=False, message=f"{type(exc).__name__}: {exc}")
                raise
        error = {"error.type": "skill_error"} if result.error else {}
        source.end_span(
            span, ok=not result.error, message=result.error or "", attributes=_run_attributes(result) | error
        )
        return result

    return traced


def _run_attributes(result: RunResult) -> dict[str, object]:
    return {
        "semif.run.id": result.run_id,
        "semif.request": result.request.text,
        "semif.skill": result.skill,
        "semif.route.reason": result.route.reason or None,
        "semif.outcome": result.assessment.label,
        "semif.outcome.reason": result.assessment.reason,
        "semif.handed_back": result.handed_back,
        "semif.decisions": sum(1 for row in result.rows if isinstance(row, DecisionRow)),
    }


def trace_phase(
    name: str,
    mark: PhaseMark,
    rows: Sequence[LogRow],
    *,
    skill: str | None = None,
    end_ns: int | None = None,
    kinds: tuple[str, ...] | None = None,
) -> None:
    """Record phase ``name`` (``route``, ``predict``...) from ``mark`` to ``end_ns`` (else now), with the decision
    rows logged since the mark (those of ``kinds`` only, when given) as its children."""
    source = spans.source()
    if not source.enabled:
        return
    end = end_ns if end_ns is not None else telemetry.now_ns()
    span = source.start_span(f"semif.{name}", start_ns=mark.ns, attributes={"semif.skill": skill})
    cursor = mark.ns
    for row in rows[mark.rows :]:
        if not isinstance(row, DecisionRow) or (kinds is not None and row.kind not in kinds):
            continue
        took = int(float(row.latency_ms or 0.0) * 1_000_000)
        start, cursor = cursor, min(cursor + took, end)
        decision = source.start_span("semif.decision", parent=span, start_ns=start, attributes=decision_attributes(row))
        source.end_span(decision, end_ns=cursor)
    source.end_span(span, end_ns=end)


def decision_attributes(row: DecisionRow) -> dict[str, object]:
    """A decision row's span attributes: what was asked, what was chosen, and how sure."""
    options = [str(option.get("id")) for option in row.options]
    probability = (row.probabilities or {}).get(row.selected)
    return {
        "semif.decision.kind": row.kind,
        "semif.decision.step": row.step,
        "semif.decision.question": row.question,
        "semif.decision.options": options[:OPTIONS_SHOWN],
        "semif.decision.choice": row.selected,
        "semif.decision.probability": float(probability) if isinstance(probability, (int, float)) else None,
        "semif.decision.engine": row.engine,
        "semif.decision.model": row.model,
        "semif.decision.latency_ms": row.latency_ms,
        "semif.skill": row.skill,
    }


def trace_body(mark: PhaseMark, rows: Sequence[LogRow], skill: str, predicted_ns: int | None) -> None:
    """Record a code skill's body: ``predict`` from ``mark`` until it returned (``predicted_ns``), then ``act``."""
    if predicted_ns is None:  # predict never returned: the whole body was its predict
        trace_phase("predict", mark, rows, skill=skill)
        return
    trace_phase("predict", mark, rows, skill=skill, end_ns=predicted_ns, kinds=("predict",))
    trace_phase("act", PhaseMark(predicted_ns, mark.rows), rows, skill=skill, kinds=("act",))
