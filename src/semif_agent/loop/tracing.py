"""The skill loop's spans: ``semif.run`` over its phases, each decision a ``semif.decision`` under its phase.

A run is one ``semif.run`` span (:func:`traced_run` wraps
:meth:`SkillRunner.arun`); its phases (``semif.route``, ``semif.predict``,
``semif.act``, ``semif.assess``) are recorded when each is over, from a
:class:`PhaseMark` taken when it began (:func:`trace_phase`): the phase's
decisions are the rows logged since the mark, and each becomes a
``semif.decision`` span with its question, options, choice and probability.
A decision's span lasts its engine's latency; the decisions of a phase are
laid end to end from the phase's start, in the order they were made.

When tracing is off, a mark is a clock reading and a row count, and nothing
else happens.
"""

from __future__ import annotations

import functools
from collections.abc import Callable, Coroutine, Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, ParamSpec

from .. import telemetry
from ..workspace import Workspace

if TYPE_CHECKING:
    from opentelemetry.trace import Span

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


def phase_mark(rows: Sequence[Mapping[str, Any]]) -> PhaseMark:
    """A mark for a phase beginning now, in a run that has logged ``rows``."""
    return PhaseMark(telemetry.now_ns(), len(rows))


def traced_run(
    arun: Callable[P, Coroutine[Any, Any, RunResult]],
) -> Callable[P, Coroutine[Any, Any, RunResult]]:
    """Wrap a run in a ``semif.run`` span (current while it runs, so its phases nest under it)."""

    @functools.wraps(arun)
    async def traced(*args: P.args, **kwargs: P.kwargs) -> RunResult:
        tracer = telemetry.tracer()
        if tracer is None:
            return await arun(*args, **kwargs)
        with tracer.start_as_current_span("semif.run") as span:
            result = await arun(*args, **kwargs)
            _end_run(span, result)
            return result

    return traced


def _end_run(span: Span, result: RunResult) -> None:
    attributes = {
        "semif.run.id": result.run_id,
        "semif.request": result.request.text,
        "semif.skill": result.skill,
        "semif.route.reason": result.route.reason or None,
        "semif.outcome": result.assessment.label,
        "semif.outcome.reason": result.assessment.reason,
        "semif.handed_back": result.handed_back,
        "semif.decisions": sum(1 for row in result.rows if row.get("kind") != "outcome"),
    }
    for key, value in attributes.items():
        shown = telemetry.attribute_value(value)
        if shown is not None:
            span.set_attribute(key, shown)
    if result.error:
        telemetry.set_error(span, result.error, "skill_error")


def trace_phase(
    name: str,
    mark: PhaseMark,
    rows: Sequence[Mapping[str, Any]],
    *,
    skill: str | None = None,
    end_ns: int | None = None,
    kinds: tuple[str, ...] | None = None,
) -> None:
    """Record phase ``name`` (``route``, ``predict``...) from ``mark`` to ``end_ns`` (else now), with the decision
    rows logged since the mark (those of ``kinds`` only, when given) as its children."""
    tracer = telemetry.tracer()
    if tracer is None:
        return
    end = end_ns if end_ns is not None else telemetry.now_ns()
    span = telemetry.start_span(tracer, f"semif.{name}", start_ns=mark.ns, attributes={"semif.skill": skill})
    cursor = mark.ns
    for row in rows[mark.rows :]:
        if row.get("kind") == "outcome" or (kinds is not None and row.get("kind") not in kinds):
            continue
        took = int(float(row.get("latency_ms") or 0.0) * 1_000_000)
        start, cursor = cursor, min(cursor + took, end)
        decision = telemetry.start_span(
            tracer, "semif.decision", parent=span, start_ns=start, attributes=decision_attributes(row)
        )
        telemetry.end_span(decision, end_ns=cursor)
    telemetry.end_span(span, end_ns=end)


def decision_attributes(row: Mapping[str, Any]) -> dict[str, object]:
    """A decision row's span attributes: what was asked, what was chosen, and how sure."""
    options = [str(o.get("id")) for o in row.get("options") or [] if isinstance(o, Mapping)]
    probabilities = row.get("probabilities") or {}
    selected = row.get("selected")
    probability = probabilities.get(selected) if isinstance(probabilities, Mapping) else None
    return {
        "semif.decision.kind": row.get("kind"),
        "semif.decision.step": row.get("step"),
        "semif.decision.question": row.get("question"),
        "semif.decision.options": options[:OPTIONS_SHOWN],
        "semif.decision.choice": selected,
        "semif.decision.probability": float(probability) if isinstance(probability, (int, float)) else None,
        "semif.decision.engine": row.get("engine"),
        "semif.decision.model": row.get("model"),
        "semif.decision.latency_ms": row.get("latency_ms"),
        "semif.skill": row.get("skill"),
    }


def trace_body(mark: PhaseMark, rows: Sequence[Mapping[str, Any]], skill: str, predicted_ns: int | None) -> None:
    """Record a code skill's body: ``predict`` from ``mark`` until it returned (``predicted_ns``), then ``act``."""
    if predicted_ns is None:  # predict never returned: the whole body was its predict
        trace_phase("predict", mark, rows, skill=skill)
        return
    trace_phase("predict", mark, rows, skill=skill, end_ns=predicted_ns, kinds=("predict",))
    trace_phase("act", PhaseMark(predicted_ns, mark.rows), rows, skill=skill, kinds=("act",))
