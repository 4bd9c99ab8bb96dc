"""The skill loop's spans: ``semif.run`` over its phases, each decision a ``semif.decision`` under its phase.

A run is one ``semif.run`` span (:func:`traced_run` wraps
:meth:`SkillRunner.arun`). Each phase (``semif.route``, ``semif.predict``,
``semif.act``, ``semif.assess``) is a span opened when the phase starts and
current while it runs (:func:`traced_phase`), so what the phase runs (a
SKILL.md skill's scripts under ``semif.act``) nests under it and processors
see the phase start before its children; it ends when the phase ends, with
status ERROR when the phase raised or was cancelled. The phase's decisions
are the rows logged while it ran, and each becomes a ``semif.decision`` span
under it with its question, options, choice and probability. A decision's
span lasts its engine's latency; the decisions of a phase are laid end to
end from the phase's start, in the order they were made.

A code skill's body runs in a confined child: its ``predict`` phase is open
while the child runs and ends when ``predict`` returned there; its ``act``
is recorded once the child is done (:func:`trace_phase`), since nothing of
this process ran inside it.

The spans go to the process's span pipeline (:mod:`semif_agent.spans`):
OpenTelemetry when tracing is on, and any processor the application added.
With no processor, nothing is built.
"""

from __future__ import annotations

import functools
from collections.abc import Callable, Coroutine, Iterator, Sequence
from contextlib import contextmanager
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


class Phase:
    """A phase while it runs: what the caller learns on the way (the skill it reached, a failure it caught)."""

    def __init__(self, skill: str | None, kinds: tuple[str, ...] | None) -> None:
        self.skill = skill
        """The skill the phase is about (the route sets it when it has chosen)."""
        self.kinds = kinds
        """The kinds of decision rows that belong to the phase (all, when None)."""
        self.end_ns: int | None = None
        """When the phase ended, if before the block does (a body's ``predict``, which returned in the child)."""
        self.error: str | None = None
        """Why the phase failed, when it failed without raising (a judge that could not answer)."""


@contextmanager
def traced_phase(
    name: str, rows: Sequence[LogRow], *, skill: str | None = None, kinds: tuple[str, ...] | None = None
) -> Iterator[Phase]:
    """Run a block as phase ``name`` (``route``, ``act``...): a ``semif.{name}`` span open and current while it runs,
    ended with the decision rows appended to ``rows`` meanwhile as its children; ERROR if the block raises."""
    phase = Phase(skill, kinds)
    source = spans.source()
    if not source.enabled:
        yield phase
        return
    mark = phase_mark(rows)
    span = source.start_span(f"semif.{name}", start_ns=mark.ns, attributes={"semif.skill": skill})
    with spans.use_span(span):
        try:
            yield phase
        except BaseException as exc:
            _end_phase(source, span, phase, mark, rows, f"{type(exc).__name__}: {exc}")
            raise
    _end_phase(source, span, phase, mark, rows, phase.error)


def _end_phase(
    source: spans.SpanSource, span: spans.Span, phase: Phase, mark: PhaseMark, rows: Sequence[LogRow], error: str | None
) -> None:
    end = phase.end_ns if phase.end_ns is not None else telemetry.now_ns()
    _decision_spans(source, span, mark, rows, end, phase.kinds)
    source.end_span(span, ok=error is None, message=error or "", attributes={"semif.skill": phase.skill}, end_ns=end)


def trace_phase(
    name: str,
    mark: PhaseMark,
    rows: Sequence[LogRow],
    *,
    skill: str | None = None,
    kinds: tuple[str, ...] | None = None,
) -> None:
    """Record phase ``name``, over by now, from ``mark`` to now, with the decision rows logged since the mark (those
    of ``kinds`` only, when given) as its children: a phase that ran in another process (a code body's ``act``)."""
    source = spans.source()
    if not source.enabled:
        return
    end = telemetry.now_ns()
    span = source.start_span(f"semif.{name}", start_ns=mark.ns, attributes={"semif.skill": skill})
    _decision_spans(source, span, mark, rows, end, kinds)
    source.end_span(span, end_ns=end)


def _decision_spans(
    source: spans.SpanSource,
    phase: spans.Span,
    mark: PhaseMark,
    rows: Sequence[LogRow],
    end: int,
    kinds: tuple[str, ...] | None,
) -> None:
    """The decision rows logged since ``mark`` as spans under ``phase``, laid end to end from its start."""
    cursor = mark.ns
    for row in rows[mark.rows :]:
        if not isinstance(row, DecisionRow) or (kinds is not None and row.kind not in kinds):
            continue
        took = int(float(row.latency_ms or 0.0) * 1_000_000)
        start, cursor = cursor, min(cursor + took, end)
        decision = source.start_span(
            "semif.decision", parent=phase, start_ns=start, attributes=decision_attributes(row)
        )
        source.end_span(decision, end_ns=cursor)


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
