"""Worker threads for sync tool functions, which never hold up the interpreter's exit.

``asyncio.to_thread`` would do, except that a sync tool that hangs past its
timeout keeps its worker busy, and the default executor joins its workers
when the event loop or the interpreter shuts down: one stuck tool would
then keep ``semif chat`` from exiting. These workers are daemon threads,
started on demand, reused while busy, and gone after a while idle.

The hop is kept to what it must be, since a sync tool pays it every round:
the awaiting task waits on a plain loop future that the worker settles with
one ``call_soon_threadsafe`` (no thread-pool future, no state copied from one
future to another, no task around the wait), and a timeout is a timer on
that future, not a task of its own.
"""

from __future__ import annotations

import asyncio
import contextvars
import queue
import threading
from collections.abc import Callable
from typing import Any, TypeVar

Result = TypeVar("Result")

IDLE_SECONDS = 30.0

Job = Callable[[], Callable[[], None]]  # runs a call; returns what delivers its result


class WorkerTimeout(Exception):
    """The call passed its timeout; its worker may still be running it."""


class DaemonWorkers:
    """A pool of daemon threads that grows on demand; idle workers exit after ``idle_seconds``."""

    def __init__(self, idle_seconds: float = IDLE_SECONDS) -> None:
        self._jobs: queue.SimpleQueue[Job] = queue.SimpleQueue()
        self._lock = threading.Lock()
        self._idle = 0  # workers waiting for a job that no submitter has counted on yet
        self._idle_seconds = idle_seconds

    def start(self, job: Job) -> None:
        """Run ``job()`` in an idle worker, or in a new one when none is idle; then what it returns.

        ``job`` must not raise. What it returns (the delivery of its result)
        runs once its worker counts as idle again, so that a caller woken by
        it and starting the next job at once finds that worker free.
        """
        self._jobs.put(job)
        with self._lock:
            if self._idle:
                self._idle -= 1  # that worker will take this job
                return
        threading.Thread(target=self._work, name="semif-agent-tool", daemon=True).start()

    def _work(self) -> None:
        while True:
            try:
                job = self._jobs.get(timeout=self._idle_seconds)
            except queue.Empty:
                with self._lock:
                    if self._idle:
                        self._idle -= 1
                        return  # idle long enough, and no submitter is counting on us
                continue
            deliver = job()
            del job
            with self._lock:
                self._idle += 1
            deliver()
            del deliver


_workers = DaemonWorkers()


async def run_in_worker(fn: Callable[..., Result], /, *args: object, timeout: float | None = None) -> Result:
    """Run ``fn(*args)`` in a worker thread with the caller's context variables; await its result.

    Past ``timeout`` seconds the await raises :class:`WorkerTimeout`; the call
    itself cannot be stopped, and its result, when it comes, is dropped.
    """
    loop = asyncio.get_running_loop()
    future: asyncio.Future[Result] = loop.create_future()
    context = contextvars.copy_context()

    def job() -> Callable[[], None]:
        try:
            settle: Callable[..., None] = _set_result
            outcome: object = context.run(fn, *args)
        except BaseException as exc:  # noqa: BLE001 - handed to the awaiting task
            settle, outcome = _set_exception, exc

        def deliver() -> None:
            try:
                loop.call_soon_threadsafe(settle, future, outcome)
            except RuntimeError:
                pass  # the loop closed while the call ran: nobody is waiting for it

        return deliver

    _workers.start(job)
    if timeout is None:
        return await future
    timer = loop.call_later(timeout, _set_exception, future, WorkerTimeout())
    try:
        return await future
    finally:
        timer.cancel()


def _set_result(future: asyncio.Future[Any], value: object) -> None:
    if not future.done():  # not cancelled, nor timed out, meanwhile
        future.set_result(value)


def _set_exception(future: asyncio.Future[Any], exc: BaseException) -> None:
    if not future.done():
        if isinstance(exc, StopIteration):  # a future cannot hold one; a coroutine would convert it too
            error = RuntimeError(f"the call raised StopIteration: {exc}")
            error.__cause__ = exc
            exc = error
        future.set_exception(exc)
