"""A pool of warm worker processes for ``entrypoint(argv, ctx)`` scripts: :class:`WorkerPool`.

Each worker (see :mod:`._worker`) is a long-lived Python process started
lazily, in its own session, with a minimal environment. It forks one confined
child per call, so calls are isolated from the host and from each other yet
skip the interpreter's start-up. Workers speak JSON lines over pipes that the
pool watches with the event loop's reader and writer callbacks: nothing
blocks the loop, and one worker runs many calls at once.

A worker that dies is replaced on the next call (its calls in flight fail with
error type ``worker``); one that does not answer within the call's timeout
plus a grace period is killed and replaced. A pool serves one event loop at a
time: when used from a new loop it restarts its workers there.
"""

from __future__ import annotations

import asyncio
import atexit
import itertools
import json
import os
import signal
import subprocess
import sys
import weakref
from pathlib import Path
from typing import Any

from .errors import WorkerError
from .limits import package_parent
from .results import ErrorType, ScriptRunResult

WORKER_MAIN = str(Path(__file__).resolve().parent / "_worker.py")
_GRACE_SECONDS = 5.0
_ENV_KEEP = ("PATH", "LANG", "LC_ALL", "LC_CTYPE", "TZ")
_pools: weakref.WeakSet[WorkerPool] = weakref.WeakSet()


class _Worker:
    """One worker process and the calls it has in flight."""

    def __init__(self, process: subprocess.Popen[bytes], loop: asyncio.AbstractEventLoop) -> None:
        self.process = process
        self.loop = loop
        self.pending: dict[int, asyncio.Future[dict[str, Any]]] = {}
        self.alive = True
        self._in = process.stdin.fileno()  # type: ignore[union-attr]
        self._out = process.stdout.fileno()  # type: ignore[union-attr]
        self._received = b""
        self._unsent = b""
        self._writing = False
        os.set_blocking(self._in, False)
        os.set_blocking(self._out, False)
        loop.add_reader(self._out, self._on_readable)

    def send(self, request: dict[str, Any]) -> asyncio.Future[dict[str, Any]]:
        """Queue one request; the future resolves with the worker's reply (or a failure)."""
        future: asyncio.Future[dict[str, Any]] = self.loop.create_future()
        if not self.alive:
            future.set_result(_worker_failure("the skill worker exited unexpectedly"))
            return future
        self.pending[request["id"]] = future
        self._unsent += json.dumps(request).encode("utf-8") + b"\n"
        self._flush()
        return future

    def _flush(self) -> None:
        try:
            written = os.write(self._in, self._unsent)
            self._unsent = self._unsent[written:]
        except BlockingIOError:
            pass
        except OSError:
            self.stop()
            return
        if self._unsent and not self._writing:
            self.loop.add_writer(self._in, self._flush)
            self._writing = True
        elif not self._unsent and self._writing:
            self.loop.remove_writer(self._in)
            self._writing = False

    def _on_readable(self) -> None:
        try:
            chunk = os.read(self._out, 1 << 16)
        except BlockingIOError:
            return
        except OSError:
            chunk = b""
        if not chunk:
            self.stop()
            return
        lines = (self._received + chunk).split(b"\n")
        self._received = lines.pop()
        for line in lines:
            reply = json.loads(line)
            future = self.pending.pop(reply.pop("id"), None)
            if future is not None and not future.done():
                future.set_result(reply)

    def stop(self) -> None:
        """Kill the worker; its calls in flight fail with error type ``worker``."""
        if not self.alive:
            return
        self.alive = False
        if not self.loop.is_closed():
            self.loop.remove_reader(self._out)
            if self._writing:
                self.loop.remove_writer(self._in)
        _kill(self.process)
        for future in self.pending.values():
            if not future.done() and not future.get_loop().is_closed():
                future.set_result(_worker_failure("the skill worker exited unexpectedly"))
        self.pending.clear()


class WorkerPool:
    """Up to ``size`` warm workers shared by every runtime that uses this pool."""

    def __init__(self, size: int = 2, *, grace_sec: float = _GRACE_SECONDS) -> None:
        """A pool of at most ``size`` workers, started on first use.

        A worker silent for a call's timeout plus ``grace_sec`` is killed and replaced.
        """
        self.size = max(1, size)
        self.grace_sec = grace_sec
        self._workers: list[_Worker] = []
        self._ids = itertools.count(1)
        self._starting: asyncio.Lock | None = None
        self._lock_loop: asyncio.AbstractEventLoop | None = None
        self.started = 0
        _pools.add(self)

    @property
    def pids(self) -> list[int]:
        """Process ids of the live workers."""
        return [worker.process.pid for worker in self._workers if worker.alive]

    async def run(self, request: dict[str, Any], *, timeout_sec: float) -> ScriptRunResult:
        """Send one call to a worker and await its result (never raises for the script's faults)."""
        for attempt in range(2):  # a worker found dead while sending is replaced once
            try:
                worker = await self._acquire()
            except WorkerError as exc:
                return _result(_worker_failure(str(exc)))
            future = worker.send({**request, "id": next(self._ids)})
            if worker.alive:
                break
        try:
            reply = await asyncio.wait_for(asyncio.shield(future), timeout_sec + self.grace_sec)
        except asyncio.TimeoutError:
            worker.stop()
            reply = _worker_failure("the skill worker stopped answering and was restarted")
        return _result(reply)

    async def aclose(self) -> None:
        """Stop every worker (they also exit on their own when the host goes away)."""
        self.close()

    def close(self) -> None:
        """Stop every worker now."""
        for worker in self._workers:
            worker.stop()
        self._workers.clear()

    async def _acquire(self) -> _Worker:
        loop = asyncio.get_running_loop()
        if self._lock_loop is not loop:
            self._starting, self._lock_loop = asyncio.Lock(), loop
        assert self._starting is not None
        async with self._starting:
            for worker in self._workers:
                if worker.alive and worker.loop is not loop:
                    worker.stop()
            self._workers = [worker for worker in self._workers if worker.alive]
            if all(worker.pending for worker in self._workers) and len(self._workers) < self.size:
                spawned = await self._spawn(loop)
                self._workers.append(spawned)
            return min(self._workers, key=lambda worker: len(worker.pending))

    async def _spawn(self, loop: asyncio.AbstractEventLoop) -> _Worker:
        env = {key: os.environ[key] for key in _ENV_KEEP if key in os.environ}
        command = [sys.executable, "-I", WORKER_MAIN, package_parent()]
        try:
            process = await asyncio.to_thread(
                subprocess.Popen,
                command,
                stdin=subprocess.PIPE,
                stdout=subprocess.PIPE,
                stderr=subprocess.DEVNULL,
                env=env,
                cwd="/",
                start_new_session=True,
                close_fds=True,
            )
        except OSError as exc:
            raise WorkerError(f"cannot start a skill worker ({exc.strerror})") from exc
        self.started += 1
        return _Worker(process, loop)


def _kill(process: subprocess.Popen[bytes]) -> None:
    try:
        os.killpg(process.pid, signal.SIGKILL)
    except (ProcessLookupError, PermissionError):
        pass
    for stream in (process.stdin, process.stdout):
        try:
            stream.close()  # type: ignore[union-attr]
        except OSError:
            pass
    if process.poll() is not None:
        return
    try:
        asyncio.get_running_loop().run_in_executor(None, process.wait)
    except RuntimeError:  # no running loop (at exit): reap it here
        try:
            process.wait(timeout=1)
        except subprocess.TimeoutExpired:
            pass


def _worker_failure(message: str) -> dict[str, Any]:
    return {"ok": False, "exit_code": -1, "stdout": "", "stderr": message, "error_type": str(ErrorType.WORKER)}


def _result(reply: dict[str, Any]) -> ScriptRunResult:
    return ScriptRunResult(
        ok=bool(reply["ok"]),
        exit_code=int(reply["exit_code"]),
        stdout=str(reply["stdout"]),
        stderr=str(reply["stderr"]),
        error_type=str(reply["error_type"]),
    )


_default_pool: WorkerPool | None = None


def default_worker_pool() -> WorkerPool:
    """The process-wide pool runtimes use unless given their own."""
    global _default_pool
    if _default_pool is None:
        _default_pool = WorkerPool()
    return _default_pool


@atexit.register
def _close_pools() -> None:
    for pool in list(_pools):
        pool.close()
