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
with the builders of :mod:`.rows` (see the table in :mod:`.kinds`). No row
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
from pathlib import Path
from typing import Any, Protocol, Unpack

from ..errors import LogError, UserError, check_type
from ._fit import ROW_BYTES, fit_row
from .kinds import LABEL_KIND, UNLABEL_KIND, check_row, is_run_record
from .rows import Row, UnlabelRow
from .runs import LabelGiven, RunRecord, fold_labels, label_row, persons_labels, resolve_run_id, run_records

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
            line = json.dumps(full, ensure_ascii=False, default=str)
            if len(line) > ROW_BYTES // 4 and len(line.encode("utf-8")) > ROW_BYTES:  # cut only a row over the cap
                line = json.dumps(fit_row(full), ensure_ascii=False, default=str)
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

    def read(self, *, with_outcomes: bool = False, kinds: Collection[str] | None = None) -> Iterator[dict[str, Any]]:
        """The rows in order. Unparseable lines are skipped with a warning.

        With ``kinds`` only rows of those kinds, and only the lines that name one
        of them are parsed: a few kinds of a large log are read at the cost of
        scanning its bytes.

        With ``with_outcomes`` only the decision rows are yielded: their run's
        outcome row is folded into their ``outcome`` field, and its label rows,
        if any, into a ``label`` field (``{skill?, outcome?, by, note?}``, the
        latest label winning field by field).
        """
        if with_outcomes:
            rows = list(self.read())
            outcomes = {r["run_id"]: r.get("outcome") for r in rows if r.get("kind") == "outcome"}
            labels = fold_labels(rows)
            for row in rows:
                if is_run_record(row.get("kind")):
                    continue
                row_run = str(row.get("run_id"))
                joined = {**row, "outcome": outcomes.get(row_run)}
                label = labels.get(row_run)
                if label is not None:
                    joined["label"] = label.to_dict()
                yield joined
            return
        try:
            handle = os.fdopen(self._open(os.O_RDONLY), "rb")
        except FileNotFoundError:
            return
        wanted = None if kinds is None else [json.dumps(kind).encode() for kind in kinds]
        with handle:
            for number, raw in enumerate(handle, start=1):
                if not raw.strip() or (wanted is not None and not any(name in raw for name in wanted)):
                    continue
                try:
                    row = json.loads(raw)
                    if not isinstance(row, dict):
                        raise ValueError("not an object")
                except ValueError:
                    torn = not raw.endswith(b"\n")
                    what = "torn last line (a write cut short)" if torn else "unreadable line"
                    warnings.warn(f"{self.path}:{number}: skipped {what}", TornLineWarning, stacklevel=2)
                    continue
                if kinds is None or row.get("kind") in kinds:
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
    ) -> list[dict[str, Any]]:
        """Decision rows (outcomes and labels joined) matching every given criterion.

        ``outcome`` is the run's true outcome: a person's label beats the
        assessment. ``labelled`` keeps only the rows of labelled (True) or
        unlabelled (False) runs.
        """
        rows = list(self.read(with_outcomes=True))
        if last_runs is not None:
            order: list[str] = []
            for row in rows:
                row_run = str(row.get("run_id"))
                if row_run not in order:
                    order.append(row_run)
            keep = set(order[-last_runs:]) if last_runs > 0 else set()
            rows = [r for r in rows if str(r.get("run_id")) in keep]
        wanted = {"run_id": run_id, "skill": skill, "kind": kind, "engine": engine}
        rows = [r for r in rows if all(v is None or r.get(k) == v for k, v in wanted.items())]
        if outcome is not None:
            rows = [r for r in rows if (r.get("label") or {}).get("outcome", r.get("outcome")) == outcome]
        if labelled is not None:
            rows = [r for r in rows if ("label" in r) == labelled]
        return rows

    def runs(self) -> list[RunRecord]:
        """One record per run, in log order: its request, chosen skill, outcome and label."""
        return run_records(self.read())

    def run(self, run_id: str) -> RunRecord:
        """The logged run ``run_id`` names (the whole id or a unique prefix); else a UserError."""
        records = {record.run_id: record for record in self.runs()}
        return records[resolve_run_id(run_id, records, where=f"the decision log {self.path}")]

    def add_label(self, run_id: str, *, by: str, **given: Unpack[LabelGiven]) -> dict[str, Any]:
        """Append a person's label of a logged run (``run_id`` may be a unique prefix); the row written.

        ``skill`` is where the request should have gone, ``no_skill`` that no
        skill fits, ``outcome`` the real outcome (success or failure). Only
        what is given is labelled; earlier rows are never rewritten. Checking
        that ``skill`` names a skill of the tree is the caller's.
        """
        label = label_row(run_id, by=by, **given)
        row = {"v": SCHEMA_VERSION, "ts": time.time(), **label.to_row(), "run_id": self.run(run_id).run_id}
        self.append(row)
        return row

    def take_back_labels(self, run_id: str, *, by: str) -> dict[str, Any]:
        """Append an unlabel row taking back every person's label of ``run_id`` (a unique prefix will do); the row.

        A run no person labelled (or whose labels were taken back already) is a one-line :class:`UserError`.
        """
        run = self.run(run_id)
        if not persons_labels(self.read(kinds=(LABEL_KIND, UNLABEL_KIND)), run.run_id):
            raise UserError(f"run {run.run_id} has no label to take back")
        if not by.strip():
            raise UserError("taking a label back needs the name of who does it")
        row = {"v": SCHEMA_VERSION, "ts": time.time(), **UnlabelRow(run.run_id, by=by.strip()).to_row()}
        self.append(row)
        return row


def _ends_mid_line(fd: int) -> bool:
    size = os.fstat(fd).st_size
    if size == 0:
        return False
    return os.pread(fd, 1, size - 1) != b"\n"
