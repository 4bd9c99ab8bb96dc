"""The decision log, indexed once in memory and kept up to date by reading only what was appended.

A log of 100,000 decisions is read once, when the server starts; after that,
:meth:`LogIndex.refresh` reads the bytes written since the last call (it is
cheap to call on every request). Each run keeps what the runs page lists and
filters on (its :class:`~semif_agent.records.RunRecord`, the same one
``semif log`` prints, its time, engines and kinds, and the confidence of its
last routing decision) and where its rows are in the file, so one run's rows
are read back without reading the log again.

Only whole lines are read: a line still being written is left for the next
refresh; a line that is not JSON (torn by a crash) is skipped and counted.
A log that shrank or was replaced is read again from the start.
"""

from __future__ import annotations

import os
import threading
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import datetime
from pathlib import Path
from typing import BinaryIO

from ..records import AnyRow, DecisionLog, DecisionRow, LogRow, ModelCallRow, OutcomeRow, RunRecord, run_records
from ..records.kinds import LABEL_KIND, ROUTE_KIND, UNDO_KIND, UNLABEL_KIND, is_run_record, parse_row
from ..records.runs import routed_to, run_source
from ..records.to_label import route_margin

PAGE_SIZE = 50
READ_CHUNK = 1 << 22


@dataclass
class IndexedRun:
    """One run as the index holds it: the rows that make its record, and where all its rows are."""

    run_id: str
    started: float | None = None
    ended: float | None = None  # the time of its last row (labels aside)
    engines: set[str] = field(default_factory=set)
    kinds: set[str] = field(default_factory=set)
    offsets: list[tuple[int, int]] = field(default_factory=list)  # (start, length) of each row in the file
    record_rows: list[LogRow] = field(default_factory=list)  # slim rows run_records() reads
    confidence: float | None = None  # the probability of the last routing decision's choice
    margin: float | None = None  # how far its closest routing decision's choice was ahead of the next option
    routed: bool = False  # whether record_rows holds the row naming the skill it went to
    record: RunRecord | None = None
    lowered: str | None = None  # the request in lower case, for search

    def add(self, row: LogRow, start: int, length: int) -> None:
        self.offsets.append((start, length))
        kind = row.kind
        if row.ts is not None and kind not in (LABEL_KIND, UNDO_KIND, UNLABEL_KIND):
            self.started = float(row.ts) if self.started is None else self.started
            self.ended = float(row.ts)
        self.kinds.add(kind)
        if is_run_record(kind):
            self.record_rows.append(slim(row))
            self.record = self.lowered = None
            return
        engine = getattr(row, "engine", None)
        if isinstance(engine, str):
            self.engines.add(engine)
        if not any(not is_run_record(r.kind) for r in self.record_rows) or run_source(row) == "agent":
            self.record_rows.append(slim(row))  # its first decision (the request), and one saying it is an agent's
        if not self.routed and routed_to(row) is not None:  # the skill it went to, should its outcome be lost
            self.routed = True
            self.record_rows.append(slim(row))
        margin = route_margin(row)
        if margin is not None:
            self.margin = margin if self.margin is None else min(self.margin, margin)
        if isinstance(row, DecisionRow) and kind == ROUTE_KIND:
            probability = (row.probabilities or {}).get(row.selected)
            self.confidence = float(probability) if isinstance(probability, (int, float)) else None
        self.record = self.lowered = None

    def summary(self) -> RunRecord:
        """The run's record (request, chosen skill, outcome, label), as ``semif log`` builds it."""
        if self.record is None:
            self.record = (
                run_records(self.record_rows)[0]
                if self.record_rows
                else RunRecord(self.run_id, None, None, None, "run")
            )
        return self.record

    def searchable(self) -> str:
        if self.lowered is None:
            self.lowered = (self.summary().request or "").lower()
        return self.lowered


def slim(row: LogRow) -> LogRow:
    """``row`` without what its run's record does not read (:func:`~semif_agent.records.run_records`: a decision's
    options and scores, an outcome's action log, result, changes and output), so 100,000 runs stay small in memory."""
    if isinstance(row, DecisionRow):
        return row.model_copy(update={"options": [], "scores": {}, "probabilities": None, "usage": None})
    if isinstance(row, OutcomeRow):
        dropped = ("action_log", "new_state", "changes", "diffs", "output")
        return row.model_copy(update=dict.fromkeys(dropped))
    return row


@dataclass(frozen=True)
class RunFilter:
    """What the runs page asks for: words of the request, the skill chosen, outcome, label, engine, dates."""

    text: str = ""
    skill: str = ""
    outcome: str = ""  # success | failure | unclear | none (not assessed): the true outcome
    label: str = ""  # labelled | unlabelled
    engine: str = ""
    since: str = ""  # YYYY-MM-DD, inclusive
    until: str = ""  # YYYY-MM-DD, inclusive

    def matches(self, run: IndexedRun, record: RunRecord) -> bool:
        if self.text and not all(word in run.searchable() for word in self.text.lower().split()):
            return False
        if self.skill and (record.skill or "") != self.skill:
            return False
        if self.outcome and (record.true_outcome or "none") != self.outcome:
            return False
        if self.label and (record.labelled_by is not None) != (self.label == "labelled"):
            return False
        if self.engine and self.engine not in run.engines:
            return False
        if self.since or self.until:
            day = _day(run.started)
            if day is None or (self.since and day < self.since) or (self.until and day > self.until):
                return False
        return True

    def __bool__(self) -> bool:
        return any(getattr(self, name) for name in self.__dataclass_fields__)


def _day(ts: float | None) -> str | None:
    return datetime.fromtimestamp(ts).strftime("%Y-%m-%d") if ts is not None else None


class AppendedRows:
    """A JSON-lines file read incrementally: :meth:`refresh` hands each new whole row to :meth:`_add_row`."""

    def __init__(self, path: str | Path) -> None:
        self.path = Path(path)
        self._lock = threading.Lock()
        self.version = 0  # bumped whenever a row was added: the live view's signal
        self._reset()

    def _reset(self) -> None:
        self.offset = 0
        self.identity: tuple[int, int] | None = None
        self.skipped = 0
        self.rows = 0

    def _add_row(self, row: AnyRow, start: int, length: int) -> bool:
        raise NotImplementedError

    def open(self) -> BinaryIO:
        """The file, opened for reading as the log itself opens it: never through a link, a regular file only."""
        return os.fdopen(DecisionLog(self.path)._open(os.O_RDONLY), "rb", buffering=0)

    def refresh(self, progress: Callable[[int, int], None] | None = None) -> bool:
        """Read the rows appended since the last refresh; True when there were any.

        ``progress(done, total)`` is told the bytes read so far of those to read.
        """
        with self._lock:
            try:
                handle = self.open()
            except FileNotFoundError:
                if self.rows:
                    self._reset()
                    self.version += 1
                    return True
                return False
            with handle:
                status = os.fstat(handle.fileno())
                identity = (status.st_dev, status.st_ino)
                if self.identity is not None and (identity != self.identity or status.st_size < self.offset):
                    self._reset()  # replaced or cut short: read it again
                    self.version += 1
                self.identity = identity
                if status.st_size == self.offset:
                    return False
                return self._read_from(handle, status.st_size, progress)

    def _read_from(self, handle: BinaryIO, size: int, progress: Callable[[int, int], None] | None) -> bool:
        added = False
        position = begun = self.offset
        handle.seek(position)
        pending = b""
        while position + len(pending) < size:
            chunk = handle.read(min(READ_CHUNK, size - position - len(pending)))
            if not chunk:
                break
            data = pending + chunk
            end = data.rfind(b"\n")
            if end < 0:
                pending = data
                continue
            added |= self._add_lines(data[: end + 1], position)
            position += end + 1
            pending = data[end + 1 :]
            if progress is not None:
                progress(position - begun, size - begun)
        self.offset = position  # a last line without its newline is read again next time
        if added:
            self.version += 1
        return added

    def _add_lines(self, data: bytes, base: int) -> bool:
        added = False
        start = 0
        while start < len(data):
            end = data.index(b"\n", start)
            if end > start:
                row = parse_row(data[start:end]) if data[start:end].strip() else None
                if row is not None:
                    if self._add_row(row, base + start, end - start):
                        self.rows += 1
                        added = True
                elif data[start:end].strip():
                    self.skipped += 1
            start = end + 1
        return added

    def read_row(self, handle: BinaryIO, start: int, length: int) -> AnyRow | None:
        handle.seek(start)
        return parse_row(handle.read(length))


class LogIndex(AppendedRows):
    """The runs of one decision log, in memory; :meth:`refresh` reads what was appended since."""

    def _reset(self) -> None:
        super()._reset()
        self.runs: dict[str, IndexedRun] = {}
        self.order: list[str] = []  # run ids in the order they first appear
        self._choices: tuple[int, dict[str, list[str]]] | None = None

    def _add_row(self, row: AnyRow, start: int, length: int) -> bool:
        run_id = row.run_id
        if not isinstance(run_id, str):
            return False
        run = self.runs.get(run_id)
        if run is None:
            if row.kind in (
                LABEL_KIND,
                UNDO_KIND,
                UNLABEL_KIND,
            ):  # a label of a run this log does not hold makes no run
                return False
            run = self.runs[run_id] = IndexedRun(run_id)
            self.order.append(run_id)
        run.add(row, start, length)
        return True

    def page(
        self, wanted: RunFilter, page: int = 1, size: int = PAGE_SIZE
    ) -> tuple[list[tuple[IndexedRun, RunRecord]], int]:
        """The runs that match, newest first: the ``page``-th ``size`` of them, and how many match in all."""
        first = max(0, (page - 1) * size)
        if not wanted:
            end = max(0, len(self.order) - first)
            newest = self.order[max(0, end - size) : end][::-1]
            return [(self.runs[run_id], self.runs[run_id].summary()) for run_id in newest], len(self.order)
        shown, total = [], 0
        for run_id in reversed(self.order):
            run = self.runs[run_id]
            record = run.summary()
            if wanted.matches(run, record):
                if first <= total < first + size:
                    shown.append((run, record))
                total += 1
        return shown, total

    def rows_of(self, run_id: str) -> list[AnyRow]:
        """Every row of one run, in log order, read from where the index saw them."""
        run = self.runs.get(run_id)
        if run is None:
            return []
        with self.open() as handle:
            rows = [self.read_row(handle, start, length) for start, length in run.offsets]
        return [row for row in rows if row is not None]

    def records(self) -> list[tuple[IndexedRun, RunRecord]]:
        """Every run with its record, in log order."""
        return [(self.runs[run_id], self.runs[run_id].summary()) for run_id in self.order]

    def choices(self) -> dict[str, list[str]]:
        """The values the filters offer: skills chosen and engines used."""
        if self._choices is not None and self._choices[0] == self.version:
            return self._choices[1]
        skills: set[str] = set()
        engines: set[str] = set()
        for run in self.runs.values():
            engines |= run.engines
            skill = run.summary().skill
            if skill:
                skills.add(skill)
        self._choices = (self.version, {"skills": sorted(skills), "engines": sorted(engines)})
        return self._choices[1]


class CallIndex(AppendedRows):
    """The model-call log: when each call was made, for what, and where its row is."""

    def _reset(self) -> None:
        super()._reset()
        self.calls: list[tuple[float, str | None, str | None, int, int]] = []  # (ts, run_id, purpose, start, length)

    def _add_row(self, row: AnyRow, start: int, length: int) -> bool:
        if row.ts is None or not isinstance(row, ModelCallRow):
            return False
        purpose = row.context.get("purpose")
        self.calls.append((float(row.ts), row.run_id, purpose if isinstance(purpose, str) else None, start, length))
        return True

    def calls_of(self, run_id: str, started: float | None, ended: float | None) -> list[ModelCallRow]:
        """The calls made for ``run_id``: those that name it, else those of ``semif run`` made while it ran."""
        wanted = [c for c in self.calls if c[1] == run_id]
        if not wanted and started is not None and ended is not None:
            wanted = [c for c in self.calls if c[1] is None and c[2] == "run" and started <= c[0] <= ended]
        if not wanted:
            return []
        with self.open() as handle:
            rows = [self.read_row(handle, start, length) for _, _, _, start, length in wanted]
        return [row for row in rows if isinstance(row, ModelCallRow)]
