"""Whether a warm process may serve another call, judged by the worker from outside it: :func:`unfit`.

A process kept warm between calls of one setup (:mod:`._resident`) has run the calls' code, so nothing
it checks or says about itself decides whether it serves again: that code may have patched its tidying
out. The worker stops it as its call ends (``SIGSTOP``, every thread) and, before it hands it the next
call, looks at it from outside:

- stopped (``/proc/<pid>/stat``): nothing of it runs while the worker looks, and empties its folder;
- one thread (``/proc/<pid>/task``), alone in its cgroup (``cgroup.procs``, and ``pids.current``
  where there is one): no thread or process left by a call;
- its CPU time (``/proc/<pid>/stat``) within :data:`CPU_SHARE` of its allowance, so each call keeps at
  least 99% of its own (the kernel's limit counts the process's whole life); its peak memory
  (``VmHWM``) within :data:`MEMORY_SHARE`; fewer than :data:`CALLS_MOST` calls served;
- its descriptors (``/proc/<pid>/fd``): ``/dev/null`` as stdin, its own pipes as stdout and stderr,
  its channel's two, nothing else;
- no POSIX timer (``/proc/<pid>/timers``, where the kernel has it);
- its private ``/dev/shm`` empty and, where Landlock does not already keep it from writing there,
  nothing but folders in its private ``/tmp``: looked at through ``/proc/<pid>/root``, each step
  opened relative to the last without following a link, at most :data:`ENTRIES_MOST` entries.

What fails retires it: the worker kills it, and empties its folder once it is reaped. Alarms and
interval timers (``setitimer``) have no trace outside the process; it asks to go when one is set
(:meth:`._resident.Baseline.restore`), and a call that patches that out can leave one to go off in the
next call of its own setup, not another's. Standard library only; the worker imports it at start.
"""

from __future__ import annotations

import os
import stat
import time
from typing import Any

from ._resident import Resident, alone

CPU_SHARE = 0.01
MEMORY_SHARE = 0.25
CALLS_MOST = 1000
ENTRIES_MOST = 256
"""The most entries of a private ``/tmp`` looked at; more retires the process."""
STOP_WAIT_SECONDS = 0.25
"""How long the worker waits for a process it stopped to be seen stopped (it is, at once, unless very busy)."""
_CLOCK_TICKS = os.sysconf("SC_CLK_TCK")
_UTIME, _STIME = 11, 12  # utime and stime in /proc/<pid>/stat, counted from the field after the name
_NO_FOLLOW = os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW | os.O_CLOEXEC
_null_device = os.stat(os.devnull).st_rdev
_host_tmp_device: list[int] = []


def allowance(spec: dict[str, Any]) -> tuple[float, float]:
    """What a warm process of the call ``spec`` may have used when it is judged: (CPU seconds, peak KiB)."""
    cpu, memory = spec.get("cpu_seconds"), spec.get("memory_bytes")
    return (
        float(cpu) * CPU_SHARE if cpu else float("inf"),
        int(memory) * MEMORY_SHARE / 1024 if memory else float("inf"),
    )


def unfit(resident: Resident) -> str:
    """Why ``resident`` (stopped since its call ended) may not serve another call; "" when it may."""
    pid = resident.pid
    fields = _stopped(pid)
    if fields is None:
        return "it is not stopped"
    try:
        if os.listdir(f"/proc/{pid}/task") != [str(pid)]:
            return "a thread is left"
        if resident.slot is None or not alone(pid, resident.slot) or _tasks(resident.slot) not in (None, 1):
            return "a process is left"
        cpu_seconds, most_kib = resident.allowance
        if (int(fields[_UTIME]) + int(fields[_STIME])) / _CLOCK_TICKS > cpu_seconds:
            return "it used its share of CPU time"
        if _peak_kib(pid) > most_kib:
            return "it used its share of memory"
        if resident.served >= CALLS_MOST:
            return "it served its calls"
        if not _descriptors_as_set_up(pid, resident):
            return "a descriptor is left"
        if _posix_timers(pid):
            return "a timer is left"
        if resident.held.get("view") == "mount-namespace":
            return _private_folders(pid, tmp=resident.held.get("filesystem") != "landlock")
    except (OSError, ValueError, IndexError):
        return "it cannot be looked at"
    return ""


def _stopped(pid: int) -> list[str] | None:
    """The fields of ``/proc/<pid>/stat`` after the name, once the process is seen stopped; None when it
    is gone or does not stop within :data:`STOP_WAIT_SECONDS`."""
    deadline, pause = time.monotonic() + STOP_WAIT_SECONDS, 0.0002
    while True:
        try:
            with open(f"/proc/{pid}/stat", "rb") as handle:
                fields = handle.read().rsplit(b")", 1)[1].decode("ascii").split()
        except (OSError, IndexError, UnicodeDecodeError):
            return None
        if fields[0] == "T":
            return fields
        if fields[0] in ("Z", "X", "x") or time.monotonic() >= deadline:
            return None
        time.sleep(pause)
        pause = min(pause * 2, 0.01)


def _tasks(cgroup: str) -> int | None:
    """The tasks (threads) in ``cgroup`` as its ``pids`` controller counts them; None where it has no count."""
    try:
        with open(os.path.join(cgroup, "pids.current"), "rb") as handle:
            return int(handle.read())
    except OSError:
        return None


def _peak_kib(pid: int) -> int:
    with open(f"/proc/{pid}/status", "rb") as handle:
        for line in handle:
            if line.startswith(b"VmHWM:"):
                return int(line.split()[1])
    return 0


def _descriptors_as_set_up(pid: int, resident: Resident) -> bool:
    """Whether the process holds its standard three and its channel's two descriptors, and no other: stdin
    ``/dev/null``, the rest the call's own pipes (the worker holds their other ends)."""
    names = os.listdir(f"/proc/{pid}/fd")
    if sorted(names) != sorted({"0", "1", "2", *(str(fd) for fd in resident.child_fds)}):
        return False
    pipes = {os.fstat(fd).st_ino for fd in resident.own_fds}
    for name in names:
        found = os.stat(f"/proc/{pid}/fd/{name}")  # what the descriptor is; nothing is opened
        if name == "0":
            if not (stat.S_ISCHR(found.st_mode) and found.st_rdev == _null_device):
                return False
        elif not (stat.S_ISFIFO(found.st_mode) and found.st_ino in pipes):
            return False
    return True


def _posix_timers(pid: int) -> bool:
    try:
        with open(f"/proc/{pid}/timers", "rb") as handle:
            return bool(handle.read(1))
    except FileNotFoundError:
        return False  # a kernel without the file: no timer can be seen


def _private_folders(pid: int, *, tmp: bool) -> str:
    """Why the private ``/dev/shm`` (and, with ``tmp``, ``/tmp``) of ``pid`` keeps it from serving; ""."""
    root = os.open(f"/proc/{pid}/root", os.O_PATH | os.O_DIRECTORY | os.O_CLOEXEC)
    try:
        shm = _open_beneath(root, ("dev", "shm"))
        try:
            with os.scandir(shm) as entries:
                if next(entries, None) is not None:
                    return "a file is left in its /dev/shm"
        finally:
            os.close(shm)
        if tmp:
            folder = _open_beneath(root, ("tmp",))
            device = os.fstat(folder).st_dev
            if not _host_tmp_device:
                _host_tmp_device.append(os.stat("/tmp").st_dev)
            if device == _host_tmp_device[0]:  # the call's own folder is /tmp: bound from the host, not private
                os.close(folder)
            elif not _only_folders(folder, device):
                return "a file is left in its /tmp"
    finally:
        os.close(root)
    return ""


def _open_beneath(folder: int, names: tuple[str, ...]) -> int:
    """The folder ``names`` below ``folder``, each step opened relative to the last, no link followed."""
    fd = folder
    for name in names:
        opened = os.open(name, _NO_FOLLOW, dir_fd=fd)
        if fd != folder:
            os.close(fd)
        fd = opened
    return fd


def _only_folders(top: int, device: int) -> bool:
    """Whether the tree of ``top`` (open; closed here) holds only folders on ``device`` (what lies on another
    is a folder of the call's, bound there), in at most :data:`ENTRIES_MOST` entries."""
    stack, seen = [top], 0
    try:
        while stack:
            folder = stack.pop()
            try:
                with os.scandir(folder) as entries:
                    for entry in entries:
                        seen += 1
                        found = entry.stat(follow_symlinks=False)
                        if found.st_dev != device:
                            continue
                        if seen > ENTRIES_MOST or not stat.S_ISDIR(found.st_mode):
                            return False
                        stack.append(os.open(entry.name, _NO_FOLLOW, dir_fd=folder))
            finally:
                os.close(folder)
    finally:
        for folder in stack:
            os.close(folder)
    return True
