"""The warm worker's side of processes kept warm between calls of one setup (:mod:`._resident`):
:class:`WarmCalls`, what :mod:`._worker` builds on. Standard library only; the worker imports it at start."""

from __future__ import annotations

import json
import os
from types import ModuleType
from typing import TYPE_CHECKING, Any

from ._relay import Relay

if TYPE_CHECKING:
    from ._call import Call
    from ._cgroup import Slots
    from ._folders import CallFolders
    from ._ready import ReadyChildren
    from ._resident import Resident

Started = tuple[dict[str, Any], str, "str | None", tuple[int, int, int, int], tuple[int, ...]]
"""A call given to a process: its request, its folder, its cgroup slot, the worker's ends of its pipes, and
its channel's descriptors in the child."""


class WarmCalls(Relay):
    """Handing a call to a warm process, ending a call that ran in one, letting one go."""

    warm_processes: ModuleType  # the _resident module
    warm_check: ModuleType  # the _warm_check module
    watch: ModuleType  # the _watch module
    slots: Slots | None
    ready: ReadyChildren
    folders: CallFolders

    def _record(self, pid: int, held: dict[str, str], started: Started, *, warm: Resident | None = None) -> None:
        raise NotImplementedError  # the worker's

    def _hand_to_warm(self, request: dict[str, Any]) -> bool:
        """Note ``request``'s setup (its child may then stay warm) and hand it to a process waiting with that
        setup, once judged fit from outside and its folder emptied (:mod:`._warm_check`); False when none
        waits, or the one found may not serve again (it is let go)."""
        reuse = request["setup"] = self.warm_processes.setup_key(request)
        warm = self.residents.take(reuse)
        if warm is None:
            return False
        if self.warm_check.unfit(warm) or not self.folders.empty(warm.run_dir):
            self.residents.give_up(warm)  # its folder is emptied once it is reaped
            self.groups.kill_group(warm.pid)
            return False
        spec = request["confine"]
        spec["writable"] = [*spec.get("writable", []), warm.run_dir]
        request["env"]["TMPDIR"] = warm.run_dir
        self._record(warm.pid, warm.held, (request, warm.run_dir, warm.slot, warm.own_fds, warm.child_fds), warm=warm)
        next_call = {"id": request["id"], "payload": request["payload"]}
        self.calls[warm.pid].unsent = b"N" + json.dumps(next_call, ensure_ascii=False).encode("utf-8") + b"\n"
        self._flush_answers(warm.pid)
        self.warm_processes.wake(warm)  # once its call is there: one wake-up
        return True

    def _end_warm_call(self, pid: int, call: Call, code: int, stays: bool) -> None:
        """A call ended in a process that may serve the next of its setup: its ``done`` line, then the process
        waits, stopped, to be judged when a call of its setup comes (or is let go: the worker stopped the
        call, or it asked to go). Its folder is emptied only once it is judged, or reaped."""
        for fd in list(call.outputs):  # what it wrote before it said so is in the pipes now
            while fd in call.outputs and self._read_output(call, fd):
                pass
        self.watch.out_of_memory(call, self.slots)
        call.messages_done = True  # what follows is the next call's
        del self.calls[pid]
        self.by_id.pop(call.call_id, None)
        for fd in (*call.outputs, call.replies):
            self._unwatch(fd)
        stays = stays and not (call.reported or call.timed_out or call.unsent or len(call.outputs) < 2)
        stays = stays and call.heard.claimed != "memory" and call.held.get("processes") == "pid-namespace"
        stays = stays and call.cgroup is not None and self.warm_processes.rest(pid)  # stopped until judged
        self._send(call.done_line((code & 0xFF) << 8, 0.0))
        fds = (call.messages, call.replies, *call.outputs)
        warm = self.warm_processes.Resident(
            pid,
            fds,
            call.held,
            call.cgroup,
            call.run_dir,
            child_fds=call.child_fds,
            allowance=call.allowance,
            served=call.served,
        )
        if stays:
            self.ready.kept_warm()
            let_go = self.residents.wait(warm)
        else:
            self.residents.give_up(warm)
            let_go = [warm]
        for each in let_go:
            self.groups.kill_group(each.pid)  # its pipes, slot and folder are freed once it is reaped
        if not self.calls:
            self.ready.idle()

    def _let_go_idle(self, now: float) -> None:
        """Let go the waiting processes idle too long, or no longer alone in their cgroup."""
        for warm in [*self.residents.idle_too_long(now), *self.residents.strays(self.warm_processes.alone, now)]:
            self.groups.kill_group(warm.pid)

    def _let_go(self, warm: Resident) -> None:
        """A warm process reaped (the init of its PID namespace: nothing of its calls is left): close the
        worker's ends of its pipes, free its cgroup slot and its folder."""
        for fd in warm.own_fds:
            self._unwatch(fd)
            os.close(fd)
        if warm.slot is not None and self.slots is not None:
            self.slots.give_back(warm.slot, emptied=warm.held.get("processes") == "pid-namespace")
        self.folders.empty(warm.run_dir)
