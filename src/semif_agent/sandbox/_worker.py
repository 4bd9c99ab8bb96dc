"""The warm worker: runs confined calls, each in a forked child, and relays their messages.

The host's :class:`~.pool.WorkerPool` spawns this file as ``python -I _worker.py
PACKAGE_PARENT CALLS_FOLDER CGROUP SETUP`` (``CGROUP`` is ``-`` when there is none; ``SETUP`` is JSON:
the system folders every call may read, the modules to import now); never import it. On stdin come JSON
lines ``{"op": "call", ...}`` and ``{"op": "reply", ...}``.
Lines leave on the original stdout, which nothing else can write to:
``{"id", "kind": "ask", "message"}`` when a call asks the host something, and
``{"id", "kind": "done", ...}`` when it ended. The worker exits when stdin closes.

Isolation, each where the kernel allows it (the ``confinement`` of every
``done`` line says what held):

- The worker enters a network namespace of its own at start (loopback only,
  down), so its children have no network; a call allowed the network there
  joins the host's again (root), or gets none. The pool sends such calls to
  workers started for them, which stay in the host's namespace (and give a
  call denied the network one of its own). It also enters a mount namespace in
  which the secrets of ``/etc`` are empty, so Landlock allows ``/etc`` with
  one rule instead of one per entry (a fifth of the rules, and of their cost).
- No call's child is forked from the worker, which holds every call's request and result: at start,
  before it reads any call, it forks a zygote (:mod:`._zygote`), handed nothing of a call, which forks
  them all; they are the worker's children still (it reaps them).
- While no call runs, the worker keeps a few children forked ahead, namespaced and with the part of their
  mount view no call changes, each waiting for one call (:mod:`._ready`); other calls have one forked for them.
- A call with a ``reuse`` key may run in a process kept warm from an earlier call of the same setup,
  stopped while it waits, judged from outside before it serves again (:mod:`._warm_check`).
- Each call's child is the init of a new PID namespace (:mod:`._isolation`):
  when it exits or is killed, so is every process it started. Otherwise it
  is a process-group leader and a subreaper, and what it leaves behind is
  killed when it ends: through its cgroup, or else as orphans of the worker
  (itself a subreaper), looked for in ``/proc`` shortly after.
- Each call's processes join a ``pids`` cgroup of their own (:mod:`._cgroup`)
  capped at the call's process allowance: one of the worker's ``slot-<n>``
  cgroups, made when no free one is left and reused once empty.
- The child applies the call's limits and Landlock rules (:mod:`._confine`).
- The worker watches how much each call writes (:mod:`._disk`) and kills it past its allowance.
- It empties a call's private folder only once nothing of the call can run (:mod:`._folders`).
- Every line a call's child writes is untrusted data (:mod:`._messages`): it never changes
  the watch above, and a malformed one ends that call alone.
"""

from __future__ import annotations

import gc
import json
import os
import selectors
import signal
import sys
import time
from types import ModuleType
from typing import TYPE_CHECKING, Any

sys.path.insert(0, sys.argv[1])  # the package's parent (this file runs as a program, never imported)
from semif_agent.sandbox._folders import CallFolders
from semif_agent.sandbox._ready import ready as waiting_child
from semif_agent.sandbox._warm_calls import Started, WarmCalls
from semif_agent.sandbox._zygote import Zygote, ZygoteGone

if TYPE_CHECKING:
    from semif_agent.sandbox._call import Call
    from semif_agent.sandbox._resident import Resident

Prepared = tuple[dict[str, Any], str, "str | None", tuple["str | None", "str | None"]]
"""A call made ready for a child forked for it: its request, its folder, its cgroup slot, the paths of its cgroups."""
_SWEEP_DELAY = 0.05  # orphans are looked for (all of /proc is read) at most this often
_FOLDERS_LOOK = 0.05  # how often folders waiting for their call's processes to be gone are looked at


class _Worker(WarmCalls):
    def __init__(
        self,
        modules: tuple[ModuleType, ...],
        zygote: Zygote,
        reply_fd: int,
        calls_folder: str,
        cgroup: str | None,
        network: tuple[str, int],
        *,
        network_allowed: bool = False,
        ready_children: int = 0,
        warm: dict[str, Any] | None = None,
    ) -> None:
        """``zygote``: what forks its calls' children (:mod:`._zygote`); ``network``: ("worker", fd of the
        host's namespace) when this worker left it, ("per-call", -1) when each call gets a namespace of its
        own (in our user namespace), ("none", -1) otherwise; ``network_allowed``: whether its calls may use
        the network (the pool sends it only such calls); ``ready_children``: how many children it keeps
        forked ahead of its calls (:mod:`._ready`); ``warm``: how long (``idle_sec``) and how many
        (``most``) it keeps processes warm (:mod:`._resident`)."""
        self.call, self.isolation, self.cgroups, self.disk, self.groups, self.watch, ready, resident, check = modules
        self.zygote = zygote
        self.reply_fd, self.to_host = reply_fd, bytearray()
        self.folders = CallFolders(calls_folder, self.call.empty_folder)
        self.slots = self.cgroups.Slots(cgroup) if cgroup is not None else None
        self.sweep_at = float("inf")  # when to kill the orphans of calls that had no namespace or cgroup
        self.folders_at = float("inf")  # when to look at the folders waiting for their call's processes to go
        self.network_mode, self.host_netns = network
        self.namespaces_work = True
        self.network_allowed = network_allowed
        self.ready = ready.ReadyChildren(
            zygote, self.isolation, self.network_mode, allowed=network_allowed, size=ready_children
        )
        self.residents = resident.Residents(**(warm or {}))  # processes kept warm between calls of one setup
        self.warm_processes = resident  # the module: its functions for the worker's side (:class:`WarmCalls`)
        self.warm_check = check
        self.calls: dict[int, Call] = {}
        self.by_id: dict[int, int] = {}
        self.pending_input = bytearray()
        self.selector = selectors.DefaultSelector()
        self.wake_r, self.wake_w = os.pipe()
        os.set_blocking(self.wake_r, False)
        os.set_blocking(self.wake_w, False)
        signal.set_wakeup_fd(self.wake_w)
        signal.signal(signal.SIGCHLD, lambda *_: None)
        resident.quiet_stops()
        os.set_blocking(0, False)
        self.selector.register(0, selectors.EVENT_READ, ("requests", 0))
        self.selector.register(self.wake_r, selectors.EVENT_READ, ("wake", 0))

    # -- the loop ----------------------------------------------------------------

    def serve(self) -> None:
        """Run calls until stdin closes, or the zygote is gone (the pool then starts another worker)."""
        try:
            self._serve()
        except ZygoteGone:
            self._shutdown()

    def _serve(self) -> None:
        while True:
            events = self.selector.select(self._next_timeout())
            if not events and not self.calls and self.namespaces_work and self.ready.wanted():
                self.ready.fork_one()  # idle: one more child ready for a call
            for key, mask in events:
                kind, pid = key.data
                if kind == "requests" and not self._read_requests():
                    self._shutdown()
                    return
                if kind == "wake":
                    self._drain(self.wake_r)
                elif kind == "messages" and pid in self.calls:
                    self._read_messages(pid, self.calls[pid])
                elif kind == "messages":  # a warm process between calls says nothing: it is let go
                    self._unwatch(key.fd)
                    self.groups.kill_group(pid)
                elif kind == "output" and pid in self.calls:
                    self._read_output(self.calls[pid], key.fd)
                elif kind == "answers" and pid in self.calls and mask & selectors.EVENT_WRITE:
                    self._flush_answers(pid)
            if self._reap():
                self._shutdown()
                return
            self._enforce_limits()
            self._send_held()

    def _next_timeout(self) -> float | None:
        if not self.calls and self.namespaces_work and self.ready.wanted():
            return 0.0
        moments = [call.deadline for call in self.calls.values() if not call.timed_out]
        moments += [call.next_check for call in self.calls.values()]
        moments += [at for at in (self.sweep_at, self.folders_at) if at < float("inf")]
        moments += [expiry] if (expiry := self.residents.next_expiry()) < float("inf") else []
        if moments:
            return max(0.0, min(moments) - time.monotonic())
        return 0.05 if self.calls else None

    @staticmethod
    def _drain(fd: int) -> None:
        try:
            while os.read(fd, 4096):
                pass
        except BlockingIOError:
            pass

    def _read_requests(self) -> bool:
        try:
            chunk = os.read(0, 1 << 20)
        except BlockingIOError:
            return True
        if not chunk:
            return False
        self._consume(chunk)
        return True

    def _consume(self, chunk: bytes) -> None:
        start = len(self.pending_input)
        self.pending_input += chunk
        if self.pending_input.find(b"\n", start) < 0:
            return
        *lines, rest = bytes(self.pending_input).split(b"\n")
        self.pending_input = bytearray(rest)
        starting = []
        for line in lines:
            if line.strip():
                request = json.loads(line)
                if request["op"] == "call":
                    starting.append(request)
                else:
                    self._answer(request)
        if starting:
            self._start(starting)

    # -- starting calls --------------------------------------------------------------

    def _start(self, requests: list[dict[str, Any]]) -> None:
        """Start calls that arrived together: each in a warm process of its setup, else in a child forked
        ahead, else in a child the zygote forks for it now (those asked for together, in one go)."""
        fresh = []
        for request in requests:
            try:
                needs_child = self._prepare(request)
            except OSError as exc:
                self._send(self.call.refusal(request, exc))
                continue
            if needs_child is not None:
                fresh.append(needs_child)
        if fresh:
            self._fork_for(fresh)
        self.ready.running(sum(1 for call in self.calls.values() if not call.warm))

    def _prepare(self, request: dict[str, Any]) -> Prepared | None:
        """Give ``request`` to a warm process or a child forked ahead (None), else make it ready for a child
        forked for it: (request, folder, cgroup slot, the paths of its cgroups)."""
        spec = request["confine"]
        fits = spec.get("namespaces", True) and bool(spec.get("network")) == self.network_allowed
        may_stay = fits and self.namespaces_work and self.slots is not None and spec.get("max_processes") is not None
        if request.get("reuse") is not None and may_stay and self._hand_to_warm(request):
            return None
        if "setup" not in request:
            request.pop("reuse", None)  # no setup noted: the child exits with its call
        run_dir = self.folders.take()
        spec["writable"] = [*spec.get("writable", []), run_dir]
        request["env"]["TMPDIR"] = run_dir
        limit = spec.get("max_processes")
        slot = self.slots.take(limit) if self.slots is not None and limit is not None else None
        if slot is not None and self.slots is not None and spec.get("memory_bytes"):  # one cap for all it starts
            spec["memory_members"] = self.slots.cap_memory(slot, int(spec["memory_bytes"]))
        self.ready.view["tmpfs_bytes"] = spec.get("disk_bytes")  # what the next children forked ahead make
        capped = spec.get("memory_members") is not None and self.slots is not None and slot is not None
        cgroups = (slot, self.slots.memory[slot][0] if capped and self.slots is not None and slot is not None else None)
        ready = self.ready.take() if fits and self.namespaces_work else None
        while ready is not None:
            if self.ready.hand_over(ready, request, cgroups):
                self._record(ready.pid, ready.held, (request, run_dir, slot, ready.own_fds, ready.child_fds))
                return None
            self.ready.discard(ready)  # it died while it waited: the next one, else a fork
            ready = self.ready.take()
        return request, run_dir, slot, cgroups

    def _fork_for(self, fresh: list[Prepared]) -> None:
        """Have the zygote fork a child for each call of ``fresh`` (:meth:`_prepare`), and hand it its call."""
        how = [self._how(request["confine"], slot) for request, _dir, slot, _cgroups in fresh]
        forked = self.zygote.fork([(flags, held, None) for flags, held in how])
        for (request, run_dir, slot, cgroups), (flags, held), child in zip(fresh, how, forked):
            if isinstance(child, OSError) and flags:  # namespaces refused: this call and the next fork plainly
                self.namespaces_work = False
                flags, held = self._how(request["confine"], slot)
                (child,) = self.zygote.fork([(flags, held, None)])
            if isinstance(child, OSError):
                self.folders.give_back(run_dir)
                if slot is not None and self.slots is not None:
                    self.slots.give_back(slot, emptied=True)
                self._send(self.call.refusal(request, child))
                continue
            waiting = waiting_child(child, held)
            if not self.ready.hand_over(waiting, request, cgroups):
                pass  # it is gone already: its call ends when it is reaped
            self._record(waiting.pid, waiting.held, (request, run_dir, slot, waiting.own_fds, waiting.child_fds))

    def _how(self, spec: dict[str, Any], slot: str | None) -> tuple[int, dict[str, str]]:
        """How a call's child is forked: into new PID (and network) namespaces when allowed, else plainly;
        the namespace flags, and how its processes and network are held."""
        namespaces, allowed = bool(spec.get("namespaces", True)), bool(spec.get("network"))
        if self.namespaces_work and namespaces:
            return self.ready.namespaces(self.network_mode, allowed=allowed)
        network = "allowed" if allowed else "namespace" if namespaces and self.network_mode == "worker" else "open"
        return 0, {"processes": "cgroup" if slot is not None else "subreaper", "network": network}

    def _record(self, pid: int, held: dict[str, str], started: Started, *, warm: Resident | None = None) -> None:
        """Keep the call ``started`` that the child ``pid`` runs; ``warm``: a process kept from an earlier call."""
        request, run_dir, slot, own_fds, child_fds = started
        if warm is None:
            for fd in own_fds:
                os.set_blocking(fd, False)
        reuse = request.get("setup")
        call = self.call.Call(
            int(request["id"]),
            float(request["timeout"]),
            run_dir,
            request,
            own_fds,
            held,
            slot,
            self.disk,
            reuse_key=reuse,
            confined=warm is not None,
            child_fds=child_fds,
            allowance=self.warm_check.allowance(request["confine"]),
            served=warm.served + 1 if warm is not None else 1,
        )
        self.calls[pid] = call
        self.by_id[call.call_id] = pid
        if reuse is not None:
            self.residents.may_stay(pid, reuse)
        # questions relayed at once, and a warm process's end of call; otherwise read at the end or from the first check
        if (request.get("listen") or reuse is not None) and own_fds[0] not in self.selector.get_map():
            self.selector.register(own_fds[0], selectors.EVENT_READ, ("messages", pid))

    # -- ending calls ------------------------------------------------------------------

    def _reap(self) -> bool:
        """Reap the children that ended; True when the zygote is one of them (no call can start any more)."""
        while True:
            try:
                pid, status, usage = os.wait4(-1, os.WNOHANG)
            except ChildProcessError:
                return False
            if pid == 0:
                return False
            if pid == self.zygote.pid:
                return True
            call = self.calls.pop(pid, None)
            warm = self.residents.ended(pid)
            if call is not None:
                self._finish(pid, call, status, usage.ru_utime + usage.ru_stime)
                if not self.calls:
                    self.ready.idle()
            elif warm is not None:
                self._let_go(warm)  # a warm process that was let go, or died waiting
            else:
                self.ready.forget(pid)  # a child that died while it waited for a call

    def _enforce_limits(self) -> None:
        now = time.monotonic()
        if now >= self.sweep_at:  # what calls that ended without a namespace or a cgroup left behind
            self.sweep_at = float("inf")
            spare = frozenset(self.calls) | self.ready.pids() | {self.zygote.pid}
            if self.isolation.kill_descendants(os.getpid(), spare=spare):
                self.sweep_at = now + _SWEEP_DELAY  # killed: looked for again, until none is left
            else:
                self.folders.empty_waiting(self.cgroups.members, orphans_left=False)
        if now >= self.folders_at:
            self.folders.empty_waiting(self.cgroups.members, orphans_left=self.sweep_at < float("inf"))
            self.folders_at = now + _FOLDERS_LOOK if self.folders.waiting else float("inf")
        self._let_go_idle(now)
        walks: dict[str, list[tuple[int, int]]] = {}
        for pid, call in self.calls.items():
            if not call.timed_out and now >= call.deadline:
                call.timed_out = True
                self.groups.kill_group(pid)
            if now < call.next_check:
                continue
            if not call.listening:  # a call this long may write more than a pipe holds: read as it goes
                call.listening = True
                for fd in call.outputs:
                    self.selector.register(fd, selectors.EVENT_READ, ("output", pid))
                if not call.messages_done and call.messages not in self.selector.get_map():
                    self.selector.register(call.messages, selectors.EVENT_READ, ("messages", pid))
            if self.watch.over_limits(call, pid, self.slots, walks):
                self.groups.kill_group(pid)

    def _finish(self, pid: int, call: Call, status: int, cpu_used: float) -> None:
        self._collect_last_messages(pid, call)
        self.watch.out_of_memory(call, self.slots)
        gone = call.held.get("processes") == "pid-namespace"  # its init reaped: the kernel ended the rest first
        if not gone:
            self.groups.kill_group(pid)
            if call.cgroup is None:
                self.sweep_at = min(self.sweep_at, time.monotonic() + _SWEEP_DELAY)
        if call.cgroup is not None and self.slots is not None:
            self.slots.give_back(call.cgroup, emptied=gone)
        line = call.done_line(status, cpu_used)
        if gone:
            self.folders.empty(call.run_dir)
        else:  # once every process of the call is gone
            self.folders.empty_later(call.run_dir, call.cgroup)
            self.folders_at = min(self.folders_at, time.monotonic())
        self.by_id.pop(call.call_id, None)
        self._send(line)

    def _collect_last_messages(self, pid: int, call: Call) -> None:
        """Read what the call wrote before it ended (its output, its value), then close its pipes."""
        for fd in list(call.outputs):
            while fd in call.outputs and self._read_output(call, fd):
                pass
            if fd in call.outputs:  # a descendant outside the namespace may still hold it: stop here
                self._unwatch(fd)
                os.close(fd)
        while not call.messages_done and self._read_messages(pid, call):
            pass
        for fd in (call.messages, call.replies):
            self._unwatch(fd)
            os.close(fd)

    def _shutdown(self) -> None:
        self.ready.release()
        self.zygote.close()
        for pid, call in list(self.calls.items()):
            self.groups.kill_group(pid)
            if call.cgroup is not None:
                self.cgroups.kill_members(call.cgroup)


def main() -> None:
    calls_folder, cgroup, setup_text = sys.argv[2:5]
    from semif_agent.sandbox import (
        _call,
        _cgroup,
        _confine,
        _disk,
        _isolation,
        _process_group,
        _ready,
        _resident,
        _warm_check,
        _watch,
        _zygote,
    )

    setup = json.loads(setup_text)
    for name in setup.get("preload", []):
        __import__(name)
    _isolation.become_subreaper()
    network = ("none", -1)
    if setup.get("network"):  # its calls are allowed the network: it stays in the host's namespace
        network = ("per-call", -1) if os.geteuid() == 0 or _isolation.enter_user_namespace() else network
    elif os.geteuid() == 0 and os.path.exists("/proc/self/ns/net"):
        host_netns = os.open("/proc/self/ns/net", os.O_RDONLY | os.O_CLOEXEC)
        if _isolation.leave_network():
            network = ("worker", host_netns)
        else:
            os.close(host_netns)
    elif _isolation.enter_user_namespace():
        network = ("per-call", -1)
    hidden = _isolation.hide_paths(setup.get("secrets", []))  # then one Landlock rule for /etc, not one per entry
    _confine.prepare_parent(private_mounts=hidden, hide_run=not setup.get("network"))
    _confine.preopen(list(setup.get("system_folders" if hidden else "system_readable", [])))
    gc.freeze()  # what is here now stays out of the children's collections: fewer pages copied on write
    reply_fd = os.dup(1)
    null = os.open(os.devnull, os.O_WRONLY)
    os.dup2(null, 1)
    os.close(null)
    preopened = {fd for fd, _is_dir in _confine._preopened.values()}
    zygote = _zygote.start(host_netns=network[1], keep=preopened)  # before any call is read
    modules = (_call, _isolation, _cgroup, _disk, _process_group, _watch, _ready, _resident, _warm_check)
    allowed, ready = bool(setup.get("network")), int(setup.get("ready_children", 0))
    cgroup_path = None if cgroup == "-" else cgroup
    worker = _Worker(
        modules,
        zygote,
        reply_fd,
        calls_folder,
        cgroup_path,
        network,
        network_allowed=allowed,
        ready_children=ready,
        warm=setup.get("warm"),
    )
    worker.serve()


if __name__ == "__main__":
    main()
