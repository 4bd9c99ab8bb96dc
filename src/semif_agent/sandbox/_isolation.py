"""Keep a confined run's processes together and off the network (Linux; standard library only).

The script launcher and the warm worker load this module without the package.
What it offers, each where the kernel allows it:

- :func:`fork_namespaced`: fork a child that is the init (pid 1) of a new PID
  namespace, with an IPC namespace of its own, and a new network namespace when
  asked, in one ``clone(2)``. When that child exits, or is killed, the kernel
  kills every process left in its namespace, whatever session or process group
  they moved to, and with the last of them go every System V message queue,
  semaphore and shared memory segment and every POSIX message queue they made.
- :func:`enter_user_namespace`: for a user other than root, a user namespace
  mapping the user to itself, so the namespaces above need no privilege.
- :func:`leave_network`: a network namespace of this process with nothing but
  loopback, down: no address is reachable, not even 127.0.0.1;
  :func:`join_network` goes back to one kept open (root only).
- :func:`hide_paths`: a mount namespace of this process's own, its mounts private (where the warm
  worker builds its calls' allow-listed root, :mod:`._root`), and the given paths covered.
- :func:`die_with_parent`: the child is killed when the process that forked it dies.
- The fallback where namespaces are refused: :func:`become_subreaper` (orphans
  of the run are re-parented to us, not to init) and :func:`kill_descendants`.
"""

from __future__ import annotations

import ctypes
import os
import sys

TYPE_CHECKING = False  # typing's own costs an import per script start
if TYPE_CHECKING:  # typeshed has no stub for the C module; 'signal' has its functions and constants, typed
    import signal as _signal
else:
    import _signal  # the C module: 'signal' would pull in enum, a few ms per script start

CLONE_NEWNS = 0x00020000
CLONE_NEWIPC = 0x08000000
CLONE_NEWUSER = 0x10000000
CLONE_NEWPID = 0x20000000
CLONE_NEWNET = 0x40000000
_CLONE_CHILD_SETTID = 0x01000000
_MS_RDONLY, _MS_NOSUID, _MS_NODEV, _MS_NOEXEC = 1, 2, 4, 8
_MS_REMOUNT, _MS_BIND, _MS_REC, _MS_PRIVATE = 32, 4096, 16384, 1 << 18
_PR_SET_PDEATHSIG = 1
_PR_SET_CHILD_SUBREAPER = 36
_SYS_CLONE = {"x86_64": 56, "amd64": 56, "aarch64": 220, "arm64": 220, "riscv64": 220}
_SYS_GETTID = {"x86_64": 186, "amd64": 186, "aarch64": 178, "arm64": 178, "riscv64": 178}

_libc = ctypes.CDLL(None, use_errno=True)
_libc_holding_gil = ctypes.PyDLL(None, use_errno=True)  # os.fork keeps the GIL across fork(); so do we
_machine = os.uname().machine.lower()
_LINUX = sys.platform.startswith("linux")
_FORK_HOOKS = (
    ctypes.pythonapi.PyOS_BeforeFork,
    ctypes.pythonapi.PyOS_AfterFork_Child,
    ctypes.pythonapi.PyOS_AfterFork_Parent,
)
_clone_arguments: dict[int, tuple[object, ...]] = {}
"""The ``clone`` call's arguments by namespace flags, made once: building and freeing them in every
forked child cost it a hundred pages copied on write (half its fork's)."""
_tid_field: int | None = None  # address of this thread's cached tid in glibc's struct pthread, once found


def _check(result: int) -> None:
    if result != 0:
        errno = ctypes.get_errno()
        raise OSError(errno, os.strerror(errno))


def fork_namespaced(flags: int) -> int:
    """Fork a child into new namespaces (``CLONE_NEWPID``, ``CLONE_NEWIPC``, ``CLONE_NEWNET``); like :func:`os.fork`.

    Returns the child's pid in the parent and 0 in the child, which is pid 1
    of its new PID namespace. Raises ``OSError`` when the kernel refuses (no
    privilege, namespaces disabled) or the machine is not one we know the
    ``clone`` system call of; the caller then falls back to :func:`os.fork`.
    """
    arguments = _clone_arguments.get(flags)
    if arguments is None:
        number = _SYS_CLONE.get(_machine) if _LINUX else None
        if number is None:
            raise OSError(0, f"no clone system call known for {_machine or 'this machine'}")
        tid_field = _find_tid_field()
        clone_flags = flags | _signal.SIGCHLD | (_CLONE_CHILD_SETTID if tid_field else 0)
        tid = ctypes.c_void_p(tid_field)
        arguments = (ctypes.c_long(number), ctypes.c_ulong(clone_flags), None, None, tid, tid)
        _clone_arguments[flags] = arguments
    before, after_in_child, after_in_parent = _FORK_HOOKS
    before()
    pid = _libc_holding_gil.syscall(*arguments)
    if pid == 0:
        after_in_child()
        return 0
    errno = ctypes.get_errno()
    after_in_parent()
    if pid < 0:
        raise OSError(errno, os.strerror(errno))
    return pid


def _find_tid_field() -> int:
    """Where glibc caches this thread's id, so the child's copy is set to its own id (as fork(3) does).

    Found once by looking for the thread id near ``pthread_self()``; 0 when not
    found (the child then keeps its parent's id there, which only a few
    thread calls on itself read).
    """
    global _tid_field
    if _tid_field is None:
        _tid_field = 0
        gettid = _SYS_GETTID.get(_machine)
        if gettid is not None:
            tid = _libc.syscall(gettid)
            _libc.pthread_self.restype = ctypes.c_void_p
            base = _libc.pthread_self()
            fields = (ctypes.c_int32 * 256).from_address(base) if base else ()
            for index, value in enumerate(fields):
                if value == tid:
                    _tid_field = base + 4 * index
                    break
    return _tid_field


def enter_user_namespace() -> bool:
    """For a user other than root: a new user namespace mapping the user (and group) to itself.

    Afterwards this process may create PID and network namespaces. True when
    it holds; False for root (not needed) or when the kernel refuses.
    """
    if os.geteuid() == 0 or not _LINUX:
        return False
    uid, gid = os.geteuid(), os.getegid()
    if _libc.unshare(CLONE_NEWUSER) != 0:
        return False
    try:
        for name, text in (("uid_map", f"{uid} {uid} 1\n"), ("setgroups", "deny"), ("gid_map", f"{gid} {gid} 1\n")):
            with open(f"/proc/self/{name}", "w", encoding="ascii") as handle:
                handle.write(text)
    except OSError:
        return False
    return True


def leave_network() -> bool:
    """Move this process into a new network namespace: loopback only, and down. True when it holds."""
    return _LINUX and _libc.unshare(CLONE_NEWNET) == 0


def hide_paths(paths: list[str]) -> bool:
    """In a mount namespace of this process's own, cover each of ``paths``: a file with an empty
    one (``/dev/null``), a folder with an empty read-only one. True when every one is covered.

    Children forked afterwards see the same. With no paths, only the namespace is made: the warm
    worker's, in which it builds the allow-listed root its calls see (:mod:`._root`).
    """
    if not _LINUX or _libc.unshare(CLONE_NEWNS) != 0:
        return False
    if _mount(None, b"/", None, _MS_REC | _MS_PRIVATE) != 0:  # nothing done here reaches the host's mounts
        return False
    for path in paths:
        target = os.fsencode(path)
        if os.path.isdir(path):
            covered = _mount(
                b"none", target, b"tmpfs", _MS_RDONLY | _MS_NOSUID | _MS_NODEV | _MS_NOEXEC, b"size=4k,mode=0555"
            )
        elif os.path.exists(path):
            covered = _mount(b"/dev/null", target, None, _MS_BIND)
            covered = covered or _mount(None, target, None, _MS_REMOUNT | _MS_BIND | _MS_RDONLY)
        else:
            continue
        if covered != 0:
            return False
    return True


def _mount(source: bytes | None, target: bytes, kind: bytes | None, flags: int, data: bytes | None = None) -> int:
    return _libc.mount(source, target, kind, ctypes.c_ulong(flags), data)


def join_network(namespace_fd: int) -> bool:
    """Move this process into the network namespace open at ``namespace_fd``. True when it holds."""
    return _LINUX and _libc.setns(namespace_fd, CLONE_NEWNET) == 0


def die_with_parent() -> None:
    """Have the kernel SIGKILL this process when the thread that forked it exits."""
    if _LINUX:
        _libc.prctl(_PR_SET_PDEATHSIG, _signal.SIGKILL, 0, 0, 0)


def become_subreaper() -> bool:
    """Orphans among this process's descendants are re-parented to it instead of to init."""
    return _LINUX and _libc.prctl(_PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0) == 0


def descendants(root: int, *, spare: frozenset[int] = frozenset()) -> list[int]:
    """Every process whose chain of parents reaches ``root`` (read from ``/proc``), but ``spare`` and theirs."""
    children: dict[int, list[int]] = {}
    try:
        entries = os.listdir("/proc")
    except OSError:
        return []
    for entry in entries:
        if not entry.isdigit():
            continue
        try:
            with open(f"/proc/{entry}/stat", "rb") as handle:
                fields = handle.read().rsplit(b")", 1)[1].split()
        except (OSError, IndexError):
            continue
        children.setdefault(int(fields[1]), []).append(int(entry))
    found: list[int] = []
    stack = list(children.get(root, ()))
    while stack:
        pid = stack.pop()
        if pid in spare:
            continue
        found.append(pid)
        stack.extend(children.get(pid, ()))
    return found


def kill_descendants(root: int, *, spare: frozenset[int] = frozenset()) -> int:
    """SIGKILL every descendant of ``root`` but ``spare`` (and theirs); how many were signalled."""
    killed = 0
    for pid in descendants(root, spare=spare):
        try:
            os.kill(pid, _signal.SIGKILL)
            killed += 1
        except OSError:
            pass
    return killed
