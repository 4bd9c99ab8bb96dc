"""The decision log: one JSON line per decision, a training row.

Append-only and crash-safe. Each row is written with a single ``write`` on a
file opened with ``O_APPEND`` (under an advisory lock, so processes can share a
log); a process killed mid-write leaves at most a torn last line, which
readers skip with a warning, and the next writer starts on a fresh line so it
never glues a row onto the torn one.

The log is opened without following a symbolic link and must be a regular
file: a link, a directory or anything else in its place is a :class:`LogError`,
and nothing is written anywhere.

The outcome of a run is known only after its decisions were logged. Rather
than rewrite rows, the run appends one ``kind: "outcome"`` row; readers join
it onto the run's decision rows (``outcome`` field). A person's label of a run
is appended the same way, as a ``kind: "label"`` row (see :mod:`.runs`), and
joined as ``label``.

Every row is checked before anything is written: a row of an unknown kind,
or with a field of the wrong shape (``"run_id": 42``), is a :class:`LogError`
naming the field, and none of the rows given is written. Rows are built
with the models of :mod:`.rows` (see the table in :mod:`.kinds`), and read
back as them: :meth:`DecisionLog.read` yields each row as the model of its
kind (:data:`~.kinds.AnyRow`), an old or hand-edited row read leniently. No row
is larger than :data:`~._fit.ROW_BYTES` (256 KiB of JSON): the largest
values of a row over it (a skill's action log, result or output) are cut,
each ending in how many bytes were cut (:mod:`._fit`).
"""

from __future__ import annotations

import errno
import json
import os
import stat
import time
import warnings
from collections.abc import Collection, Iterable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Literal, Protocol, Unpack, overload

from .._json import json_line
from ..errors import LogError, UserError, check_type
from ._fit import ROW_BYTES, fit_row
from .calls import ModelCallRow
from .kinds import LABEL_KIND, UNLABEL_KIND, AnyRow, check_row, parse_row
from .rows import DecisionRow, GenerateRow, LabelRow, OutcomeRow, ProposeRow, Row, UnlabelRow
from .runs import Label, LabelGiven, RunRecord, fold_labels, label_row, persons_labels, resolve_run_id, run_records

SCHEMA_VERSION = 1

try:  # POSIX advisory locks; elsewhere appends are still line-atomic in practice.
    import fcntl
except ImportError:  # pragma: no cover
    fcntl = None  # type: ignore[assignment]  # no fcntl on this platform: locking is skipped


class TornLineWarning(UserWarning):
    """A line of the log could not be parsed (usually a write cut by a crash)."""


class Builder(Protocol):
    """A row's builder (:mod:`.rows`): it knows its row."""

    def to_row(self) -> Row: ...


StepRow = DecisionRow | ProposeRow | GenerateRow | ModelCallRow
"""A row of a run's own steps: a decision, a proposed or generated skill (or a model call in a shared log)."""


@dataclass(frozen=True)
class Joined:
    """A decision (or step) row with its run's outcome and label joined: what ``semif log --decisions`` lists."""

    row: StepRow
    outcome: str | None  # the assessment's label of the run, from its outcome row (None: no outcome yet)
    label: Label | None  # the run's labels folded (None: nobody labelled it)

    @property
    def true_outcome(self) -> str | None:
        """The run's real outcome: a label's when one says it, else the assessment's."""
        return self.label.outcome if self.label is not None and self.label.outcome is not None else self.outcome

    def to_dict(self) -> Row:
        """The row as ``--json`` shows it: its fields, ``outcome``, and ``label`` when there is one."""
        joined = {**self.row.to_dict(), "outcome": self.outcome}
        if self.label is not None:
            joined["label"] = self.label.to_dict()
        return joined


class _LogTable(Protocol):
    @property
    def fsync(self) -> bool: ...


class _Settings(Protocol):
    @property
    def log(self) -> _LogTable: ...


class LoggingPlace(Protocol):
    """What a workspace's log is built from: where the log is, and ``[log]`` (a workspace is one)."""

    @property
    def log_path(self) -> Path: ...

    @property
    def settings(self) -> _Settings: ...


class DecisionLog:
    """An append-only JSON-lines file of decision rows."""

    def __init__(self, path: str | Path, *, fsync: bool = False, enabled: bool = True) -> None:
        check_type("the decision log's path", path, (str, os.PathLike))
        self.path = Path(path)
        self.fsync = fsync
        self.enabled = enabled

    @classmethod
    def for_workspace(cls, workspace: LoggingPlace, *, enabled: bool = True) -> DecisionLog:
        """The decision log of ``workspace``: at its ``[log] path``, synced as its ``[log] fsync`` says.

        ``enabled`` is the caller's: ``[log] enabled = false`` turns off the rows runs append
        (:meth:`semif_agent.loop.settings.RunSettings.build_log`), not the labels and undos a person asks for.
        """
        return cls(workspace.log_path, fsync=workspace.settings.log.fsync, enabled=enabled)

    def append(self, row: Row | Builder) -> None:
        """Append one row, or the row of a builder (``v`` and ``ts`` are added); a row of the wrong shape is refused."""
        self.extend([row])

    def extend(self, rows: Iterable[Row | Builder]) -> None:
        """Append rows (or builders' rows) at once; if one is of the wrong shape, none is written."""
        if not self.enabled:
            return
        lines = []
        for given in rows:
            row = given if isinstance(given, dict) else given.to_row()
            try:
                check_row(row)
            except LogError as exc:
                raise LogError(
                    f"refusing to write to the decision log {self.path}: {exc}; nothing was written"
                ) from None
            full = {"v": SCHEMA_VERSION, "ts": time.time(), **row}
            line = json_line(full)
            if len(line) > ROW_BYTES // 4 and len(line.encode("utf-8")) > ROW_BYTES:  # cut only a row over the cap
                line = json_line(fit_row(full))
            lines.append(line + "\n")
        if not lines:
            return
        data = "".join(lines).encode("utf-8")
        fd = self._open(os.O_RDWR | os.O_APPEND | os.O_CREAT)
        try:
            if fcntl is not None:
                fcntl.flock(fd, fcntl.LOCK_EX)
            if _ends_mid_line(fd):
                data = b"\n" + data
            view = memoryview(data)
            while view:
                written = os.write(fd, view)
                view = view[written:]
            if self.fsync:
                os.fsync(fd)
        except OSError as exc:
            raise LogError(f"cannot write the decision log {self.path}: {exc.strerror}") from exc
        finally:
            os.close(fd)  # closing releases the lock

    def _open(self, flags: int) -> int:
        """A descriptor of the log opened with ``flags``, never through a link; only a regular file is accepted."""
        nofollow = getattr(os, "O_NOFOLLOW", 0) | getattr(os, "O_NONBLOCK", 0) | getattr(os, "O_CLOEXEC", 0)
        try:
            try:
                fd = os.open(self.path, flags | nofollow, 0o644)
            except FileNotFoundError:
                if not flags & os.O_CREAT:
                    raise
                self.path.parent.mkdir(parents=True, exist_ok=True)  # the first write makes the folder
                fd = os.open(self.path, flags | nofollow, 0o644)
        except FileNotFoundError:
            if flags & os.O_CREAT:
                raise LogError(f"cannot open the decision log {self.path}: its folder is missing") from None
            raise
        except OSError as exc:
            if exc.errno == errno.ELOOP:
                raise LogError(
                    f"the decision log {self.path} is a symbolic link; refusing to follow it "
                    "(replace it with a regular file)"
                ) from exc
            if exc.errno == errno.EISDIR:
                raise LogError(f"the decision log {self.path} is a directory, not a file") from exc
            raise LogError(f"cannot open the decision log {self.path}: {exc.strerror}") from exc
        mode = os.fstat(fd).st_mode
        if not stat.S_ISREG(mode):
            os.close(fd)
            what = "a directory" if stat.S_ISDIR(mode) else "not a regular file"
            raise LogError(f"the decision log {self.path} is {what}; refusing to use it")
        return fd

    @overload
    def read(
        self,
        *,
        with_outcomes: Literal[False] = False,
        kinds: Collection[str] | None = None,
        mentioning: str | None = None,
    ) -> Iterator[AnyRow]: ...

    @overload
    def read(self, *, with_outcomes: Literal[True], kinds: None = None) -> Iterator[Joined]: ...

    def read(
        self, *, with_outcomes: bool = False, kinds: Collection[str] | None = None, mentioning: str | None = None
    ) -> Iterator[AnyRow | Joined]:
        """The rows in order, each as the model of its kind. Unparseable lines are skipped with a warning.

        With ``kinds`` only rows of those kinds, and only the lines that name one
        of them are parsed: a few kinds of a large log are read at the cost of
        scanning its bytes. With ``mentioning`` only the rows whose line holds
        that text (as JSON writes it), parsed alone the same way: the rows of
        one run id, say.

        With ``with_outcomes`` only the decision (and step) rows are yielded,
        each :class:`Joined` with its run's outcome and its labels folded
        (the latest label winning field by field).
        """
        if with_outcomes:
            yield from self.joined()
            return
        yield from self._rows(kinds, mentioning)

    def joined(self) -> Iterator[Joined]:
        """The decision (and step) rows, each with its run's outcome and label (see :meth:`read`)."""
        rows = list(self._rows(None))
        outcomes = {row.run_id: row.outcome for row in rows if isinstance(row, OutcomeRow)}
        labels = fold_labels(rows)
        for row in rows:
            if isinstance(row, (DecisionRow, ProposeRow, GenerateRow, ModelCallRow)):  # not a record of the run
                run = str(row.run_id)
                yield Joined(row, outcomes.get(run), labels.get(run))

    def _rows(self, kinds: Collection[str] | None, mentioning: str | None = None) -> Iterator[AnyRow]:
        try:
            handle = os.fdopen(self._open(os.O_RDONLY), "rb")
        except FileNotFoundError:
            return
        with handle:
            if mentioning is None:
                yield from self._parsed(handle, kinds, 1)
            else:
                needle = json.dumps(mentioning, ensure_ascii=False)[1:-1].encode("utf-8")
                yield from self._parsed((line for line in handle if needle in line), kinds, None)

    def read_after(self, offset: int, *, kinds: Collection[str] | None = None) -> tuple[list[AnyRow], int]:
        """The whole rows written from byte ``offset`` on (of ``kinds``, when given), and the offset after the last of
        them: what a reader that keeps up with the log reads next. A last line not ended yet (being written, or torn)
        is left for the next read. A log shorter than ``offset`` (replaced) or missing reads as no rows: the caller
        compares sizes to tell."""
        try:
            handle = os.fdopen(self._open(os.O_RDONLY), "rb")
        except FileNotFoundError:
            return [], offset
        with handle:
            handle.seek(offset)
            data = handle.read()
        end = data.rfind(b"\n") + 1
        rows = list(self._parsed(data[:end].splitlines(keepends=True), kinds, None))
        return rows, offset + end

    def _parsed(self, lines: Iterable[bytes], kinds: Collection[str] | None, first: int | None) -> Iterator[AnyRow]:
        """The rows of ``lines`` (of ``kinds``); a line that does not parse is skipped with a warning naming its
        number (counted from ``first``; None: from where a read began, unnumbered)."""
        wanted = None if kinds is None else [json.dumps(kind).encode() for kind in kinds]
        for number, raw in enumerate(lines, start=first or 1):
            if not raw.strip() or (wanted is not None and not any(name in raw for name in wanted)):
                continue
            row = parse_row(raw)
            if row is None:
                torn = not raw.endswith(b"\n")
                what = "torn last line (a write cut short)" if torn else "unreadable line"
                where = f"{self.path}:{number}" if first is not None else str(self.path)
                warnings.warn(f"{where}: skipped {what}", TornLineWarning, stacklevel=4)
                continue
            if kinds is None or row.kind in kinds:
                yield row

    def filter(
        self,
        *,
        run_id: str | None = None,
        skill: str | None = None,
        kind: str | None = None,
        outcome: str | None = None,
        engine: str | None = None,
        last_runs: int | None = None,
        labelled: bool | None = None,
    ) -> list[Joined]:
        """Decision rows (outcomes and labels joined) matching every given criterion.

        ``outcome`` is the run's true outcome: a person's label beats the
        assessment. ``labelled`` keeps only the rows of labelled (True) or
        unlabelled (False) runs.
        """
        rows = list(self.joined())
        if last_runs is not None:
            order = list(dict.fromkeys(str(joined.row.run_id) for joined in rows))
            keep = set(order[-last_runs:]) if last_runs > 0 else set()
            rows = [joined for joined in rows if str(joined.row.run_id) in keep]
        rows = [
            joined
            for joined in rows
            if (run_id is None or joined.row.run_id == run_id)
            and (skill is None or getattr(joined.row, "skill", None) == skill)
            and (kind is None or joined.row.kind == kind)
            and (engine is None or getattr(joined.row, "engine", None) == engine)
        ]
        if outcome is not None:
            rows = [joined for joined in rows if joined.true_outcome == outcome]
        if labelled is not None:
            rows = [joined for joined in rows if (joined.label is not None) == labelled]
        return rows

    def runs(self) -> list[RunRecord]:
        """One record per run, in log order: its request, chosen skill, outcome and label."""
        return run_records(self.read())

    def run(self, run_id: str) -> RunRecord:
        """The logged run ``run_id`` names (the whole id or a unique prefix); else a UserError."""
        records = {record.run_id: record for record in self.runs()}
        return records[resolve_run_id(run_id, records, where=f"the decision log {self.path}")]

    def add_label(self, run_id: str, *, by: str, **given: Unpack[LabelGiven]) -> LabelRow:
        """Append a person's label of a logged run (``run_id`` may be a unique prefix); the row written.

        ``skill`` is where the request should have gone, ``no_skill`` that no
        skill fits, ``outcome`` the real outcome (success or failure). Only
        what is given is labelled; earlier rows are never rewritten. Checking
        that ``skill`` names a skill of the tree is the caller's.
        """
        label = label_row(run_id, by=by, **given)
        row = {"v": SCHEMA_VERSION, "ts": time.time(), **label.to_row(), "run_id": self.run(run_id).run_id}
        self.append(row)
        return LabelRow.model_validate(row)

    def take_back_labels(self, run_id: str, *, by: str) -> UnlabelRow:
        """Append an unlabel row taking back every person's label of ``run_id`` (a unique prefix will do); the row.

        A run no person labelled (or whose labels were taken back already) is a one-line :class:`UserError`.
        """
        run = self.run(run_id)
        if not persons_labels(self.read(kinds=(LABEL_KIND, UNLABEL_KIND)), run.run_id):
            raise UserError(f"run {run.run_id} has no label to take back")
        if not by.strip():
            raise UserError("taking a label back needs the name of who does it")
        row = {"v": SCHEMA_VERSION, "ts": time.time(), **UnlabelRow(run_id=run.run_id, by=by.strip()).to_row()}
        self.append(row)
        return UnlabelRow.model_validate(row)


def _ends_mid_line(fd: int) -> bool:
    size = os.fstat(fd).st_size
    if size == 0:
        return False
    return os.pread(fd, 1, size - 1) != b"\n"
