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
are isolated from the host and from each other. Workers speak JSON lines over
pipes that the pool watches with the event loop's reader and writer
callbacks: nothing blocks the loop, and one worker runs many calls at once.

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
import re
import shutil
import subprocess
import sys
import tempfile
import weakref
from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ..errors import check_number
from . import _cgroup
from ._process_group import kill_group
from ._ready import READY_CHILDREN
from .channel import MAX_LINE_BYTES, Channel
from .errors import CallTargetError, WorkerError
from .limits import DEFAULT_ENV_ALLOW, etc_secrets, package_parent, system_readable_folders, system_readable_paths
from .results import CallResult, ErrorType, outcome

WORKER_MAIN = str(Path(__file__).resolve().parent / "_worker.py")
MAX_MESSAGE_BYTES = MAX_LINE_BYTES
"""The largest message or return value a call may send (JSON text), unless the call says otherwise."""
_GRACE_SECONDS = 5.0
_encode = json.JSONEncoder(ensure_ascii=False).encode  # made once: json.dumps with options makes one per call
_LINE_KINDS = ("ask", "done")  # what a worker's line is: a call's question, or its end
_PRELOAD: dict[str, None] = {}  # modules every pool's workers import at start (see preload_everywhere)
_TARGET = re.compile(r"semif_agent(\.[A-Za-z_]\w*)+:[A-Za-z_]\w*")
_pools: weakref.WeakSet[WorkerPool] = weakref.WeakSet()

MessageHandler = Callable[[dict[str, Any]], Awaitable[dict[str, Any]]]
CallTarget = Callable[[dict[str, Any], Channel], Any]
"""What a call runs: ``function(payload, channel)``, a module-level function of this package."""


def target_name(target: CallTarget) -> str:
    """``"semif_agent.module:function"``, what the worker's child imports and calls, for ``target``.

    Raises :class:`~.errors.CallTargetError` unless ``target`` is a
    module-level function of this package (what the child can import by name).
    """
    module = getattr(target, "__module__", None) or ""
    name = getattr(target, "__qualname__", None) or ""
    found = getattr(sys.modules.get(module), name, None) if "." not in name else None
    text = f"{module}:{name}"
    if found is not target or not _TARGET.fullmatch(text):
        raise CallTargetError(f"a call target is a module-level function of semif_agent, not {target!r}")
    return text


def preload_everywhere(target: CallTarget) -> None:
    """Have every pool's workers import ``target``'s module at start, so calls into it start warm.

    For the targets of the layers above, registered when their module is
    imported; each adds to the cost of every call's fork: keep it to what
    most calls use.
    """
    _PRELOAD[target_name(target).split(":")[0]] = None


@dataclass
class _Pending:
    """A call in flight: the future its ``done`` line resolves, its handler and the handler's tasks."""

    future: asyncio.Future[dict[str, Any]]
    on_message: MessageHandler | None
    tasks: set[asyncio.Task[None]] = field(default_factory=set)


class _Worker:
    """One worker process and the calls it has in flight."""

    def __init__(
        self, process: subprocess.Popen[bytes], loop: asyncio.AbstractEventLoop, cgroup: str | None, *, network: bool
    ) -> None:
        self.process = process
        self.network = network
        self.loop = loop
        self.cgroup = cgroup
        self.pending: dict[int, _Pending] = {}
        self.alive = True
        assert process.stdin is not None and process.stdout is not None  # _spawn pipes both
        self._in = process.stdin.fileno()
        self._out = process.stdout.fileno()
        self._received = bytearray()
        self._unsent = bytearray()
        self._writing = False
        os.set_blocking(self._in, False)
        os.set_blocking(self._out, False)
        loop.add_reader(self._out, self._on_readable)

    def start(self, request: dict[str, Any], on_message: MessageHandler | None) -> asyncio.Future[dict[str, Any]]:
        """Send one call; the future resolves with the worker's ``done`` line (or a failure)."""
        future: asyncio.Future[dict[str, Any]] = self.loop.create_future()
        if not self.alive:
            future.set_result(_worker_failure("the skill worker exited unexpectedly"))
            return future
        self.pending[request["id"]] = _Pending(future, on_message)
        self.send(request)
        return future

    def send(self, line: dict[str, Any]) -> None:
        """Queue one JSON line for the worker."""
        self._unsent += _encode(line).encode("utf-8") + b"\n"
        self._flush()

    def _flush(self) -> None:
        try:
            written = os.write(self._in, self._unsent)
            del self._unsent[:written]
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
            chunk = os.read(self._out, 1 << 16)  # a read allocates its whole buffer: keep it small
        except BlockingIOError:
            return
        except OSError:
            chunk = b""
        if not chunk:
            self.stop()
            return
        start = len(self._received)
        self._received += chunk
        if self._received.find(b"\n", start) < 0:
            return
        *lines, rest = bytes(self._received).split(b"\n")
        self._received = bytearray(rest)
        for line in lines:
            try:
                data = json.loads(line)
            except (ValueError, RecursionError):
                data = None
            if not (isinstance(data, dict) and isinstance(data.get("id"), int) and data.get("kind") in _LINE_KINDS):
                self.stop()  # the worker checks what its calls send: a line it cannot have written means it broke
                return
            self._take(data)

    def _take(self, line: dict[str, Any]) -> None:
        pending = self.pending.get(line["id"])
        if pending is None:
            return  # a call that already ended: dropped
        if line["kind"] == "ask":
            task = self.loop.create_task(self._answer(line["id"], pending, line["message"]))
            pending.tasks.add(task)
            task.add_done_callback(pending.tasks.discard)
            return
        del self.pending[line["id"]]
        for task in pending.tasks:
            task.cancel()
        if not pending.future.done():
            pending.future.set_result(line)

    async def _answer(self, call_id: int, pending: _Pending, message: dict[str, Any]) -> None:
        try:
            if pending.on_message is None:
                raise LookupError("this call takes no messages")
            reply = await pending.on_message(message)
            if not isinstance(reply, dict):
                raise TypeError(f"the handler answered with {type(reply).__name__}, not a dict")
            data = {"op": "reply", "id": call_id, "ok": True, "reply": reply}
            json.dumps(data)  # refuse what cannot travel before it reaches the pipe
        except asyncio.CancelledError:
            raise
        except Exception as exc:  # noqa: BLE001 - the call's function gets the error, the host goes on
            data = {"op": "reply", "id": call_id, "ok": False, "error": f"{type(exc).__name__}: {exc}"}
        if self.alive and call_id in self.pending:
            self.send(data)

    def give_up(self, future: asyncio.Future[dict[str, Any]]) -> None:
        """The call of ``future`` got no answer in time: it fails, and the worker is killed (replaced on the next call)."""
        if not future.done():
            future.set_result(_worker_failure("the skill worker stopped answering and was restarted"))
        self.stop()

    def stop(self) -> None:
        """Kill the worker and what its calls left; its calls in flight fail with error type ``worker``."""
        if not self.alive:
            return
        self.alive = False
        if not self.loop.is_closed():
            self.loop.remove_reader(self._out)
            if self._writing:
                self.loop.remove_writer(self._in)
        _kill(self.process, self.cgroup)
        for pending in self.pending.values():
            for task in pending.tasks:
                task.cancel()
            if not pending.future.done() and not pending.future.get_loop().is_closed():
                pending.future.set_result(_worker_failure("the skill worker exited unexpectedly"))
        self.pending.clear()


class WorkerPool:
    """Up to ``size`` warm workers shared by every runtime that uses this pool."""

    def __init__(
        self,
        size: int = 2,
        *,
        grace_sec: float = _GRACE_SECONDS,
        preload: Sequence[CallTarget] = (),
        ready_children: int = READY_CHILDREN,
    ) -> None:
        """A pool of at most ``size`` workers, started on first use.

        A worker silent for a call's timeout plus ``grace_sec`` is killed and
        replaced. ``preload`` names more call targets whose modules the
        workers import at start, so calls into them start warm (each adds to
        the cost of every call's fork: keep it to what most calls use).
        While it has no call to run, each worker keeps children forked ahead,
        namespaced and with their mount view made, each waiting for one call:
        as many as the calls it ran at once last, up to ``ready_children``
        (0: every call forks its own child).
        """
        check_number("size", size, minimum=1, whole=True)
        check_number("grace_sec", grace_sec)
        check_number("ready_children", ready_children, minimum=0, whole=True)
        self.size = size
        self.ready_children = ready_children
        self.grace_sec = grace_sec
        self._preload = tuple(target_name(target).split(":")[0] for target in preload)
        self._workers: list[_Worker] = []
        self._ids = itertools.count(1)
        self._starting: asyncio.Lock | None = None
        self._lock_loop: asyncio.AbstractEventLoop | None = None
        self._calls_folder: str | None = None
        self.started = 0
        _pools.add(self)

    @property
    def pids(self) -> list[int]:
        """Process ids of the live workers."""
        return [worker.process.pid for worker in self._workers if worker.alive]

    @property
    def preload(self) -> tuple[str, ...]:
        """The modules a worker imports at start: those registered everywhere, then this pool's."""
        return tuple(dict.fromkeys([*_PRELOAD, *self._preload]))

    async def call(
        self,
        target: CallTarget,
        payload: dict[str, Any],
        *,
        cwd: str | Path,
        env: dict[str, str],
        confine_spec: dict[str, Any],
        timeout_sec: float,
        on_message: MessageHandler | None = None,
        max_output_bytes: int = 1_000_000,
        max_message_bytes: int = MAX_MESSAGE_BYTES,
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
                worker = await self._acquire(network=bool(request["confine"].get("network")))
            except WorkerError as exc:
                return _worker_failure(str(exc))
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
        if self._calls_folder is not None:
            shutil.rmtree(self._calls_folder, ignore_errors=True)
            self._calls_folder = None

    async def start(self, *, network: bool = False) -> None:
        """Start a worker now (when none is running), so the first call finds it warm.

        Returns once the process is launched; it loads its modules meanwhile.
        """
        await self._acquire(network=network)

    async def _acquire(self, *, network: bool) -> _Worker:
        """A worker for a call denied the network (or, with ``network``, allowed it): up to ``size`` of each kind."""
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
                kind.append(_Worker(process, loop, cgroup, network=network))
                self._workers.append(kind[-1])
            return min(kind, key=lambda worker: len(worker.pending))

    def _spawn(self, network: bool) -> tuple[subprocess.Popen[bytes], str | None]:
        if self._calls_folder is None or not os.path.isdir(self._calls_folder):
            self._calls_folder = tempfile.mkdtemp(prefix="semif-calls-")
        parent = _cgroup.host_parent()
        cgroup = _cgroup.create(parent, f"worker-{os.getpid()}-{id(self):x}-{self.started}") if parent else None
        env = {key: os.environ[key] for key in DEFAULT_ENV_ALLOW if key in os.environ}
        command = [sys.executable, "-I", WORKER_MAIN, package_parent(), self._calls_folder, cgroup or "-"]
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
        setup = {
            "system_readable": list(system_readable_paths()),
            "system_folders": list(system_readable_folders()),
            "secrets": list(etc_secrets()),
            "preload": list(self.preload),
            "ready_children": self.ready_children,
            "network": network,
        }
        assert process.stdin is not None  # piped above
        process.stdin.write(json.dumps(setup).encode("utf-8") + b"\n")
        process.stdin.flush()
        self.started += 1
        return process, cgroup


def _kill(process: subprocess.Popen[bytes], cgroup: str | None) -> None:
    kill_group(process.pid)
    for stream in (process.stdin, process.stdout):
        try:
            if stream is not None:
                stream.close()
        except OSError:
            pass
    try:
        loop = asyncio.get_running_loop()
    except RuntimeError:  # no running loop (at exit): clean up here
        _reap(process, cgroup)
        return
    loop.run_in_executor(None, _reap, process, cgroup)


def _reap(process: subprocess.Popen[bytes], cgroup: str | None) -> None:
    """Wait for a killed worker, then kill what its calls left in its cgroup and remove it."""
    try:
        process.wait(timeout=2)
    except subprocess.TimeoutExpired:
        pass
    if cgroup is not None:
        _cgroup.remove(cgroup)


def _worker_failure(message: str) -> dict[str, object]:
    return {
        "returncode": -1,
        "timed_out": False,
        "reported": str(ErrorType.WORKER),
        "stdout": "",
        "stderr": message,
        "confinement": {},
    }


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
