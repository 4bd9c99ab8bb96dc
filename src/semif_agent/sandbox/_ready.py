"""Children forked ahead of their calls: :class:`ReadyChildren`.

While the warm worker has no call to run it keeps as many children as the calls it
ran at once in its last busy spell (one at first), up to its pool's
``ready_children`` (:data:`READY_CHILDREN` unless the pool says otherwise),
forked by its zygote (:mod:`._zygote`) into their namespaces (a PID and an IPC namespace each, a
network namespace too where every call gets one), with their pipes made and the part of
their mount view that no call changes (:func:`._mounts.prepare_ahead`), each
waiting for one call on a pipe of its own (:func:`._call.await_call`). A call
that fits (namespaces allowed, the network as the worker's children get it)
takes one, so no fork is on its path: the worker writes the request and closes
the pipe. A call that finds none has the zygote fork a child for it, handed its call the same way.
The child then joins the call's cgroups and does what depends on the call (:func:`._call.run_child`).

Each child serves one call and exits with it, unless the call may leave its process warm for the next
of its setup (:mod:`._resident`): it then serves those calls only. One that dies while it waits is
dropped when the worker reaps it, and another is forked in its place.
Standard library only; the worker imports it at start.
"""

from __future__ import annotations

import marshal
import os
from types import ModuleType
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from ._zygote import Forked, Zygote

READY_CHILDREN = 32
"""The most children a worker keeps forked ahead of its calls, unless its pool says otherwise: a burst of 50
calls over a pool's two workers then finds one for each (with 16, 50 warm hooks took a fifth longer)."""


class Ready:
    """A child waiting for its call: its pid, the worker's end of its pipe, its channel's and output's pipes,
    its channel's descriptors in it, and how its processes and network are held."""

    __slots__ = ("pid", "control", "own_fds", "child_fds", "held")

    def __init__(self, forked: Forked, held: dict[str, str]) -> None:
        self.pid, self.control, self.own_fds = forked.pid, forked.control, forked.own_fds
        self.child_fds, self.held = forked.child_fds, held


class ReadyChildren:
    """The children a worker forked ahead of its calls, and how it forks more."""

    def __init__(self, zygote: Zygote, isolation: ModuleType, network_mode: str, *, allowed: bool, size: int) -> None:
        """Up to ``size`` children, forked by ``zygote``, for a worker whose calls get the network as
        ``network_mode`` says (see the worker), and may use it when ``allowed``; ``isolation``: :mod:`._isolation`."""
        self.zygote, self.isolation = zygote, isolation
        self.flags, self.held = self.namespaces(network_mode, allowed=allowed)
        self.most = size
        self.size = min(size, 1)  # how many it keeps now: as many calls as ran at once in its last busy spell
        self.peak = 0  # the most calls running at once in this busy spell, in processes of their own
        self.warm = 0  # the calls of this busy spell whose process stays warm
        self.waiting: dict[int, Ready] = {}
        self.view: dict[str, Any] = {"tmpfs_bytes": None, "hide_run": not allowed}
        """How the next children make their view ahead: the size of private folders the last call asked for."""

    def namespaces(self, network_mode: str, *, allowed: bool) -> tuple[int, dict[str, str]]:
        """The namespaces a call's child is forked into (its network ``allowed`` or not), and how its
        processes and network are then held."""
        own_network = network_mode == "per-call" and not allowed
        flags = self.isolation.CLONE_NEWPID | self.isolation.CLONE_NEWIPC
        flags |= self.isolation.CLONE_NEWNET if own_network else 0
        network = "allowed" if allowed else "namespace" if own_network or network_mode == "worker" else "open"
        return flags, {"processes": "pid-namespace", "ipc": "namespace", "network": network}

    def running(self, calls: int) -> None:
        """Note that ``calls`` calls run at once now in processes of their own (not kept warm from before)."""
        self.peak = max(self.peak, calls)

    def kept_warm(self) -> None:
        """Note that a call's process stays warm for the next call of its setup, which then needs no child."""
        self.warm += 1

    def idle(self) -> None:
        """The worker has no call left: keep as many children as the calls that ran at once in processes of
        their own, less those whose process stays warm (at least one, at most ``most``)."""
        if self.peak:
            self.size = min(self.most, max(self.peak - self.warm, 1))
        self.peak = self.warm = 0

    def wanted(self) -> bool:
        """Whether one more child should be forked now."""
        return len(self.waiting) < self.size

    def fork_one(self) -> None:
        """Have the zygote fork one more child into its namespaces, waiting for its call; none when the kernel
        refuses (calls then have a child forked for each). Raises :class:`._zygote.ZygoteGone`."""
        (forked,) = self.zygote.fork([(self.flags, self.held, dict(self.view))])
        if isinstance(forked, OSError):
            self.most = self.size = 0
            return
        self.waiting[forked.pid] = ready(forked, self.held)

    def take(self) -> Ready | None:
        """The child that waited longest, taken for a call; None when none waits."""
        if not self.waiting:
            return None
        pid = next(iter(self.waiting))
        return self.waiting.pop(pid)

    @staticmethod
    def hand_over(ready: Ready, request: dict[str, Any], cgroups: tuple[str | None, str | None]) -> bool:
        """Send ``request`` to ``ready``'s child and let go of its pipe; False when the child is gone.

        ``cgroups``: the call's ``pids`` cgroup and memory cgroup (None: none), which the child joins itself
        (moving another process there would make the kernel wait for a grace period of RCU).
        """
        spec = {key: value for key, value in request["confine"].items() if key != "memory_members"}  # the worker's
        data = marshal.dumps({**request, "confine": spec, "cgroups": cgroups})  # plain data, from the host's JSON
        try:
            view = memoryview(data)
            while view:
                view = view[os.write(ready.control, view) :]
            return True
        except OSError:
            return False
        finally:
            os.close(ready.control)

    @staticmethod
    def discard(ready: Ready) -> None:
        """Close the worker's ends of a child that will serve no call."""
        for fd in ready.own_fds:
            os.close(fd)

    def forget(self, pid: int) -> bool:
        """Drop the waiting child ``pid`` (reaped: it died while it waited); True when it was one."""
        ready = self.waiting.pop(pid, None)
        if ready is None:
            return False
        os.close(ready.control)
        self.discard(ready)
        return True

    def pids(self) -> frozenset[int]:
        """The children waiting now."""
        return frozenset(self.waiting)

    def release(self) -> None:
        """Let every waiting child go (each exits when its pipe closes); fork no more."""
        self.most = self.size = 0
        for pid in list(self.waiting):
            self.forget(pid)


def ready(forked: Forked, held: dict[str, str]) -> Ready:
    """``forked`` as a child waiting for its call, its control pipe blocking (the request is written whole)."""
    os.set_blocking(forked.control, True)
    return Ready(forked, dict(held))
