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
that future, not a task of its own. A caller that expects a quick answer
may first wait for it on a lock for a fraction of a millisecond (``wait``):
the worker then hands it over directly, and the loop is not woken through
its self-pipe at all.
"""

from __future__ import annotations

import asyncio
import contextvars
import queue
import threading
import time
from collections.abc import Callable
from typing import Any, Generic, TypeVar, cast

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


async def run_in_worker(
    fn: Callable[..., Result], /, *args: object, timeout: float | None = None, wait: float = 0.0
) -> Result:
    """Run ``fn(*args)`` in a worker thread with the caller's context variables; await its result.

    Past ``timeout`` seconds the await raises :class:`WorkerTimeout`; the call
    itself cannot be stopped, and its result, when it comes, is dropped.

    With ``wait``, the caller's thread first waits up to that many seconds
    for the result, holding the loop that long at most (keep it well under a
    millisecond): a call that returns within it is handed over directly,
    without waking the loop through its self-pipe; a longer one is then
    awaited as usual.
    """
    loop = asyncio.get_running_loop()
    handoff: _Handoff[Result] = _Handoff(loop, None if wait > 0 else loop.create_future())
    context = contextvars.copy_context()

    def job() -> Callable[[], None]:
        try:
            settle: Callable[..., None] = _set_result
            outcome: object = context.run(fn, *args)
        except BaseException as exc:  # noqa: BLE001 - handed to the awaiting task
            settle, outcome = _set_exception, exc
        return lambda: handoff.deliver(settle, outcome)

    _workers.start(job)
    if wait > 0:
        waited = time.monotonic()
        if handoff.ready.acquire(timeout=min(wait, timeout) if timeout is not None else wait):
            return handoff.take()
        future = handoff.await_instead()
        if future is None:  # it came just as the wait ended
            return handoff.take()
        if timeout is not None:
            timeout = max(0.0, timeout - (time.monotonic() - waited))
    else:
        assert handoff.future is not None  # made above: nobody waits on the handoff's lock
        future = handoff.future
    if timeout is None:
        return await future
    timer = loop.call_later(timeout, _set_exception, future, WorkerTimeout())
    try:
        return await future
    finally:
        timer.cancel()


class _Handoff(Generic[Result]):
    """How a worker hands a result over: to a caller waiting on :attr:`ready`, or to a loop future."""

    __slots__ = ("loop", "future", "ready", "_lock", "_settle", "_outcome")

    def __init__(self, loop: asyncio.AbstractEventLoop, future: asyncio.Future[Result] | None) -> None:
        self.loop = loop
        self.future = future  # None while the caller waits on ready
        self.ready = threading.Lock()
        self._lock = threading.Lock()
        self._settle: Callable[..., None] = _set_result
        self._outcome: object = None
        if future is None:
            self.ready.acquire()

    def deliver(self, settle: Callable[..., None], outcome: object) -> None:
        """In the worker: hand the outcome to the waiting caller, or settle the future on its loop."""
        with self._lock:
            if self.future is None:
                self._settle, self._outcome = settle, outcome
                self.ready.release()
                return
        try:
            self.loop.call_soon_threadsafe(settle, self.future, outcome)
        except RuntimeError:
            pass  # the loop closed while the call ran: nobody is waiting for it

    def await_instead(self) -> asyncio.Future[Result] | None:
        """The caller stops waiting: the future to await, or ``None`` when the outcome came meanwhile."""
        with self._lock:
            if self.ready.acquire(blocking=False):
                return None
            self.future = self.loop.create_future()
            return self.future

    def take(self) -> Result:
        """The outcome handed to the waiting caller: returned, or raised."""
        if self._settle is _set_exception:
            error = self._outcome
            assert isinstance(error, BaseException)
            raise _raisable(error)
        return cast(Result, self._outcome)  # what fn returned


def _set_result(future: asyncio.Future[Any], value: object) -> None:
    if not future.done():  # not cancelled, nor timed out, meanwhile
        future.set_result(value)


def _set_exception(future: asyncio.Future[Any], exc: BaseException) -> None:
    if not future.done():
        future.set_exception(_raisable(exc))


def _raisable(exc: BaseException) -> BaseException:
    """``exc``, unless it is a StopIteration, which neither a future nor a coroutine can pass on."""
    if isinstance(exc, StopIteration):
        error = RuntimeError(f"the call raised StopIteration: {exc}")
        error.__cause__ = exc
        return error
    return exc
