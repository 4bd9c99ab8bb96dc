"""Confine the current process before it runs a skill script (Linux; best effort elsewhere).

Standard library only: the script launcher and the warm worker's children load
this module, never the host. Everything here acts on the *calling* process and
is irreversible, so only a freshly forked or spawned child may call it.

What :func:`confine` applies, each where the platform allows it:

- resource limits: address space (memory), CPU seconds, size of files written,
  open files, no core dumps, and the process count (``RLIMIT_NPROC``; the
  kernel does not enforce it for root, so where a ``pids`` cgroup holds the
  run (:mod:`._cgroup`) the spec says ``process_limit_held`` and it is skipped);
- ``SIGXFSZ`` ignored, so an oversized write fails with ``OSError`` instead of
  killing the script silently;
- the mount view (:mod:`._mounts`): the allow-listed root of :mod:`._root`,
  where the run's own folders are bound (those it writes idmapped to
  :data:`._root.CALL_UID` where the parent is root, the run then running as that user);
- Landlock (Linux 5.13+): reading, listing and executing confined to an
  allow-list (system and Python directories, the few files of ``/etc``, the
  skill, its data), writing to the write dirs and a private temporary directory. Nothing else of the host
  is readable: not the user's home, not ``/proc/<pid>/environ`` of other
  processes. ptrace of processes outside the sandbox is refused and, from
  Landlock ABI 6, so are signals to them and abstract unix sockets;
- unless the spec says ``network``, Landlock (ABI 4+) also refuses binding and
  connecting TCP sockets: a second layer under the network namespace of
  :mod:`._isolation`, and the only one where namespaces are not allowed
  (UDP is then left open).
"""

from __future__ import annotations

import ctypes
import os
import resource
import stat
import sys

TYPE_CHECKING = False  # typing's own costs an import per script start
if TYPE_CHECKING:  # typeshed has no stub for the C module; 'signal' has its functions and constants, typed
    import signal as _signal
else:
    import _signal  # the C module: 'signal' would pull in enum, a few ms per script start
if TYPE_CHECKING or __package__:
    from . import _mounts, _privileges, _root
else:  # loaded by the script launcher from this folder, without the package
    import _mounts
    import _privileges
    import _root

_SYS_LANDLOCK_CREATE_RULESET = 444
_SYS_LANDLOCK_ADD_RULE = 445
_SYS_LANDLOCK_RESTRICT_SELF = 446
_LANDLOCK_CREATE_RULESET_VERSION = 1
_LANDLOCK_RULE_PATH_BENEATH = 1
_PR_SET_NO_NEW_PRIVS = 38

# filesystem access rights (linux/landlock.h)
_EXECUTE = 1 << 0
_READ_FILE = 1 << 2
_READ_DIR = 1 << 3
_WRITE_FILE = 1 << 1
_REMOVE_DIR = 1 << 4
_REMOVE_FILE = 1 << 5
_MAKE_CHAR = 1 << 6
_MAKE_DIR = 1 << 7
_MAKE_REG = 1 << 8
_MAKE_SOCK = 1 << 9
_MAKE_FIFO = 1 << 10
_MAKE_BLOCK = 1 << 11
_MAKE_SYM = 1 << 12
_REFER = 1 << 13  # ABI 2
_MAKE_SPECIAL = _MAKE_CHAR | _MAKE_BLOCK | _MAKE_FIFO | _MAKE_SOCK
"""Handled but granted nowhere: no device node, FIFO or socket file is made, not even in a writable folder."""
_TRUNCATE = 1 << 14  # ABI 3
_SCOPE_ABSTRACT_UNIX_SOCKET = 1 << 0  # ABI 6
_SCOPE_SIGNAL = 1 << 1  # ABI 6
_BIND_TCP = 1 << 0  # ABI 4, network access rights
_CONNECT_TCP = 1 << 1


class _RulesetAttr(ctypes.Structure):
    _fields_ = [
        ("handled_access_fs", ctypes.c_uint64),
        ("handled_access_net", ctypes.c_uint64),
        ("scoped", ctypes.c_uint64),
    ]


class _PathBeneathAttr(ctypes.Structure):
    _pack_ = 1
    _fields_ = [("allowed_access", ctypes.c_uint64), ("parent_fd", ctypes.c_int32)]


_RULE_PATH_BENEATH = ctypes.c_int(_LANDLOCK_RULE_PATH_BENEATH)
_NO_FLAGS = ctypes.c_uint32(0)


_libc_found: list[ctypes.CDLL] = []


def _libc() -> ctypes.CDLL:
    if not _libc_found:
        _libc_found.append(ctypes.CDLL(None, use_errno=True))
    return _libc_found[0]


def landlock_abi() -> int:
    """The Landlock ABI version of the running kernel, or 0 when Landlock is unavailable."""
    if not sys.platform.startswith("linux"):
        return 0
    try:
        version = _libc().syscall(
            _SYS_LANDLOCK_CREATE_RULESET, None, ctypes.c_size_t(0), ctypes.c_uint32(_LANDLOCK_CREATE_RULESET_VERSION)
        )
    except (OSError, AttributeError):
        return 0
    return max(int(version), 0)


def _rights(abi: int) -> tuple[int, int, int]:
    """(read rights, write rights, rights that apply to a file) the kernel of ``abi`` knows.

    The write rights make and remove files, folders and links, never :data:`_MAKE_SPECIAL`.
    """
    read_rights = _EXECUTE | _READ_FILE | _READ_DIR
    write_rights = _WRITE_FILE | _REMOVE_DIR | _REMOVE_FILE | _MAKE_DIR | _MAKE_REG | _MAKE_SYM
    file_rights = _EXECUTE | _READ_FILE | _WRITE_FILE
    if abi >= 2:
        write_rights |= _REFER
    if abi >= 3:
        write_rights |= _TRUNCATE
        file_rights |= _TRUNCATE
    return read_rights, write_rights, file_rights


def restrict_filesystem(
    writable: list[str], readable: list[str], *, deny_tcp: bool = False, files: bool = True
) -> bool:
    """Confine this process to ``readable`` (read, list, execute) and ``writable`` (all of it).

    Paths may be files or directories; missing ones are ignored; the folders
    given to :func:`preopen` are readable too. Returns True when the kernel
    enforces it. Also confines ptrace (``/proc/<pid>/mem``) and, from ABI 6,
    signals and abstract unix sockets to this process's own domain. With
    ``deny_tcp`` (ABI 4+) no TCP port may be bound or connected to; with
    ``files`` false only that (and the scoping) applies.
    """
    abi = _abi()
    if abi < 1 or (not files and not (deny_tcp and abi >= 4)):
        return False
    libc = _libc()
    read_rights, write_rights, file_rights = _rights(abi)
    handled = read_rights | write_rights | _MAKE_SPECIAL
    attr = _RulesetAttr(handled_access_fs=handled if files else 0, handled_access_net=0, scoped=0)
    size = 8  # handled_access_fs only
    if abi >= 4:
        attr.handled_access_net = (_BIND_TCP | _CONNECT_TCP) if deny_tcp else 0
        size = 16
    if abi >= 6:
        attr.scoped = _SCOPE_SIGNAL | _SCOPE_ABSTRACT_UNIX_SOCKET
        size = ctypes.sizeof(_RulesetAttr)
    ruleset_fd = libc.syscall(
        _SYS_LANDLOCK_CREATE_RULESET, ctypes.byref(attr), ctypes.c_size_t(size), ctypes.c_uint32(0)
    )
    if ruleset_fd < 0:
        return False
    try:
        add_rule, ruleset = libc.syscall, ctypes.c_int(ruleset_fd)
        for rule in _prepared if files else ():
            add_rule(_SYS_LANDLOCK_ADD_RULE, ruleset, _RULE_PATH_BENEATH, ctypes.byref(rule), _NO_FLAGS)
        rules = [(path, read_rights) for path in readable if path not in _preopened] if files else []
        rules += [(path, read_rights | write_rights) for path in writable] if files else []
        for path, rights in rules:
            _add_path_rule(libc, ruleset_fd, path, rights, file_rights)
        if libc.prctl(_PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) != 0:
            return False
        return libc.syscall(_SYS_LANDLOCK_RESTRICT_SELF, ctypes.c_int(ruleset_fd), ctypes.c_uint32(0)) == 0
    finally:
        os.close(ruleset_fd)


_preopened: dict[str, tuple[int, bool]] = {}
"""What a forked child keeps open for its confinement, by path: the system folders :func:`preopen` opened
(their rules in :data:`_prepared`) and, under :data:`IDMAP`, the user namespace the call's folders are idmapped with."""
_prepared: list[_PathBeneathAttr] = []
_shared_view: list[bool] = []  # prepare_parent made the parent's own view ready: preopen builds the root there
IDMAP = "\0idmap"
_abi_found: int | None = None


def _abi() -> int:
    global _abi_found
    if _abi_found is None:
        _abi_found = landlock_abi()
    return _abi_found


def preopen(paths: list[str]) -> None:
    """Open ``paths`` now, in a long-lived parent, and prepare their read rules for forked children.

    Where :func:`prepare_parent` made the parent's view ready, the allow-listed root its children will see
    is built from ``paths`` first (:func:`._mounts.share_root`) and they are opened there, as the children
    see them (its ``/etc`` holds only the allowed files); a user namespace to idmap the calls' folders is
    made too, where the parent is root (kept open beside them, see :data:`IDMAP`).
    """
    root = _mounts.share_root(paths) if _shared_view and not _preopened else None
    if root is None:  # no root of its own: /etc is read entry by entry, as the allow-list says
        paths = _root.system_paths(paths, network=_mounts.calls_may_use_network()) if "/etc" in paths else paths
    elif os.geteuid() == 0 and IDMAP not in _preopened:
        fd = _root.idmap_namespace(_root.CALL_UID)
        if fd >= 0:
            _preopened[IDMAP] = (fd, False)
    read_rights, _write, file_rights = _rights(_abi())
    _libc().syscall, _libc().prctl  # made once here, not in every child
    for path in paths:
        if path not in _preopened and path != "/proc/self":
            try:
                fd = os.open(root.inner(path) if root is not None else path, os.O_PATH | os.O_CLOEXEC)
            except OSError:
                continue
            is_dir = stat.S_ISDIR(os.fstat(fd).st_mode)
            _preopened[path] = (fd, is_dir)
            _prepared.append(
                _PathBeneathAttr(allowed_access=read_rights if is_dir else read_rights & file_rights, parent_fd=fd)
            )


def _forget_preopened(path: str) -> None:
    """Make ``path``'s rule from its path, not from the folder opened before (now covered by another)."""
    found = _preopened.pop(path, None)
    if found is not None:
        os.close(found[0])


def _release_preopened() -> None:
    close_all(sorted(fd for fd, _is_dir in _preopened.values()))
    _preopened.clear()
    _prepared.clear()


def close_all(fds: list[int]) -> None:
    """Close the sorted descriptors ``fds``, a run of consecutive ones in one system call."""
    start = 0
    for index in range(1, len(fds) + 1):
        if index == len(fds) or fds[index] != fds[index - 1] + 1:
            os.closerange(fds[start], fds[index - 1] + 1)
            start = index


def _add_path_rule(libc: ctypes.CDLL, ruleset_fd: int, path: str, rights: int, file_rights: int) -> None:
    try:
        fd = os.open(path, os.O_PATH | os.O_CLOEXEC)
    except OSError:
        return
    try:
        is_dir = stat.S_ISDIR(os.fstat(fd).st_mode)
        rule = _PathBeneathAttr(allowed_access=rights if is_dir else rights & file_rights, parent_fd=fd)
        libc.syscall(
            _SYS_LANDLOCK_ADD_RULE, ctypes.c_int(ruleset_fd), _RULE_PATH_BENEATH, ctypes.byref(rule), _NO_FLAGS
        )
    finally:
        os.close(fd)


def _count_user_tasks(uid: int) -> int:
    """Tasks (processes and threads) the user runs now, which RLIMIT_NPROC counts."""
    count = 0
    try:
        entries = os.listdir("/proc")
    except OSError:
        return 0
    for entry in entries:
        if not entry.isdigit():
            continue
        try:
            if os.stat(f"/proc/{entry}").st_uid == uid:
                count += len(os.listdir(f"/proc/{entry}/task"))
        except OSError:
            continue
    return count


def _process_limit(spec: dict) -> int | None:
    """RLIMIT_NPROC for ``max_processes`` more tasks; None when it cannot apply (root, no /proc)."""
    processes = spec.get("max_processes")
    if processes is None or not hasattr(resource, "RLIMIT_NPROC") or os.getuid() == 0 or not os.path.isdir("/proc"):
        return None
    return _count_user_tasks(os.getuid()) + int(processes)


def _set_limit(which: int, value: int | None) -> None:
    if value is None:
        return
    try:
        resource.setrlimit(which, (value, value))
    except ValueError:  # above the hard limit: lower to it
        try:
            _soft, hard = resource.getrlimit(which)
            resource.setrlimit(which, (min(value, hard), hard))
        except (ValueError, OSError):
            pass
    except OSError:
        pass


def apply_limits(spec: dict, *, process_limit: int | None = None) -> None:
    """Apply the resource limits of ``spec``; ``process_limit`` is the RLIMIT_NPROC to set, if any."""
    _set_limit(resource.RLIMIT_CORE, 0)
    _set_limit(resource.RLIMIT_AS, spec.get("memory_bytes"))
    cpu = spec.get("cpu_seconds")
    if cpu is not None:
        try:
            resource.setrlimit(resource.RLIMIT_CPU, (int(cpu), int(cpu) + 1))
        except (ValueError, OSError):
            pass
    _set_limit(resource.RLIMIT_FSIZE, spec.get("file_bytes"))
    _set_limit(resource.RLIMIT_NOFILE, spec.get("open_files"))
    if process_limit is not None:
        _set_limit(resource.RLIMIT_NPROC, process_limit)


def prepare_parent(*, private_mounts: bool, hide_run: bool = True) -> None:
    """In a long-lived parent (the warm worker), what :func:`confine` would otherwise redo in every child:
    capabilities out of the bounding set and, where ``private_mounts`` (it made its mounts private in a
    namespace of its own), no remount and the parts of the view all its calls share
    (:func:`._mounts.prepare_shared_view`; ``hide_run`` when none of them may use the network)."""
    _privileges.drop_bounding_set()
    if private_mounts:
        _mounts.mounts_are_private()
        _mounts.prepare_shared_view(hide_run=hide_run)
        _shared_view.append(True)


def confine(spec: dict, *, cwd: str | None = None, own_ipc: bool = False) -> dict[str, str]:
    """Apply every confinement ``spec`` asks for to this process; what held, by kind.

    The answer has ``filesystem`` (``landlock`` or ``none``), ``tcp``
    (``landlock`` when TCP is denied by Landlock too), ``view``
    (``mount-namespace`` when :func:`._mounts.narrow_view` holds: a minimal
    ``/dev``, private ``/tmp`` and ``/dev/shm``, no ``/run`` or cgroups; else
    ``none``), ``root`` (``allow-list`` when that view is the allow-listed root of :mod:`._root`: nothing
    of the host but the system folders and the call's own; else ``host``), ``user`` (``unprivileged``
    when the call runs as :data:`._root.CALL_UID`, ``root`` when it stays root without capabilities,
    ``host`` when it runs as the host's user, not root), ``keyring`` (``fresh`` when it has a session
    keyring of its own), ``devices`` (what refuses making a device node or FIFO:
    ``capabilities``, ``landlock``, ``seccomp``, joined by ``+``), ``local_sockets`` (``seccomp`` when no UNIX socket can
    be opened; else what still covers abstract ones), ``ipc`` (``namespace`` when ``own_ipc``: the process was
    forked into an IPC namespace of its own; else ``seccomp`` when System V IPC and POSIX message queues are
    refused, or ``none``), ``set_id`` (``seccomp`` when no set-uid or set-gid bit can be set) and, when not already held
    by a cgroup (``process_limit_held``), ``process_limit`` (``rlimit`` or
    ``none``). Order matters: the process count is read while ``/proc`` is
    still visible, the mounts come next (Landlock forbids them), the working directory becomes ``cwd``
    (or the one it had, now inside the new root), then Landlock
    (it needs free descriptors), the limits, the keyring, the user (the mounts needed root), the
    capabilities and last the seccomp filter (it refuses the calls made before).
    """
    _signal.signal(_signal.SIGXFSZ, _signal.SIG_IGN)
    held: dict[str, str] = {}
    process_limit = None if spec.get("process_limit_held") else _process_limit(spec)
    if not spec.get("process_limit_held"):
        held["process_limit"] = "rlimit" if process_limit is not None else "none"
    files, deny_tcp = bool(spec.get("confine_fs")), not spec.get("network", False)
    writable = list(spec.get("writable", []))
    own = [path for path in spec.get("readable", []) if path != "/proc/self"]
    system = list(spec.get("system_readable", []))
    view_system = system or [path for path in _preopened if path != IDMAP]  # a parent's, where it made no root
    confined = viewed = mapped = False
    how = "none"
    workdir = cwd or os.getcwd()
    try:
        idmap = _preopened.get(IDMAP, (-1, False))[0]
        if idmap < 0 and os.geteuid() == 0 and spec.get("namespaces", True) and not _shared_view:
            idmap = _root.idmap_namespace(_root.CALL_UID)  # a process of its own (the launcher's): made here
            if idmap >= 0:
                _preopened[IDMAP] = (idmap, False)
        if spec.get("namespaces", True):
            viewed, how, mapped = _mounts.narrow_view(
                writable=writable,
                readable=own,
                system=view_system,
                cwd=workdir,
                tmpfs_bytes=spec.get("disk_bytes"),
                hide_run=deny_tcp,
                idmap_fd=idmap,
                covered=list(spec.get("covered", [])),
            )
        readable = [_expand(path) for path in [*system, *spec.get("readable", [])]]
        if viewed:
            writable.append("/dev/shm")
            readable.append("/dev")
            _forget_preopened("/dev")  # a new /dev now: its rule is made from the path
        if cwd is not None or how == "allow-list":
            try:
                os.chdir(workdir)
            except OSError:
                os.chdir("/")
        confined = restrict_filesystem(writable, readable, deny_tcp=deny_tcp, files=files)
    finally:
        _release_preopened()
    held["filesystem"] = "landlock" if confined and files else "none"
    held["view"] = "mount-namespace" if viewed else "none"
    held["root"] = "allow-list" if viewed and how == "allow-list" else "host"
    if deny_tcp:
        held["tcp"] = "landlock" if confined and _abi() >= 4 else "none"
    apply_limits(spec, process_limit=process_limit)
    held["keyring"] = "fresh" if _privileges.fresh_session_keyring() else "none"
    if os.geteuid() != 0:
        held["user"] = "host"
    else:
        held["user"] = "unprivileged" if mapped and _privileges.become_user(_root.CALL_UID) else "root"
    dropped = _privileges.drop_capabilities()
    filtered = _privileges.forbid_local_sockets(refuse_ipc=not own_ipc)
    held["ipc"] = "namespace" if own_ipc else "seccomp" if filtered else "none"
    held["set_id"] = "seccomp" if filtered else "none"
    fences = [("capabilities", dropped), ("landlock", confined and files), ("seccomp", filtered)]
    held["devices"] = "+".join(name for name, holds in fences if holds) or "none"
    if filtered:
        held["local_sockets"] = "seccomp"
    else:
        held["local_sockets"] = "landlock" if confined and _abi() >= 6 else "none"
    return held


def _expand(path: str) -> str:
    """``/proc/self`` names this process's own /proc entry (its children get none).

    Read from the link, not ``getpid()``: in a PID namespace of its own the
    process is pid 1 there, but ``/proc`` still numbers it as the host does.
    """
    if path != "/proc/self":
        return path
    try:
        return f"/proc/{os.readlink('/proc/self')}"
    except OSError:
        return f"/proc/{os.getpid()}"
