"""The workspace's act lock: runs sharing a workspace act one at a time, so each sees only its own changes.

A run snapshots the write dirs, lets its skill act, and snapshots them
again; the difference is what the run changed. Two runs acting at once
would each see the other's files as theirs. :class:`ActLock` is an
exclusive ``flock`` on ``act.lock`` in the data dir, held from the first
snapshot to the second (routing, the embedding and the assessment run in
parallel). The kernel releases it when the process that holds it dies, so
a crashed run never leaves it stuck.

The lock is re-entrant within one flow of control: a run started while its
own context holds the lock (a skill the agent calls while following a
SKILL.md skill) does not wait for itself; its changes count for both.
"""

from __future__ import annotations

import asyncio
import contextvars
import os
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

LOCK_NAME = "act.lock"
WAIT_NOTICE_SECONDS = 1.0  # ``on_wait`` is called once a run has waited this long
POLL_SECONDS = 0.02

_held: contextvars.ContextVar[tuple[tuple[str, int | None], ...]] = contextvars.ContextVar(
    "semif_act_locks_held", default=()
)
"""What this context entered, innermost last: (lock path, its descriptor; None when it held the lock already)."""

try:
    import fcntl
except ImportError:  # pragma: no cover - no flock on this platform: runs are not kept apart
    fcntl = None  # type: ignore[assignment]  # no fcntl here: the lock is a no-op


class ActLock:
    """An async (and sync) context manager over an exclusive ``flock`` on ``path``.

    ``on_wait`` is called once, with no arguments, when the lock is still
    held by another run after :data:`WAIT_NOTICE_SECONDS`. One instance may
    be entered by several tasks at once: each waits its turn.
    """

    def __init__(self, path: str | Path, *, on_wait: Callable[[], Any] | None = None) -> None:
        self.path = Path(path)
        self.on_wait = on_wait

    @classmethod
    def of(cls, workspace: Any, *, on_wait: Callable[[], Any] | None = None) -> ActLock:
        """The act lock of ``workspace`` (anything with a ``data_dir``)."""
        return cls(Path(workspace.data_dir) / LOCK_NAME, on_wait=on_wait)

    def _open(self) -> tuple[str, int | None]:
        """The lock's real path, and a descriptor to lock, or None when this context holds the lock already (or
        flock does not exist)."""
        key = os.path.realpath(self.path)
        if fcntl is None or any(held == key for held, _ in _held.get()):
            return key, None
        self.path.parent.mkdir(parents=True, exist_ok=True)
        return key, os.open(self.path, os.O_RDWR | os.O_CREAT | getattr(os, "O_CLOEXEC", 0), 0o600)

    def _busy(self, fd: int) -> Iterator[None]:
        """Yields while another holds the lock (the caller sleeps between), telling ``on_wait`` once; then takes it."""
        started, told = time.monotonic(), False
        while True:
            try:
                fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
            except BlockingIOError:
                if not told and self.on_wait is not None and time.monotonic() - started >= WAIT_NOTICE_SECONDS:
                    told = True
                    self.on_wait()
                yield
                continue
            return

    def _entered(self, key: str, fd: int | None) -> ActLock:
        _held.set((*_held.get(), (key, fd)))
        return self

    async def __aenter__(self) -> ActLock:
        key, fd = self._open()
        if fd is not None:
            try:
                for _ in self._busy(fd):
                    await asyncio.sleep(POLL_SECONDS)
            except BaseException:
                os.close(fd)
                raise
        return self._entered(key, fd)

    def __enter__(self) -> ActLock:
        key, fd = self._open()
        if fd is not None:
            try:
                for _ in self._busy(fd):
                    time.sleep(POLL_SECONDS)
            except BaseException:
                os.close(fd)
                raise
        return self._entered(key, fd)

    def _exit(self) -> None:
        """Leave the innermost entry of this lock in this context; closing its descriptor releases the lock."""
        key, entries = os.path.realpath(self.path), list(_held.get())
        for index in range(len(entries) - 1, -1, -1):
            if entries[index][0] == key:
                fd = entries.pop(index)[1]
                _held.set(tuple(entries))
                if fd is not None:
                    os.close(fd)
                return

    async def __aexit__(self, *exc: object) -> None:
        self._exit()

    def __exit__(self, *exc: object) -> None:
        self._exit()
