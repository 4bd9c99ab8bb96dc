"""Spans of skill activity, one JSON line each, shaped like OpenTelemetry spans.

Each record::

    {"trace_id": "<32 hex>", "span_id": "<16 hex>", "parent_span_id": "<16 hex>" | null,
     "name": "skill.script", "kind": "internal",
     "start_time_unix_nano": 1700000000000000000, "end_time_unix_nano": ...,
     "status": {"code": "OK" | "ERROR", "message": "..."},
     "attributes": {"skill.id": "custom@x", ...},
     "resource": {"service.name": "semif-agent", "agent.id": "..."}}

A writer is a :class:`~semif_agent.spans.SpanSource` that is also its own
first processor: the spans the runtime opens go to the writer's
:meth:`~TraceWriter.emit`, then to every processor of the process
(OpenTelemetry among them when tracing is on), so a skill script's span sits
in the workspace's file and in the trace of the run or turn that ran it. A
span opened while another is current (in the same task) becomes its child and
shares its trace id. Long text attributes are cut to a bounded excerpt
(:func:`excerpt`). :class:`JsonlTraceWriter` appends each record with one
``write`` on an ``O_APPEND`` descriptor, so concurrent writers never
interleave lines. Its file lies in a folder skill scripts may write (the
workspace), so it is opened from the descriptor of a folder the host trusts
without following a link anywhere below it (:mod:`semif_agent._beneath`),
and only a regular file of one name is written: a link, FIFO or hard link
planted there is refused with one warning and the writer traces nothing,
rather than appending spans to whatever file the link names. Before each
line it checks that the file it holds open is still the one at its path: one
put in its place is never written either (one warning, nothing traced from
then on), and a removed one is started again (with a warning), rather than
spans going on into a file no path leads to.
:class:`MemoryTraceWriter` keeps records in memory. Both
are processors too: ``add_span_processor(MemoryTraceWriter())`` keeps every
span of the process.
"""

from __future__ import annotations

import json
import os
import stat
import threading
import warnings
from collections import deque
from pathlib import Path
from typing import TypedDict, Unpack

from .._beneath import open_beneath, open_folder_beneath, open_root
from .._json import json_line, split_json_lines
from ..errors import check_number, check_type
from ..spans import EXCERPT_CHARS, SERVICE_NAME, Span, SpanProcessor, SpanRecord, SpanSource, excerpt

__all__ = [
    "EXCERPT_CHARS",
    "JsonlTraceWriter",
    "MemoryTraceWriter",
    "NullTraceWriter",
    "Span",
    "TraceWriter",
    "excerpt",
    "read_spans",
]


class WriterOptions(TypedDict, total=False):
    """What every writer takes besides its own arguments (see :class:`TraceWriter`)."""

    service_name: str
    resource: dict[str, object] | None
    excerpt_chars: int


class TraceWriter(SpanSource, SpanProcessor):
    """A span source that hands each finished record to :meth:`emit` (which subclasses define), then to the
    process's processors."""

    _keeps_spans = False

    def __init_subclass__(cls) -> None:
        super().__init_subclass__()
        cls._keeps_spans = any(
            getattr(cls, name) is not getattr(TraceWriter, name)
            for name in ("emit", "on_span_end", "end_span", "start_span")
        )

    def __init__(
        self,
        *,
        service_name: str = SERVICE_NAME,
        resource: dict[str, object] | None = None,
        excerpt_chars: int = EXCERPT_CHARS,
    ) -> None:
        super().__init__(
            service_name=service_name,
            resource=resource,
            excerpt_chars=excerpt_chars,
            processors=(self,) if self._keeps_spans else (),
        )

    def on_span_end(self, span: Span) -> None:
        self.emit(span.to_record())

    def emit(self, record: SpanRecord) -> None:
        """Store one finished span record (the default drops it)."""

    def close(self) -> None:
        """Release what the writer holds."""


class NullTraceWriter(TraceWriter):
    """A writer that keeps nothing (the runtime's writer before ``bind_workspace``)."""


class MemoryTraceWriter(TraceWriter):
    """Keeps the last ``maxlen`` records in :attr:`records` (for tests and embedding)."""

    def __init__(self, *, maxlen: int = 10_000, **options: Unpack[WriterOptions]) -> None:
        check_number("maxlen", maxlen, whole=True)
        super().__init__(**options)
        self.records: deque[SpanRecord] = deque(maxlen=maxlen)

    def emit(self, record: SpanRecord) -> None:
        self.records.append(record)


class JsonlTraceWriter(TraceWriter):
    """Appends one JSON line per span to ``path`` (opened, or made with its folders, when the first span starts).

    ``beneath`` is the folder the host trusts that ``path`` lies in (default:
    ``path``'s folder): the folders below it and the file are opened from its
    descriptor without following any link, so a script that may write there
    cannot send the host's spans elsewhere. A path that cannot be opened that
    way, or a file that is not a regular one of one name, is refused with one
    :class:`RuntimeWarning`, and the writer drops its spans from then on.
    """

    def __init__(
        self,
        path: str | os.PathLike[str],
        *,
        beneath: str | os.PathLike[str] | None = None,
        **options: Unpack[WriterOptions],
    ) -> None:
        check_type("path", path, (str, os.PathLike))
        check_type("beneath", beneath, (str, os.PathLike), optional=True)
        super().__init__(**options)
        self.path = Path(path)
        self.beneath = Path(beneath) if beneath is not None else self.path.parent
        self._fd: int | None = None
        self._identity: tuple[int, int] = (-1, -1)  # (device, inode) of the file opened
        self._refused = False
        self._lock = threading.Lock()

    def on_span_start(self, span: Span) -> None:
        """Open the file now, if not yet: a script the span covers finds the host's file there, so that one it puts
        in its place is told from it (:meth:`emit`)."""
        with self._lock:
            if self._fd is None and not self._refused:
                self._fd = self._open()

    def emit(self, record: SpanRecord) -> None:
        line = (json_line(record) + "\n").encode("utf-8")
        with self._lock:
            if self._fd is not None and not self._still_at_path():
                os.close(self._fd)
                self._fd = self._reopen()
            elif self._fd is None and not self._refused:
                self._fd = self._open()
            if self._fd is not None:
                os.write(self._fd, line)

    def _still_at_path(self) -> bool:
        """Whether the file opened is still the one at :attr:`path` (a script may have replaced or removed it)."""
        try:
            info = os.stat(self.path, follow_symlinks=False)
        except OSError:
            return False
        return (info.st_dev, info.st_ino) == self._identity

    def _reopen(self) -> int | None:
        """After the file opened left :attr:`path`: none (warned) when another file took its place, never written;
        else (it was removed) a new one, with a warning that the spans before are gone from the path."""
        if os.path.lexists(self.path):
            self._refuse("another file took its place after it was opened")
            return None
        warnings.warn(
            f"the skill trace {self.path} was removed after it was opened: its earlier spans are gone, "
            "the next ones start a new file",
            RuntimeWarning,
            stacklevel=3,
        )
        return self._open()

    def _open(self) -> int | None:
        """The trace file's descriptor, opened beneath :attr:`beneath` without following a link; None (warned once)
        when it cannot be opened so or is not a regular file of one name."""
        relative = os.path.relpath(self.path, self.beneath)
        try:
            if relative == os.pardir or relative.startswith(os.pardir + os.sep):
                raise OSError(f"it lies outside {self.beneath}")
            os.makedirs(self.beneath, exist_ok=True)
            root = open_root(self.beneath)
            try:
                folder = open_folder_beneath(root, os.path.dirname(relative), make=True)
            finally:
                os.close(root)
            try:
                flags = os.O_WRONLY | os.O_APPEND | os.O_CREAT | getattr(os, "O_NONBLOCK", 0)
                fd = open_beneath(folder, os.path.basename(relative), flags, 0o644)
            finally:
                os.close(folder)
        except OSError as exc:
            self._refuse(exc.strerror or str(exc))
            return None
        info = os.fstat(fd)
        if not stat.S_ISREG(info.st_mode) or info.st_nlink != 1:
            os.close(fd)
            self._refuse("it is not a regular file of one name")
            return None
        self._identity = (info.st_dev, info.st_ino)
        return fd

    def _refuse(self, reason: str) -> None:
        self._refused = True
        warnings.warn(
            f"not writing the skill trace {self.path}: {reason} (a link or other file put there is never "
            "followed); its spans are dropped",
            RuntimeWarning,
            stacklevel=4,
        )

    def close(self) -> None:
        with self._lock:
            if self._fd is not None:
                os.close(self._fd)
                self._fd = None

    def __del__(self) -> None:
        fd = getattr(self, "_fd", None)  # unset when __init__ failed
        if fd is not None:
            os.close(fd)


def read_spans(path: str | os.PathLike[str]) -> list[SpanRecord]:
    """The span records of a JSONL trace file; a torn last line is skipped."""
    records: list[SpanRecord] = []
    try:
        text = Path(path).read_text(encoding="utf-8")
    except FileNotFoundError:
        return records
    for line in split_json_lines(text):
        if not line.strip():
            continue
        try:
            records.append(json.loads(line))
        except json.JSONDecodeError:
            continue
    return records
