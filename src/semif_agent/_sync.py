"""The one bridge from sync entry points to the async core: :func:`run_sync` and :func:`iter_sync`.

Each thread gets one long-lived event loop for its sync calls, so clients that
cache connections per loop keep them between calls. Both helpers refuse to
run inside a running event loop: there, await the async method instead.
"""

from __future__ import annotations

import asyncio
import atexit
import contextvars
import threading
import weakref
from collections.abc import AsyncGenerator, AsyncIterator, Awaitable, Callable, Coroutine, Iterator
from typing import Any, TypeVar

from .errors import SyncInAsyncError

T = TypeVar("T")

_local = threading.local()
_runners: list[asyncio.Runner] = []
_runners_lock = threading.Lock()
_closers: weakref.WeakKeyDictionary[
    asyncio.AbstractEventLoop, tuple[list[Callable[[], Awaitable[Any]]], AsyncGenerator[None, None]]
] = weakref.WeakKeyDictionary()


def close_with_loop(closer: Callable[[], Awaitable[Any]]) -> None:
    """Await ``closer()`` when the running loop shuts down (e.g. to close a client it owns).

    Call it from inside the running loop. It works through the loop's
    async-generator shutdown (``loop.shutdown_asyncgens()``), which
    ``asyncio.run``, ``asyncio.Runner`` and our sync helpers all perform.
    """
    loop = asyncio.get_running_loop()
    entry = _closers.get(loop)
    if entry is None:
        closers: list[Callable[[], Awaitable[Any]]] = []
        keeper = _keeper(closers)
        try:  # start it here, so the loop tracks it and closes it on shutdown
            keeper.asend(None).send(None)
        except StopIteration:
            pass
        entry = _closers[loop] = (closers, keeper)
    entry[0].append(closer)


async def _keeper(closers: list[Callable[[], Awaitable[Any]]]) -> AsyncGenerator[None, None]:
    try:
        yield
    finally:
        _closers.pop(asyncio.get_running_loop(), None)
        for closer in closers:
            try:
                await closer()
            except Exception:  # noqa: BLE001 - closing at shutdown is best effort
                pass
        closers.clear()


def _runner() -> asyncio.Runner:
    runner = getattr(_local, "runner", None)
    if runner is None:
        runner = asyncio.Runner()
        _local.runner = runner
        with _runners_lock:
            _runners.append(runner)
    return runner


def _refuse_inside_loop(what: str) -> None:
    try:
        asyncio.get_running_loop()
    except RuntimeError:
        return
    raise SyncInAsyncError(
        f"{what} was called inside a running event loop; await its async form instead (arun, ainvoke, astream, acall)"
    )


def run_sync(coro: Coroutine[Any, Any, T], what: str = "a sync method") -> T:
    """Run ``coro`` to completion on this thread's loop and return its result."""
    try:
        _refuse_inside_loop(what)
    except SyncInAsyncError:
        coro.close()
        raise
    # The caller's context, not the one the thread's runner captured on its first run
    # (an override or scope set since then must be seen by the coroutine).
    box: list[T] = []
    _runner().run(_into(coro, box), context=contextvars.copy_context())
    return box[0]


async def _into(coro: Coroutine[Any, Any, T], box: list[T]) -> None:
    """Await ``coro`` and keep its result out of the task's own.

    On the main thread, ``asyncio.Runner`` restores the SIGINT handler after
    each run, and the standard library formats the finished task (result
    included) into an error message it then discards: for a large result
    (a route with its decisions, an agent run) that repr cost more than the
    work itself.
    """
    box.append(await coro)


def iter_sync(agen: AsyncIterator[T], what: str = "a sync stream") -> Iterator[T]:
    """Iterate an async iterator from sync code, one item at a time, on this thread's loop."""
    _refuse_inside_loop(what)
    return _iterate(agen, _runner(), contextvars.copy_context())


def _iterate(agen: AsyncIterator[T], runner: asyncio.Runner, context: contextvars.Context) -> Iterator[T]:
    """Every step runs in one context, the caller's at the start: the generator sees its own changes."""

    async def next_item() -> T:
        return await agen.__anext__()

    try:
        while True:
            try:
                item = runner.run(next_item(), context=context)
            except StopAsyncIteration:
                return
            yield item
    finally:
        aclose = getattr(agen, "aclose", None)
        if aclose is not None:
            runner.run(aclose(), context=context)


@atexit.register
def _close_runners() -> None:  # pragma: no cover - interpreter shutdown
    with _runners_lock:
        for runner in _runners:
            try:
                runner.close()  # shuts down async generators: clients registered above close
            except Exception:  # noqa: BLE001 - closing at exit is best effort
                pass
        _runners.clear()
