"""The confined side of a call's message channel: :class:`Channel`.

A function run by :meth:`~.pool.WorkerPool.call` gets ``(payload, channel)``.
``channel.ask(message)`` sends a JSON object to the host and blocks until the
host's ``on_message`` handler answers with another, which ``ask`` returns; a
handler that raises (or a call started without a handler) makes ``ask`` raise
:class:`~.errors.ChannelError` with the handler's error.

Under the hood each line the child writes to the worker starts with one letter
saying what it is (``A`` a question, ``V`` the function's value with the
call's id, ``E`` an error type, ``C`` the confinement that held, ``W``
modules it warmed, ``D`` the end of a call in a warm process), and each
line it reads starts with ``R`` (an answer), ``X`` (an error) or ``N`` (a warm process's next call).
The worker relays questions and answers to and from the
host, tagged with the call's id.

The code a call runs holds this channel's descriptors and can write anything
on them, so the worker takes every line as untrusted data
(:mod:`._messages`): at most :data:`MAX_LINE_BYTES` (or the call's
``max_message_bytes``), nested at most 64 deep, one shape per kind, one value;
a line that breaks a rule ends that call as a ``channel`` failure, and none
changes how the worker watches the call. Standard library only, apart from
the sandbox's errors.
"""

from __future__ import annotations

import _thread  # not threading: its at-fork hook would cost every forked call
import json
import os
from typing import Any

from ..errors import ArgumentTypeError, check_number
from .errors import ChannelError

MAX_LINE_BYTES = 1024 * 1024
"""The largest line (a question, a value; JSON text) a call's child may send, unless the call says otherwise."""


class Channel:
    """Ask the host questions from inside a confined call (one at a time; thread-safe)."""

    def __init__(self, send_fd: int, receive_fd: int, *, call_id: int = 0) -> None:
        """Speak over ``send_fd`` (to the worker) and ``receive_fd`` (from it), both owned from now on, for call ``call_id``."""
        check_number("send_fd", send_fd, whole=True)
        check_number("receive_fd", receive_fd, whole=True)
        check_number("call_id", call_id, whole=True)
        self._call_id = call_id
        self._send_fd = send_fd
        self._receive_fd = receive_fd
        self._lock = _thread.allocate_lock()
        self._buffer = bytearray()

    def ask(self, message: dict[str, Any]) -> dict[str, object]:
        """Send ``message`` (a JSON object) to the host and return its answer (a JSON object).

        Raises :class:`~.errors.ChannelError` when the host's handler failed
        or the channel is closed, ``TypeError`` when ``message`` is not a
        JSON-ready dict.
        """
        if not isinstance(message, dict):
            raise ArgumentTypeError(f"a channel message is a dict, not {type(message).__name__}")
        line = b"A" + json.dumps(message, ensure_ascii=False).encode("utf-8") + b"\n"
        with self._lock:
            self._write(line)
            answer = self._read_line()
        if answer[:1] == b"R":
            return json.loads(answer[1:])
        raise ChannelError(answer[1:].decode("utf-8", errors="replace") or "the host did not answer")

    def send_value(self, value: object) -> None:
        """Hand the call's return value to the worker (the runner does this; functions just return)."""
        data = {"call": self._call_id, "value": value}
        self._write(b"V" + json.dumps(data, ensure_ascii=False).encode("utf-8") + b"\n")

    def report(self, kind: str, detail: object) -> None:
        """Tell the worker an error type (``kind`` ``E``) or what confinement held (``C``)."""
        self._write(kind.encode("ascii") + json.dumps(detail).encode("utf-8") + b"\n")

    def next_line(self) -> bytes:
        """The next line the worker sends (a warm process's next call, :mod:`._resident`); the sandbox's own."""
        with self._lock:
            return self._read_line()

    @property
    def call_id(self) -> int:
        """The call this channel speaks for."""
        return self._call_id

    def start_call(self, call_id: int) -> None:
        """Speak for call ``call_id`` from now on (a warm process's next call); the sandbox's own."""
        self._call_id = call_id

    def _write(self, data: bytes) -> None:
        view = memoryview(data)
        try:
            while view:
                view = view[os.write(self._send_fd, view) :]
        except OSError as exc:
            raise ChannelError(f"the channel to the host is closed ({exc.strerror})") from None

    def _read_line(self) -> bytes:
        while True:
            end = self._buffer.find(b"\n")
            if end >= 0:
                line = bytes(self._buffer[:end])
                del self._buffer[: end + 1]
                return line
            try:
                chunk = os.read(self._receive_fd, 1 << 20)
            except OSError as exc:
                raise ChannelError(f"the channel to the host is closed ({exc.strerror})") from None
            if not chunk:
                raise ChannelError("the channel to the host is closed")
            self._buffer += chunk
