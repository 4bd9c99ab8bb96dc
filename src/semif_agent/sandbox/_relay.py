"""The warm worker's side of its calls' pipes: :class:`Relay`, what :mod:`._worker` builds on.

It reads what each call's child writes (its channel's lines, untrusted, see :mod:`._messages`; its
stdout and stderr, up to their bound), relays questions to the host and answers back, and writes the
worker's own lines to the host. Standard library only; the worker imports it at start.
"""

from __future__ import annotations

import json
import os
import selectors
from collections.abc import Mapping
from types import ModuleType
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from ._call import Call
    from ._resident import Residents
    from ._zygote import Zygote


class Relay:
    """The pipes between the worker, its calls' children and the host."""

    calls: dict[int, Call]
    by_id: dict[int, int]
    selector: selectors.BaseSelector
    reply_fd: int
    to_host: bytearray
    call: ModuleType  # the _call module
    groups: ModuleType  # the _process_group module
    zygote: Zygote
    residents: Residents

    def _end_warm_call(self, pid: int, call: Call, code: int, stays: bool) -> None:
        raise NotImplementedError

    def _read_messages(self, pid: int, call: Call) -> bool:
        """Take the complete lines the call wrote to its channel; False once nothing more is there now."""
        try:
            chunk = os.read(call.messages, 1 << 20)
        except BlockingIOError:
            return False
        except OSError:
            chunk = b""
        if not chunk:
            self._unwatch(call.messages)
            call.messages_done = True
            return False
        start = len(call.received)
        call.received += chunk
        if call.received.find(b"\n", start) < 0:
            if len(call.received) > call.max_message + 1:
                self._break_channel(pid, call, f"a line larger than {call.max_message} bytes")
            return True
        *lines, rest = bytes(call.received).split(b"\n")
        call.received = bytearray(rest)
        for line in lines:
            if call.messages_done:  # a warm process wrote past the end of its call: let go
                self._let_go_now(pid)
                return False
            self._take_line(pid, call, line)
        if rest and call.messages_done:
            self._let_go_now(pid)
        return not call.messages_done

    def _let_go_now(self, pid: int) -> None:
        """Kill the warm process ``pid`` that ended its call, unless it is reaped already (its pid is free)."""
        if pid in self.residents.alive:
            self.groups.kill_group(pid)

    def _unwatch(self, fd: int) -> None:
        if fd in self.selector.get_map():
            self.selector.unregister(fd)

    def _read_output(self, call: Call, fd: int) -> bool:
        """Keep what the call wrote to stdout or stderr, up to its bound; False once nothing more is there now."""
        try:
            chunk = os.read(fd, 1 << 16)
        except BlockingIOError:
            return False
        except OSError:
            chunk = b""
        if not chunk:
            self._unwatch(fd)
            os.close(fd)
            del call.outputs[fd]
            return False
        stream = call.outputs[fd]
        kept = call.kept[stream]
        room = max(call.max_output - len(kept), 0)
        kept += chunk[:room]
        call.dropped[stream] += max(len(chunk) - room, 0)
        return True

    def _take_line(self, pid: int, call: Call, line: bytes) -> None:
        """One line of the call's channel, untrusted (:mod:`._messages`): relayed, kept, or the call killed.
        A call the worker killed says nothing more: it ends when its process is reaped."""
        if call.reported or call.timed_out:
            return
        try:
            said = call.heard.take(line, self.call.WARM_LATER)
        except ValueError as exc:
            self._break_channel(pid, call, str(exc))
            return
        if said is None:
            return
        if said[0] == "ask":
            self._send({"id": call.call_id, "kind": "ask", "message": said[1]})
        elif said[0] == "held":  # what the child set up; how its processes are held (which the worker acts on) stays
            call.held.update({key: how for key, how in said[1].items() if key != "processes"})
        elif said[0] == "done" and self.calls.get(pid) is call:
            self._end_warm_call(pid, call, *said[1])
        elif said[0] == "done":  # read after its process was reaped: its exit status ends the call
            call.messages_done = True
        else:  # standard modules the zygote imports, so later children find them
            self.zygote.warm(said[1])

    def _break_channel(self, pid: int, call: Call, what: str) -> None:
        if not call.reported:
            call.reported = "channel"
            call.notes.append(f"killed: the skill's process sent a malformed message: {what}")
        self.groups.kill_group(pid)

    def _answer(self, reply: dict[str, Any]) -> None:
        pid = self.by_id.get(int(reply["id"]))
        call = self.calls.get(pid) if pid is not None else None
        if pid is None or call is None or not call.heard.asking:
            return  # the call ended, or never asked: the answer is dropped
        call.heard.asking = False
        if reply.get("ok"):
            line = b"R" + json.dumps(reply.get("reply"), ensure_ascii=False).encode("utf-8")
        else:
            line = b"X" + str(reply.get("error", "the host's handler failed")).encode("utf-8")
        call.unsent += line.replace(b"\n", b" ") + b"\n"
        self._flush_answers(pid)

    def _flush_answers(self, pid: int) -> None:
        call = self.calls[pid]
        try:
            written = os.write(call.replies, call.unsent)
            call.unsent = call.unsent[written:]
        except BlockingIOError:
            pass
        except OSError:
            call.unsent = b""
        waiting = self.selector.get_map().get(call.replies) is not None
        if call.unsent and not waiting:
            self.selector.register(call.replies, selectors.EVENT_WRITE, ("answers", pid))
        elif not call.unsent and waiting:
            self.selector.unregister(call.replies)

    def _send(self, line: Mapping[str, object]) -> None:
        """Queue one line for the host; :meth:`_send_held` writes those of one turn of the loop together."""
        self.to_host += json.dumps(line, ensure_ascii=False).encode("utf-8") + b"\n"

    def _send_held(self) -> None:
        view = memoryview(self.to_host)
        while view:
            view = view[os.write(self.reply_fd, view) :]
        view.release()
        self.to_host.clear()
