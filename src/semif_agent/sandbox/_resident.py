"""Confined processes kept warm between calls of one setup: the child's loop (:func:`serve`) and the
worker's bookkeeping (:class:`Residents`).

A call made with a ``reuse`` key (:meth:`~.pool.WorkerPool.call`) may be run by a process that ran an
earlier call of the same setup: the same target, working directory, environment, limits and
confinement (what the worker compares, whatever the key says), one call at a time. Such a process was
forked and confined for its first call as any other (its PID namespace, cgroups, mount view, Landlock,
seccomp, limits), and keeps all of that; it only skips the fork and the set-up for the next call.

Between two calls it tidies itself (:meth:`Baseline.restore`): every process the call started is
killed (it is the init of its PID namespace), its working directory, environment, ``sys.path`` and
standard streams are put back, and the modules the call imported from outside the system and Python
folders (a skill's own helpers) are dropped, so the next call imports them anew from disk; an alarm or
interval timer left set makes it ask to go. Whether it may serve again is never its own to say: the
worker stops it as its call ends and, before it hands it the next call, judges it from outside
(:mod:`._warm_check`: threads, processes, descriptors, timers, its private ``/tmp`` and ``/dev/shm``,
CPU and memory used, calls served), then empties its private folder; what fails retires it. What stays
is what a warm interpreter keeps: the system modules it imported and their state. A call the worker
stopped (a timeout, a limit, a broken message) ends its process as before, as does one that ran out of
memory.

The child ends each call with a ``D`` line (its exit status, and whether it asks to stay), and
reads the next call as an ``N`` line on its answers pipe; end of file there lets it exit. Standard
library only; the worker imports it at start.
"""

from __future__ import annotations

import ctypes
import json
import os
import signal
import sys
import time
from collections.abc import Callable, Mapping
from typing import TYPE_CHECKING, Any, NoReturn

if TYPE_CHECKING:
    from .channel import Channel

IDLE_SECONDS = 30.0
"""How long a warm process waits for its next call before the worker lets it go."""
MOST_IDLE = 64
"""The most warm processes one worker keeps waiting; past it the one idle longest goes."""
LOOK_SECONDS = 0.5
"""How often the worker looks that its waiting processes started nothing."""
_SETUP_KEYS = ("target", "cwd", "env", "confine", "max_output", "max_message", "listen")
_SYSTEM_FOLDERS = tuple(
    sorted({os.path.join(os.path.realpath(path), "") for path in (sys.prefix, sys.base_prefix, sys.exec_prefix)})
    + [os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "")]
)


# -- the child -----------------------------------------------------------------------


def serve(baseline: Baseline, channel: Channel, code: int, run: Callable[[dict[str, Any], Channel], int]) -> NoReturn:
    """After a call's first run (exit status ``code``): end each call with a ``D`` line and, while the
    process could tidy itself (``baseline``), run the next call the worker sends (``run(request,
    channel)`` gives its exit status); exit when it asks to go or the worker lets it go."""
    try:
        while True:
            keep = baseline.restore()
            for stream in (sys.stdout, sys.stderr):
                stream.flush()
            channel.report("D", {"call": channel.call_id, "code": code, "keep": keep})
            if not keep:
                break
            line = channel.next_line()
            if line[:1] != b"N":
                break
            request = json.loads(line[1:])
            channel.start_call(int(request["id"]))
            code = run({**baseline.setup, **request}, channel)
    except BaseException:  # noqa: BLE001 - a process that cannot go on exits; the worker sees it end
        pass
    os._exit(code)


class Baseline:
    """What a warm process looked like before its first call ran: what :meth:`restore` puts back."""

    __slots__ = ("setup", "cwd", "env", "path", "modules", "umask")

    def __init__(self, request: dict[str, Any]) -> None:
        self.setup = {key: request[key] for key in _SETUP_KEYS if key in request}
        self.cwd, self.env = request["cwd"], dict(request["env"])
        self.path = list(sys.path)
        self.modules = set(sys.modules)
        self.umask = os.umask(0o022)
        os.umask(self.umask)

    def restore(self) -> bool:
        """Tidy the process as it was; False (it asks to go) when a call left a timer set. The worker judges
        the rest from outside (:mod:`._warm_check`), whatever this says."""
        _kill_the_rest()
        if _timer_set():
            return False
        os.umask(self.umask)
        sys.stdout, sys.stderr = sys.__stdout__, sys.__stderr__
        sys.path[:] = self.path
        if len(sys.modules) != len(self.modules) or sys.modules.keys() - self.modules:
            for name in sys.modules.keys() - self.modules:
                module = sys.modules[name]
                found = getattr(module, "__file__", None)
                outside = isinstance(found, str) and not found.startswith(_SYSTEM_FOLDERS)
                if outside or getattr(module, "__name__", None) != name:  # a skill's own, or a name put there
                    del sys.modules[name]
        os.chdir(self.cwd)
        environ = os.environ
        if dict(environ) != self.env:
            for key in [key for key in environ if key not in self.env]:
                del environ[key]
            for key, value in self.env.items():
                if environ.get(key) != value:
                    environ[key] = value
        return True


def _kill_the_rest() -> None:
    """Kill every other process of this PID namespace (this process is its init) and reap them."""
    try:
        os.kill(-1, signal.SIGKILL)
    except ProcessLookupError:
        return  # none: the common case
    while True:
        try:
            os.waitpid(-1, 0)
        except ChildProcessError:
            return
        except InterruptedError:
            continue


def _timer_set() -> bool:
    """Whether an alarm or interval timer is set (it would go off in the next call)."""
    return any(signal.getitimer(which) != (0.0, 0.0) for which in _TIMERS)


_TIMERS = (signal.ITIMER_REAL, signal.ITIMER_VIRTUAL, signal.ITIMER_PROF)


# -- the worker ----------------------------------------------------------------------


class Resident:
    """A warm process waiting for its next call: its pid, the worker's ends of its pipes, how it is held,
    its cgroup slot and private folder, its setup's key and since when it waits; and what the worker
    judges it by (:mod:`._warm_check`): its channel's descriptors in it, its allowance of CPU seconds and
    peak memory (KiB) between calls, and how many calls it served."""

    __slots__ = ("pid", "own_fds", "held", "slot", "run_dir", "key", "since", "child_fds", "allowance", "served")

    def __init__(
        self,
        pid: int,
        own_fds: tuple[int, int, int, int],
        held: dict[str, str],
        slot: str | None,
        run_dir: str,
        *,
        child_fds: tuple[int, ...] = (),
        allowance: tuple[float, float] = (float("inf"), float("inf")),
        served: int = 1,
    ) -> None:
        self.pid, self.own_fds, self.held, self.slot, self.run_dir = pid, own_fds, held, slot, run_dir
        self.child_fds, self.allowance, self.served = child_fds, allowance, served
        self.key = ""
        self.since = time.monotonic()


def alone(pid: int, cgroup: str) -> bool:
    """Whether the process ``pid`` is the only one in its cgroup ``cgroup`` (as the kernel says)."""
    try:
        with open(os.path.join(cgroup, "cgroup.procs"), "rb") as handle:
            return handle.read().split() == [str(pid).encode()]
    except OSError:
        return False


def rest(pid: int) -> bool:
    """Stop the process ``pid`` (all its threads) until its next call; False when it is gone.

    A call's code can write the line that ends its call before it has ended, and leave threads or
    processes behind; stopped, it does nothing until the worker has judged it (:mod:`._warm_check`)
    and handed it the next call, whose deadline and watch then hold. A process it started meanwhile
    is found by the looks the worker takes while it waits (:meth:`Residents.strays`) and before it
    hands it a call."""
    try:
        os.kill(pid, signal.SIGSTOP)
    except OSError:
        return False
    return True


def wake(resident: Resident) -> None:
    """Let ``resident`` run its next call, written to it already (one wake-up): what it wrote after its last
    call ended is dropped, then it goes on."""
    for fd in resident.own_fds[2:]:
        try:
            while os.read(fd, 1 << 16):
                pass
        except OSError:  # BlockingIOError: nothing (more) there
            pass
    try:
        os.kill(resident.pid, signal.SIGCONT)
    except OSError:  # gone meanwhile (not yet reaped): the call ends when it is
        pass


class _SigAction(ctypes.Structure):
    """The C library's ``struct sigaction`` (glibc and musl lay it out alike)."""

    _fields_ = (
        ("handler", ctypes.c_void_p),
        ("mask", ctypes.c_ulong * (128 // ctypes.sizeof(ctypes.c_ulong))),
        ("flags", ctypes.c_int),
        ("restorer", ctypes.c_void_p),
    )


_SA_NOCLDSTOP = 1


def quiet_stops() -> bool:
    """Have the kernel send this process ``SIGCHLD`` only when a child ends, not when one is stopped or
    goes on (the warm processes, twice a call: each would wake the worker for nothing). False where the
    C library's ``sigaction`` is not found."""
    try:
        libc = ctypes.CDLL(None, use_errno=True)
        action = _SigAction()
        if libc.sigaction(signal.SIGCHLD, None, ctypes.byref(action)) != 0:
            return False
        action.flags |= _SA_NOCLDSTOP
        return bool(libc.sigaction(signal.SIGCHLD, ctypes.byref(action), None) == 0)
    except (OSError, AttributeError):
        return False


def setup_key(request: Mapping[str, object]) -> str:
    """What two calls must share for one process to run both: everything the child's set-up depends on
    (and the caller's ``reuse`` key), as one text. Taken before the worker adds the call's own folder."""
    return json.dumps([request.get(key) for key in ("reuse", *_SETUP_KEYS)], sort_keys=True, ensure_ascii=False)


class Residents:
    """The warm processes of one worker: those waiting, by setup, and every one alive, by pid."""

    def __init__(self, most: int = MOST_IDLE, idle_sec: float = IDLE_SECONDS) -> None:
        self.most, self.idle_sec = most, idle_sec
        self.waiting: dict[str, list[Resident]] = {}
        self.alive: dict[int, Resident] = {}  # waiting, or let go and not yet reaped: the worker owns their pipes
        self.serving: dict[int, str] = {}  # pid -> key of the call it runs now, for the processes that may stay
        self.look_at = 0.0  # when to look again that the waiting processes are alone in their cgroups

    def take(self, key: str) -> Resident | None:
        """A process waiting with setup ``key``, now serving; None when there is none."""
        found = self.waiting.get(key)
        if not found:
            return None
        resident = found.pop()
        if not found:
            del self.waiting[key]
        del self.alive[resident.pid]  # its call's record holds its pipes now
        self.serving[resident.pid] = key
        return resident

    def may_stay(self, pid: int, key: str) -> None:
        """Note that the child ``pid`` runs a call of setup ``key`` and may stay when it ends."""
        self.serving[pid] = key

    def wait(self, resident: Resident) -> list[Resident]:
        """``resident`` ended its call and waits for the next; those to let go now (past :attr:`most`)."""
        resident.key = self.serving.pop(resident.pid, "")
        resident.since = time.monotonic()
        self.alive[resident.pid] = resident
        self.waiting.setdefault(resident.key, []).append(resident)
        if sum(len(found) for found in self.waiting.values()) <= self.most:
            return []
        oldest = min((found[0] for found in self.waiting.values()), key=lambda each: each.since)
        self.leave(oldest)
        return [oldest]

    def leave(self, resident: Resident) -> None:
        """No longer hand ``resident`` a call (it is let go, or ended)."""
        found = self.waiting.get(resident.key, [])
        if resident in found:
            found.remove(resident)
            if not found:
                del self.waiting[resident.key]

    def give_up(self, resident: Resident) -> None:
        """``resident`` will not serve another call (just taken, or its call ended it): it is let go, its pipes
        closed once it is reaped."""
        self.serving.pop(resident.pid, None)
        self.alive[resident.pid] = resident

    def strays(self, is_alone: Callable[[int, str], bool], now: float) -> list[Resident]:
        """Every :data:`LOOK_SECONDS`: the waiting processes no longer alone in their cgroup, no longer handed calls."""
        if now < self.look_at:
            return []
        self.look_at = now + LOOK_SECONDS
        found = [
            each for waiting in self.waiting.values() for each in waiting if not is_alone(each.pid, each.slot or "")
        ]
        for resident in found:
            self.leave(resident)
        return found

    def idle_too_long(self, now: float) -> list[Resident]:
        """The waiting processes idle for :attr:`idle_sec` or more, no longer handed calls."""
        old = [each for found in self.waiting.values() for each in found if now - each.since >= self.idle_sec]
        for resident in old:
            self.leave(resident)
        return old

    def next_expiry(self) -> float:
        """When the next waiting process has been idle too long, or the next look for strays is due
        (infinity: none waits)."""
        if not self.waiting:
            return float("inf")
        return min(self.look_at, *(found[0].since + self.idle_sec for found in self.waiting.values() if found))

    def ended(self, pid: int) -> Resident | None:
        """Forget the process ``pid`` (reaped); the record of it when it was waiting or let go."""
        self.serving.pop(pid, None)
        resident = self.alive.pop(pid, None)
        if resident is not None:
            self.leave(resident)
        return resident
