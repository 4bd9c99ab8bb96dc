"""Batch runs: many requests, one logged run each, on a cluster or in this process.

A batch file is JSON lines, one request per line: ``{"text": ...}``, with an
optional ``"skill"`` (run it without routing) and ``"id"`` (the run's id; a
fresh one otherwise). Workers run the requests with a skill runner that logs
nothing; each request's rows come back to the driver, which appends them to
the decision log once, in request order: the log holds what one local run
per request would have written. A request whose worker died is run again,
so a skill may have acted twice for it, but its rows are written once.

Runs in one workspace hold its act lock (:class:`~semif_agent.loop.act_lock.ActLock`)
while they act, so the changes each run observes in the data dirs are its own;
routing (the embedding) and the assessment run in parallel.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from functools import partial
from pathlib import Path
from typing import TYPE_CHECKING, TypedDict

from .._text import clip
from ..errors import SemifError, UserError
from ..loop.act_lock import ActLock
from ..records import DecisionRow, OutcomeRow
from ..routing.evaluate import request_lines
from .pool import Batch, RayPool, Result, State, Status, batches_of

if TYPE_CHECKING:
    from ..loop.runner import SkillRunner
    from ..records import DecisionLog
    from ..workspace import Workspace

RUN_BATCH = 1
SHOWN_TEXT = 200  # characters of a request that could not run shown in its entry (it may be over the cap)
"""Requests per batch: a retried batch runs as few skills again as possible."""


@dataclass(frozen=True)
class BatchRequest:
    """One line of a batch file."""

    text: str
    skill: str | None = None
    id: str | None = None


class RunSummary(TypedDict, total=False):
    """One request's entry in a :class:`BatchReport`: its run's summary, or ``error_before_run``."""

    index: int
    text: str
    error_before_run: str
    run_id: str
    skill: str | None
    outcome: str
    reason: str
    error: str | None
    handed_back: bool  # the act gate held the route back: nothing was done
    candidates: list[dict[str, object]]  # then, the skills it was unsure between


RequestResult = tuple[int, list[DecisionRow | OutcomeRow], RunSummary]
"""A request's index in the batch, the rows its run made, and its summary."""


@dataclass
class BatchReport:
    """What a batch did: one entry per request, in order (``run`` is the run's summary, or ``error`` why it did not run)."""

    runs: list[RunSummary] = field(default_factory=list)
    rows_written: int = 0

    @property
    def failed(self) -> list[RunSummary]:
        return [r for r in self.runs if r.get("error_before_run")]

    @property
    def handed_back(self) -> list[RunSummary]:
        """The runs the act gate held back: nothing was done for them."""
        return [r for r in self.runs if r.get("handed_back")]


def load_requests(path: str | Path) -> list[BatchRequest]:
    """The requests of a batch file; a bad line is an error naming the file and line."""
    requests = []
    for number, item in request_lines(path, "batch"):
        for key in ("skill", "id"):
            if item.get(key) is not None and (not isinstance(item[key], str) or not item[key].strip()):
                raise UserError(f'{path}:{number}: "{key}" must be a non-empty string')
        requests.append(BatchRequest(item["text"], item.get("skill"), item.get("id")))
    if not requests:
        raise UserError(f"{path}: the batch has no requests")
    ids = [r.id for r in requests if r.id is not None]
    if len(ids) != len(set(ids)):
        raise UserError(f'{path}: two requests have the same "id"')
    return requests


def run_batch(
    pool: RayPool | LocalPool,
    setup: Callable[[], SkillRunner],
    requests: Sequence[BatchRequest],
    log: DecisionLog,
    *,
    progress: Callable[[Status], None] | None = None,
    yes: bool = False,
) -> BatchReport:
    """Run every request with the runner ``setup()`` builds on each worker; append each run's rows to ``log`` once.

    ``pool`` is a :class:`~.pool.RayPool` or a :class:`LocalPool`. A request
    that cannot run (an unknown skill, a bad request) is reported in its entry,
    and the others run. ``yes`` acts on the requests the act gate would hand back.
    """
    report = BatchReport()
    written: set[int] = set()

    def take(_: int, results: list[RequestResult]) -> None:
        for index, rows, summary in results:
            if index in written:  # a batch's result is taken once; a request's rows are written once
                continue
            log.extend(rows)
            written.add(index)
            report.rows_written += len(rows) if getattr(log, "enabled", True) else 0
            report.runs.append({"index": index, **summary})

    pool.map(
        setup,
        partial(_run_requests, yes=yes),
        batches_of(list(enumerate(requests)), RUN_BATCH),
        on_result=take,
        stage="running",
        progress=progress,
    )
    return report


class LocalPool:
    """The pool's interface in this process: ``setup`` once, then each batch in turn (no Ray needed)."""

    def map(
        self,
        setup: Callable[[], State],
        task: Callable[[State, Batch], Result],
        batches: Sequence[Batch],
        *,
        on_result: Callable[[int, Result], None],
        sizes: Sequence[int] | None = None,
        stage: str = "",
        progress: Callable[[Status], None] | None = None,
    ) -> None:
        import time

        sizes = list(sizes) if sizes is not None else [len(b) for b in batches]
        state, started, done = setup(), time.perf_counter(), 0
        for index, batch in enumerate(batches):
            on_result(index, task(state, batch))
            done += sizes[index]
            if progress is not None:
                progress(Status(stage, done, sum(sizes), 0, time.perf_counter() - started, 1))


def run_lock(workspace: Workspace) -> ActLock:
    """The act lock runs in ``workspace`` share, batch or not (see :mod:`semif_agent.loop.act_lock`)."""
    return ActLock.of(workspace)


def _run_requests(
    runner: SkillRunner, batch: list[tuple[int, BatchRequest]], *, yes: bool = False
) -> list[RequestResult]:
    """Run each request of ``batch`` (``yes``: acting where the gate would hand it back); return its index, the
    rows its run made, and its summary."""
    from ..skills import Request

    out: list[RequestResult] = []
    for index, item in batch:
        try:
            request = Request(item.text, id=item.id) if item.id else Request(item.text)
            result = runner.run(request, skill=item.skill, yes=yes)
        except SemifError as exc:
            out.append((index, [], {"text": clip(item.text, SHOWN_TEXT, one_line=False), "error_before_run": str(exc)}))
            continue
        summary: RunSummary = {
            "run_id": result.run_id,
            "text": item.text,
            "skill": result.skill,
            "outcome": result.assessment.label,
            "reason": result.assessment.reason,
            "error": result.error,
            "handed_back": result.handed_back,
            "candidates": [c.to_dict() for c in result.gate.candidates] if result.handed_back and result.gate else [],
        }
        out.append((index, result.rows, summary))
    return out
