"""A process limit that holds for root: one ``pids`` cgroup per run (Linux; standard library only).

``RLIMIT_NPROC`` is not enforced for root, so each run's processes go into a
cgroup of their own whose ``pids.max`` caps the tasks (processes and threads)
the run may have at once; a fork past it fails with ``EAGAIN``. The cgroup
also names every process of the run, whatever session it moved to, so the
run can be killed whole where PID namespaces are not allowed.

Layout, under this process's own cgroup of the ``pids`` controller (cgroup v1
``pids`` hierarchy, or cgroup v2 with ``pids`` available)::

    semif-<host pid>/            one per host process, removed at exit
        worker-<...>/            one per warm worker (made and removed by the pool)
            slot-<n>/            one per call running at once, reused (the call's process joins it)
        run-<n>/                 one per fresh confined process

Where no such hierarchy is writable (not root, no delegation) every function
here says so (None or False) and the caller falls back to ``RLIMIT_NPROC``.
The launcher and the warm worker load this module without the package.
"""

from __future__ import annotations

import atexit
import os
import time

TYPE_CHECKING = False  # typing's own costs an import per script start
if TYPE_CHECKING:  # typeshed has no stub for the C module; 'signal' has its functions and constants, typed
    import signal as _signal
else:
    import _signal  # the C module: 'signal' would pull in enum, a few ms per script start

_bases: dict[str, str | None] = {}
_mount_points: dict[str, str] = {}  # where each controller's hierarchy is mounted


def pids_base() -> str | None:
    """This process's own cgroup folder of the ``pids`` controller, when we may create cgroups under it."""
    return controller_base("pids")


def controller_base(controller: str) -> str | None:
    """This process's own cgroup folder of ``controller`` (``pids``, ``memory``), when we may create cgroups
    under it: its cgroup v1 hierarchy, or the cgroup v2 one where the controller is available."""
    if controller in _bases:
        return _bases[controller]
    _bases[controller] = None
    try:
        with open("/proc/self/cgroup", encoding="utf-8") as handle:
            memberships = [line.rstrip("\n").split(":", 2) for line in handle]
        with open("/proc/self/mountinfo", encoding="utf-8") as handle:
            mounts = [line.split() for line in handle]
    except OSError:
        return None
    v1 = next((path for _id, controllers, path in memberships if controller in controllers.split(",")), None)
    v2 = next((path for _id, controllers, path in memberships if _id == "0" and controllers == ""), None)
    for fields in mounts:
        separator = fields.index("-")
        kind, options = fields[separator + 1], fields[separator + 3].split(",")
        if kind == "cgroup" and controller in options and v1 is not None:
            candidate = fields[4] + v1 if v1 != "/" else fields[4]
        elif kind == "cgroup2" and v2 is not None and _has(fields[4] + v2, controller):
            candidate = fields[4] + v2 if v2 != "/" else fields[4]
        else:
            continue
        if os.access(candidate, os.W_OK):
            _bases[controller], _mount_points[controller] = candidate, fields[4]
            return candidate
    return None


def _has(folder: str, controller: str) -> bool:
    try:
        with open(os.path.join(folder, "cgroup.controllers"), encoding="ascii") as handle:
            return controller in handle.read().split()
    except OSError:
        return False


def create(parent: str, name: str, max_tasks: int | None = None) -> str | None:
    """Make cgroup ``parent/name`` (capped at ``max_tasks`` when given); its path, or None."""
    path = os.path.join(parent, name)
    try:
        _enable_pids(parent)
        os.mkdir(path)
    except FileExistsError:
        pass
    except OSError:
        return None
    if max_tasks is not None and not set_limit(path, max_tasks):
        remove(path)
        return None
    return path


def set_limit(path: str, max_tasks: int) -> bool:
    """Cap cgroup ``path`` at ``max_tasks`` tasks at once; True when it holds."""
    return _write(os.path.join(path, "pids.max"), str(max(1, int(max_tasks))))


def _enable_pids(parent: str) -> None:
    """cgroup v2 only: let children of ``parent`` use the pids controller, and the memory one where available."""
    control = os.path.join(parent, "cgroup.subtree_control")
    if os.path.exists(control):
        try:
            with open(control, encoding="ascii") as handle:
                enabled = handle.read().split()
        except OSError:
            return
        for controller in ("pids", "memory"):
            if controller not in enabled and (controller == "pids" or _has(parent, controller)):
                _write(control, f"+{controller}")


def join(path: str) -> bool:
    """Move the calling process, single-threaded, into cgroup ``path``; True when it holds."""
    return _write(_joining_file(path), "0")


def _joining_file(path: str) -> str:
    """The file a single-threaded process writes ``0`` to, to join cgroup ``path``.

    Under cgroup v1 it is ``tasks``, which moves the calling thread only: the
    kernel then takes no write lock on every thread group, whose taking waits for
    an RCU grace period (7 to 25 ms on a busy machine) when no other move came
    just before. A freshly forked child is one thread, so it moves whole; what it
    starts afterwards is born there. Under v2 (no ``tasks``), ``cgroup.procs``.
    """
    tasks = os.path.join(path, "tasks")
    return tasks if os.path.exists(tasks) else os.path.join(path, "cgroup.procs")


def open_members(path: str) -> int | None:
    """A descriptor (close-on-exec) of the file that joins cgroup ``path`` (:func:`_joining_file`), for
    :func:`join_open`; None when refused.

    Opened once by the warm worker for each of its slots, so that a call's
    child joins with one write instead of a path lookup and an open.
    """
    try:
        return os.open(_joining_file(path), os.O_WRONLY | os.O_CLOEXEC)
    except OSError:
        return None


def join_open(members_fd: int) -> bool:
    """Move the calling process, single-threaded, into the cgroup whose joining file is open at ``members_fd``;
    True when it holds."""
    try:
        return os.write(members_fd, b"0") == 1
    except OSError:
        return False


def memory_twin(path: str) -> str | None:
    """The ``memory`` cgroup at the place of ``pids`` cgroup ``path`` (made when missing): the same folder
    under cgroup v2, the same relative path in the memory hierarchy under v1; None where there is none."""
    twin = _twin_path(path)
    if twin is None or twin == path:
        return path if twin == path and os.path.exists(os.path.join(path, "memory.max")) else None
    try:
        os.makedirs(twin, exist_ok=True)
    except OSError:
        return None
    return twin


def _twin_path(path: str) -> str | None:
    """Where ``memory_twin`` of ``path`` is: the path relative to the pids hierarchy, under our memory cgroup.

    The host and its workers stay in the same memory cgroup, so they agree on it.
    """
    pids_base()
    root, memory = _mount_points.get("pids"), controller_base("memory")
    if root is None or memory is None or not path.startswith(root + os.sep):
        return None
    if _mount_points.get("memory") == root:
        return path
    return memory + path[len(root) :]


def set_memory_limit(path: str, limit_bytes: int) -> bool:
    """Cap the memory (and, where it can, the swap) of every process in cgroup ``path`` together; True when it holds.

    The kernel reclaims, then kills a process of the cgroup past it; :func:`oom_kills` counts those kills.
    """
    if os.path.exists(os.path.join(path, "memory.max")):  # cgroup v2
        _write(os.path.join(path, "memory.swap.max"), "0")
        _write(os.path.join(path, "memory.oom.group"), "1")
        return _write(os.path.join(path, "memory.max"), str(int(limit_bytes)))
    return _write(os.path.join(path, "memory.limit_in_bytes"), str(int(limit_bytes)))


_OOM_FILES = ["memory.events", "memory.oom_control"]  # cgroup v2's, v1's: the one that answered last first


def oom_kills(path: str) -> int:
    """How many processes the kernel killed so far for going past cgroup ``path``'s memory cap."""
    for name in list(_OOM_FILES):
        try:
            with open(os.path.join(path, name), encoding="ascii") as handle:
                for line in handle:
                    key, _space, value = line.partition(" ")
                    if key == "oom_kill":
                        if name != _OOM_FILES[0]:  # a worker reads it twice a call: no failed open each time
                            _OOM_FILES.reverse()
                        return int(value)
        except (OSError, ValueError):
            continue
    return 0


class Slots:
    """A warm worker's reusable cgroups ``slot-<n>`` under ``parent``, one per call running at once.

    Each is made when no free one is left and reused once empty; its member
    list stays open, so a call's child joins it with one write (:func:`join_open`).
    """

    def __init__(self, parent: str) -> None:
        self.parent = parent
        self.free: list[str] = []
        self.draining: list[str] = []  # slots whose processes were killed but are not all gone yet
        self.limits: dict[str, int] = {}
        self.members: dict[str, int] = {}  # each slot's member list, open for writing
        self.memory: dict[str, tuple[str, int]] = {}  # each slot's memory cgroup, and its member list open
        self.memory_limits: dict[str, int] = {}
        self.oom_seen: dict[str, int] = {}  # each slot's count of memory kills when its call started

    def take(self, limit: int) -> str | None:
        """A free slot capped at ``limit`` tasks; None when none can be made."""
        self.draining = [slot for slot in self.draining if not self.release_if_empty(slot)]
        slot = self.free.pop() if self.free else None
        if slot is None:
            slot = create(self.parent, f"slot-{len(self.limits)}", limit)
            members = open_members(slot) if slot is not None else None
            if slot is None or members is None:
                return None
            self.members[slot] = members
        elif self.limits[slot] != limit and not set_limit(slot, limit):
            self.free.append(slot)
            return None
        self.limits[slot] = limit
        return slot

    def cap_memory(self, slot: str, limit_bytes: int) -> int | None:
        """Give ``slot`` its memory cgroup capped at ``limit_bytes``; that cgroup's member list (open), or None
        where no memory cgroup can be made (the call then has only its per-process address-space limit)."""
        if slot not in self.memory:
            twin = memory_twin(slot)
            members_fd = open_members(twin) if twin is not None else None
            if twin is None or members_fd is None:
                return None
            self.memory[slot] = (twin, members_fd)
        twin, members_fd = self.memory[slot]
        if self.memory_limits.get(slot) != limit_bytes:
            if not set_memory_limit(twin, limit_bytes):
                return None
            self.memory_limits[slot] = limit_bytes
        self.oom_seen[slot] = oom_kills(twin)
        return members_fd

    def out_of_memory(self, slot: str) -> bool:
        """True when the kernel killed a process of ``slot``'s call for going past its memory cap."""
        found = self.memory.get(slot)
        return found is not None and oom_kills(found[0]) > self.oom_seen.get(slot, 0)

    def give_back(self, slot: str, *, emptied: bool) -> None:
        """A call's slot after it ended: free at once when ``emptied`` (its processes are known gone),
        else free once its processes are killed and gone."""
        if emptied:
            self.free.append(slot)
        elif not self.release_if_empty(slot):
            self.draining.append(slot)

    def release_if_empty(self, slot: str) -> bool:
        """Free ``slot`` when no process is left in it (True), else kill what is left."""
        if members(slot):
            kill_members(slot)
            return False
        self.free.append(slot)
        return True


def members(path: str) -> list[int]:
    """Processes in cgroup ``path`` and the cgroups under it."""
    found: list[int] = []
    for folder, _subfolders, _files in os.walk(path):
        try:
            with open(os.path.join(folder, "cgroup.procs"), encoding="ascii") as handle:
                found += [int(line) for line in handle if line.strip()]
        except (OSError, ValueError):
            continue
    return found


def kill_members(path: str) -> int:
    """SIGKILL every process in ``path`` (and below); how many were signalled."""
    killed = 0
    for pid in members(path):
        try:
            os.kill(pid, _signal.SIGKILL)
            killed += 1
        except OSError:
            pass
    return killed


def remove(path: str, *, wait_sec: float = 1.0) -> bool:
    """Kill what is left in cgroup ``path`` and remove it with the cgroups under it (and its memory twin,
    under cgroup v1); True when gone."""
    twin = _twin_path(path)
    if twin is not None and twin != path and os.path.isdir(twin):
        _remove_one(twin, wait_sec=wait_sec)
    return _remove_one(path, wait_sec=wait_sec)


def _remove_one(path: str, *, wait_sec: float) -> bool:
    deadline = time.monotonic() + wait_sec
    while True:
        kill_members(path)
        try:
            for folder, _subfolders, _files in os.walk(path, topdown=False):
                os.rmdir(folder)
            return True
        except FileNotFoundError:
            return not os.path.exists(path)
        except OSError:
            if time.monotonic() >= deadline:
                return False
            time.sleep(0.01)


def host_parent() -> str | None:
    """``semif-<pid>`` for this process (made on first use), after clearing those of hosts that died."""
    base = pids_base()
    if base is None:
        return None
    path = os.path.join(base, f"semif-{os.getpid()}")
    if os.path.isdir(path):
        return path
    _clear_stale(base)
    made = create(base, f"semif-{os.getpid()}")
    if made is not None:
        atexit.register(remove, made, wait_sec=0.2)
    return made


def _clear_stale(base: str) -> None:
    try:
        names = os.listdir(base)
    except OSError:
        return
    for name in names:
        owner = name[len("semif-") :]
        if name.startswith("semif-") and owner.isdigit() and not os.path.exists(f"/proc/{owner}"):
            remove(os.path.join(base, name), wait_sec=0.2)


def _write(path: str, text: str) -> bool:
    """Write ``text`` to control file ``path`` in one system call (no buffered file object: a forked child
    copies fewer pages on write); True when it holds."""
    try:
        fd = os.open(path, os.O_WRONLY | os.O_CLOEXEC)
    except OSError:
        return False
    try:
        data = text.encode("ascii")
        return os.write(fd, data) == len(data)
    except OSError:
        return False
    finally:
        os.close(fd)
