"""A pool of warm worker processes that run functions confined: :class:`WorkerPool`.

``await pool.call(function, payload, cwd=..., env=..., confine_spec=...,
timeout_sec=..., on_message=handler)`` runs ``function(payload, channel)``
(a module-level function of this package, which the caller imports) in a
forked, confined child of a warm worker (see :mod:`._worker`) and returns a
:class:`~.results.CallResult`. Inside, ``channel.ask(message)``
(:class:`~.channel.Channel`) sends a JSON object to the host and blocks until
``await handler(message)`` answers. Code-skill bodies and SKILL.md scripts'
``entrypoint(argv, ctx)`` run through the same call.

Each worker is a long-lived Python process started lazily, in its own
session, with a minimal environment; calls skip the interpreter's start-up yet
are isolated from the host and from each other: each call's child is forked by the worker's zygote,
which never held another call's payload, result or code (:mod:`._zygote`); calls of one setup may share
a warm process, one after another, when the caller passes a ``reuse`` key, judged from outside before
each (:mod:`._warm_check`). Workers speak JSON lines over
pipes that the pool watches with the event loop's reader and writer
callbacks (:mod:`._host_worker`): nothing blocks the loop, and one worker runs many calls at once.

Calls allowed the network go to workers of their own, which stay in the
host's network namespace (the others leave it at start). A worker that dies
is replaced on the next call (its calls in flight fail with
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
import shutil
import subprocess
import sys
import tempfile
import weakref
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from ..errors import check_number
from . import _cgroup
from ._host_worker import MessageHandler, Worker, worker_failure
from ._ready import READY_CHILDREN
from ._resident import IDLE_SECONDS as WARM_IDLE_SECONDS
from ._resident import MOST_IDLE as WARM_MOST
from ._targets import PRELOAD, CallTarget, target_name
from .channel import MAX_LINE_BYTES
from .errors import WorkerError
from .limits import DEFAULT_ENV_ALLOW, etc_secrets, package_parent, system_readable_folders, system_readable_paths
from .results import CallResult, ErrorType, outcome

WORKER_MAIN = str(Path(__file__).resolve().parent / "_worker.py")
MAX_MESSAGE_BYTES = MAX_LINE_BYTES
"""The largest message or return value a call may send (JSON text), unless the call says otherwise."""
_GRACE_SECONDS = 5.0
_REUSE_KEYS_KEPT = 4096
_pools: weakref.WeakSet[WorkerPool] = weakref.WeakSet()


class WorkerPool:
    """Up to ``size`` warm workers shared by every runtime that uses this pool."""

    def __init__(
        self,
        size: int = 2,
        *,
        grace_sec: float = _GRACE_SECONDS,
        preload: Sequence[CallTarget] = (),
        ready_children: int = READY_CHILDREN,
        warm_idle_sec: float = WARM_IDLE_SECONDS,
        warm_most: int = WARM_MOST,
    ) -> None:
        """A pool of at most ``size`` workers, started on first use.

        A worker silent for a call's timeout plus ``grace_sec`` is killed and
        replaced. ``preload`` names more call targets whose modules the
        workers import at start, so calls into them start warm (each adds to
        the cost of every call's fork: keep it to what most calls use).
        While it has no call to run, each worker keeps children forked ahead,
        namespaced and with their mount view made, each waiting for one call:
        as many as the calls it ran at once last, up to ``ready_children``
        (0: every call forks its own child). A process kept warm for the next call of its setup
        (``call(..., reuse=...)``) is let go after ``warm_idle_sec`` without one; each worker keeps at
        most ``warm_most`` waiting (0: none is kept), the one idle longest going first.
        """
        check_number("size", size, minimum=1, whole=True)
        check_number("grace_sec", grace_sec)
        check_number("ready_children", ready_children, minimum=0, whole=True)
        check_number("warm_idle_sec", warm_idle_sec)
        check_number("warm_most", warm_most, minimum=0, whole=True)
        self.warm = {"idle_sec": float(warm_idle_sec), "most": warm_most}
        self.size = size
        self.ready_children = ready_children
        self.grace_sec = grace_sec
        self._preload = tuple(target_name(target).split(":")[0] for target in preload)
        self._workers: list[Worker] = []
        self._ids = itertools.count(1)
        self._starting: asyncio.Lock | None = None
        self._lock_loop: asyncio.AbstractEventLoop | None = None
        self._calls_folder: str | None = None
        self._last_worker: dict[str, Worker] = {}  # by reuse key: where its warm processes are
        self.started = 0
        _pools.add(self)

    @property
    def pids(self) -> list[int]:
        """Process ids of the live workers."""
        return [worker.process.pid for worker in self._workers if worker.alive]

    @property
    def preload(self) -> tuple[str, ...]:
        """The modules a worker imports at start: those registered everywhere, then this pool's."""
        return tuple(dict.fromkeys([*PRELOAD, *self._preload]))

    async def call(
        self,
        target: CallTarget,
        payload: Mapping[str, object],
        *,
        cwd: str | Path,
        env: dict[str, str],
        confine_spec: dict[str, Any],
        timeout_sec: float,
        on_message: MessageHandler | None = None,
        max_output_bytes: int = 1_000_000,
        max_message_bytes: int = MAX_MESSAGE_BYTES,
        reuse: str | None = None,
    ) -> CallResult:
        """Run ``target(payload, channel)`` (a module-level function of this package), confined.

        The function runs in a forked child of a warm worker with working
        directory ``cwd``, environment ``env`` (``TMPDIR`` becomes a private
        folder removed afterwards) and the limits and confinement of
        ``confine_spec`` (see :func:`~.limits.confinement_spec`). Each
        ``channel.ask(message)`` in it awaits ``on_message(message)`` here,
        whose dict is the answer; its exception becomes the child's
        :class:`~.errors.ChannelError`. stdout and stderr are captured (up to
        ``max_output_bytes`` each). Each message and the return value are at
        most ``max_message_bytes`` of JSON; what the child sends is checked as
        untrusted data, and a line too large, too deep, malformed or forged
        ends the call with error type ``channel``. Never raises for the
        function's faults: an exception, exit, crash, timeout, limit or broken
        message is in the result's ``error_type``. Raises :class:`~.errors.CallTargetError` for a target
        that is not a module-level function of this package.

        ``reuse``: calls with the same key and the same setup (target, ``cwd``, ``env``, limits and
        confinement, compared whole) may run one after another in one process, kept warm and confined
        between them (:mod:`._resident`): each call still gets every fence, its own folder and
        outputs, and the processes it started are killed when it ends, but module-level state its code
        leaves in system modules may be seen by the next call of that key. None: a fresh process.
        """
        name = target_name(target)
        spec = dict(confine_spec)
        system = spec.pop("system_readable", None)
        if system is not None and system is not system_readable_paths() and tuple(system) != system_readable_paths():
            spec["readable"] = [*system, *spec.get("readable", [])]
        request = {
            "op": "call",
            "target": name,
            "payload": payload,
            "cwd": str(cwd),
            "env": dict(env),
            "confine": spec,
            "timeout": timeout_sec,
            "max_output": max_output_bytes,
            "max_message": max_message_bytes,
            "listen": on_message is not None,
        }
        if reuse is not None:
            request["reuse"] = str(reuse)
        reply = await self._run(request, timeout_sec=timeout_sec, on_message=on_message)
        result = outcome(
            returncode=int(reply["returncode"]),
            timed_out=bool(reply["timed_out"]),
            reported=str(reply["reported"]),
            stdout=str(reply["stdout"]),
            stderr=str(reply["stderr"]),
            timeout_sec=timeout_sec,
        )
        confinement = {**reply.get("confinement", {}), "disk": "watched" if spec.get("disk_bytes") else "none"}
        if result.error_type == ErrorType.WORKER:
            confinement = {}
        return CallResult(
            result.ok,
            result.exit_code,
            result.stdout,
            result.stderr,
            result.error_type,
            confinement,
            reply.get("value"),
        )

    async def _run(
        self, request: dict[str, Any], *, timeout_sec: float, on_message: MessageHandler | None
    ) -> dict[str, Any]:
        for _attempt in range(2):  # a worker found dead while sending is replaced once
            try:
                worker = await self._acquire(
                    network=bool(request["confine"].get("network")), reuse=request.get("reuse")
                )
            except WorkerError as exc:
                return worker_failure(str(exc))
            request["id"] = next(self._ids)
            future = worker.start(request, on_message)
            if worker.alive:
                break
        timer = worker.loop.call_later(timeout_sec + self.grace_sec, worker.give_up, future)
        try:
            return await future
        finally:
            timer.cancel()

    async def aclose(self) -> None:
        """Stop every worker (they also exit on their own when the host goes away)."""
        self.close()

    def close(self) -> None:
        """Stop every worker now, and remove the calls' folder."""
        for worker in self._workers:
            worker.stop()
        self._workers.clear()
        self._last_worker.clear()
        if self._calls_folder is not None:
            try:
                shutil.rmtree(self._calls_folder, ignore_errors=True)
            except RecursionError:  # a call left a chain of folders too deep to remove: left where it is
                pass
            self._calls_folder = None

    async def start(self, *, network: bool = False) -> None:
        """Start a worker now (when none is running), so the first call finds it warm.

        Returns once the process is launched; it loads its modules meanwhile.
        """
        await self._acquire(network=network)

    async def _acquire(self, *, network: bool, reuse: str | None = None) -> Worker:
        """A worker for a call denied the network (or, with ``network``, allowed it): up to ``size`` of each
        kind; for a call with a ``reuse`` key, the one that ran the last call of that key while it lives."""
        if reuse is not None:
            last = self._last_worker.get(reuse)
            if last is not None and last.alive and last.loop is asyncio.get_running_loop():
                return last
            worker = await self._acquire(network=network)
            if len(self._last_worker) >= _REUSE_KEYS_KEPT:
                self._last_worker.clear()
            self._last_worker[reuse] = worker
            return worker
        loop = asyncio.get_running_loop()
        if self._lock_loop is not loop:
            self._starting, self._lock_loop = asyncio.Lock(), loop
        assert self._starting is not None
        async with self._starting:
            for worker in self._workers:
                if worker.alive and worker.loop is not loop:
                    worker.stop()
            self._workers = [worker for worker in self._workers if worker.alive]
            kind = [worker for worker in self._workers if worker.network == network]
            if all(worker.pending for worker in kind) and len(kind) < self.size:
                process, cgroup = await asyncio.to_thread(self._spawn, network)
                kind.append(Worker(process, loop, cgroup, network=network))
                self._workers.append(kind[-1])
            return min(kind, key=lambda worker: len(worker.pending))

    def _spawn(self, network: bool) -> tuple[subprocess.Popen[bytes], str | None]:
        if self._calls_folder is None or not os.path.isdir(self._calls_folder):
            self._calls_folder = tempfile.mkdtemp(prefix="semif-calls-")
        parent = _cgroup.host_parent()
        cgroup = _cgroup.create(parent, f"worker-{os.getpid()}-{id(self):x}-{self.started}") if parent else None
        env = {key: os.environ[key] for key in DEFAULT_ENV_ALLOW if key in os.environ}
        setup = {
            "system_readable": list(system_readable_paths()),
            "system_folders": list(system_readable_folders()),
            "secrets": list(etc_secrets()),
            "preload": list(self.preload),
            "ready_children": self.ready_children,
            "warm": self.warm,
            "network": network,
        }
        # the setup goes on the command line: the worker forks its zygote before it reads anything from stdin
        command = [sys.executable, "-I", WORKER_MAIN, package_parent(), self._calls_folder, cgroup or "-"]
        command.append(json.dumps(setup))
        try:
            process = subprocess.Popen(
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
            if cgroup:
                _cgroup.remove(cgroup)
            raise WorkerError(f"cannot start a skill worker ({exc.strerror})") from exc
        self.started += 1
        return process, cgroup


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
