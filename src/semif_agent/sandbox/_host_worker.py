"""The host's end of one warm worker process: :class:`Worker`, its pipes and the calls it has in flight.

The worker speaks JSON lines over pipes that the event loop's reader and writer callbacks
watch: nothing blocks the loop, and one worker runs many calls at once. Lines sent in one
turn of the loop after the first go out together at its end, in one write.
"""

from __future__ import annotations

import asyncio
import json
import os
import subprocess
from collections.abc import Awaitable, Callable, Mapping
from dataclasses import dataclass, field
from typing import Any

from . import _cgroup
from ._process_group import kill_group
from .results import ErrorType

MessageHandler = Callable[[dict[str, Any]], Awaitable[dict[str, Any]]]
_encode = json.JSONEncoder(ensure_ascii=False).encode  # made once: json.dumps with options makes one per call
_LINE_KINDS = ("ask", "done")  # what a worker's line is: a call's question, or its end


@dataclass
class _Pending:
    """A call in flight: the future its ``done`` line resolves, its handler and the handler's tasks."""

    future: asyncio.Future[dict[str, Any]]
    on_message: MessageHandler | None
    tasks: set[asyncio.Task[None]] = field(default_factory=set)


class Worker:
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
        self._batching = False
        os.set_blocking(self._in, False)
        os.set_blocking(self._out, False)
        loop.add_reader(self._out, self._on_readable)

    def start(self, request: dict[str, Any], on_message: MessageHandler | None) -> asyncio.Future[dict[str, Any]]:
        """Send one call; the future resolves with the worker's ``done`` line (or a failure)."""
        future: asyncio.Future[dict[str, Any]] = self.loop.create_future()
        if not self.alive:
            future.set_result(worker_failure("the skill worker exited unexpectedly"))
            return future
        self.pending[request["id"]] = _Pending(future, on_message)
        self.send(request)
        return future

    def send(self, line: Mapping[str, object]) -> None:
        """Queue one JSON line for the worker: written now when it is the first of this turn of the loop,
        else with the others at the turn's end (a burst of calls costs two writes and wakes the worker twice)."""
        self._unsent += _encode(line).encode("utf-8") + b"\n"
        if self._writing or self._batching:
            return
        self._flush()  # at once: a worker found dead here fails the call before it waits
        self._batching = True
        self.loop.call_soon(self._end_batch)

    def _end_batch(self) -> None:
        self._batching = False
        if self._unsent and not self._writing and self.alive:
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
            future.set_result(worker_failure("the skill worker stopped answering and was restarted"))
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
                pending.future.set_result(worker_failure("the skill worker exited unexpectedly"))
        self.pending.clear()


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


def worker_failure(message: str) -> dict[str, object]:
    return {
        "returncode": -1,
        "timed_out": False,
        "reported": str(ErrorType.WORKER),
        "stdout": "",
        "stderr": message,
        "confinement": {},
    }
