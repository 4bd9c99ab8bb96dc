"""Worker threads for sync tool functions, which never hold up the interpreter's exit.

``asyncio.to_thread`` would do, except that a sync tool that hangs past its
timeout keeps its worker busy, and the default executor joins its workers
when the event loop or the interpreter shuts down: one stuck tool would
then keep ``semif chat`` from exiting. These workers are daemon threads,
started on demand, reused while busy, and gone after a while idle.
"""

from __future__ import annotations

import asyncio
import contextvars
import queue
import threading
from collections.abc import Callable
from concurrent.futures import Future
from typing import TypeVar

Result = TypeVar("Result")

IDLE_SECONDS = 30.0


class DaemonWorkers:
    """A pool of daemon threads that grows on demand; idle workers exit after ``idle_seconds``."""

    def __init__(self, idle_seconds: float = IDLE_SECONDS) -> None:
        self._queue: queue.SimpleQueue[Callable[[], None]] = queue.SimpleQueue()  # each runs one call
        self._idle = threading.Semaphore(0)  # one token per worker waiting for work
        self._idle_seconds = idle_seconds

    def submit(self, fn: Callable[..., Result], /, *args: object) -> Future[Result]:
        future: Future[Result] = Future()

        def call() -> None:
            if future.set_running_or_notify_cancel():
                try:
                    future.set_result(fn(*args))
                except BaseException as exc:  # noqa: BLE001 - handed to the awaiting task
                    future.set_exception(exc)

        self._queue.put(call)
        if not self._idle.acquire(blocking=False):
            threading.Thread(target=self._work, name="semif-agent-tool", daemon=True).start()
        return future

    def _work(self) -> None:
        while True:
            try:
                call = self._queue.get(timeout=self._idle_seconds)
            except queue.Empty:
                if self._idle.acquire(blocking=False):
                    return  # idle long enough, and no submitter is counting on us
                continue
            call()
            del call
            self._idle.release()


_workers = DaemonWorkers()


async def run_in_worker(fn: Callable[..., Result], /, *args: object) -> Result:
    """Run ``fn(*args)`` in a worker thread with the caller's context variables; await its result."""
    context = contextvars.copy_context()
    return await asyncio.wrap_future(_workers.submit(context.run, fn, *args))
