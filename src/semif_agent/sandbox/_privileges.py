"""What a confined process may still ask of the kernel (Linux; standard library only).

Applied last by :func:`._confine.confine`, each where the kernel allows it:

- :func:`fresh_session_keyring`: a new, empty session keyring, so no key of
  the session that started the worker is the call's to find.
- :func:`become_user`: from root, the call's own user (:data:`._root.CALL_UID`),
  where its folders could be idmapped to it: root's files elsewhere are
  another user's to it (a root-only key is unreadable).
- :func:`drop_capabilities`: every capability leaves the bounding, ambient,
  effective, permitted and inheritable sets, so a root script has no
  ``CAP_MKNOD`` (no device node), ``CAP_SYS_ADMIN`` (no mount), ``CAP_SYSLOG``
  (no kernel log) or ``CAP_DAC_OVERRIDE`` (root's own file permissions hold),
  and no program it starts gets any back.
- :func:`forbid_local_sockets`: a seccomp filter, a deny-list by name per machine
  (x86_64 and aarch64, :data:`_NUMBERS`). It refuses (``EPERM``) every call in
  :data:`REFUSED`: kernel keyrings (``keyctl``, ``add_key``, ``request_key``),
  ``userfaultfd``, ``setns``, ``bpf``, ``perf_event_open``, ``ptrace`` and
  ``process_vm_readv``/``writev``, ``kexec*``, module loading, every mount call
  (``mount``, ``umount2``, ``pivot_root``, ``fsopen``, ``open_tree``...), file
  handles (``open_by_handle_at``); ``clone`` and ``unshare`` asking for any new
  namespace (a user namespace first), and ``clone3`` with ``ENOSYS`` (its flags
  are out of the filter's reach: C libraries fall back to ``clone``). It
  refuses (``EACCES``) a new ``AF_UNIX`` socket and a datagram ``socketpair``
  (which could send to a path), so no UNIX socket of the host is reachable,
  by path or abstract name, whatever the mount view shows; also ``mknod`` (no
  device node, FIFO or socket file, even where Landlock does not hold),
  ``syslog(2)`` (the kernel log) and ``io_uring`` (which opens sockets past
  the filter). Stream socket pairs (what asyncio and multiprocessing use
  between their own ends) stay allowed. It refuses (``EPERM``) setting the
  set-uid or set-gid bit: ``chmod``, ``fchmod``, ``fchmodat`` and ``fchmodat2``
  with either in the mode, ``open``, ``openat`` and ``creat`` creating a file
  with either asked for (``mknod`` is refused whole); ``openat2``, whose mode
  is out of its reach, is answered ``ENOSYS`` (C libraries fall back to
  ``openat``). A call's write dirs are idmapped, so what it makes there is
  root's on disk: a set-uid bit there would be a root program for every user
  of the host. Where the process has no IPC namespace of its own, System V
  IPC and POSIX message queues (:data:`IPC`) are refused too.
"""

from __future__ import annotations

import ctypes
import errno
import os

_PR_CAPBSET_DROP = 24
_PR_SET_SECCOMP = 22
_PR_CAP_AMBIENT = 47
_PR_CAP_AMBIENT_CLEAR_ALL = 4
_PR_SET_NO_NEW_PRIVS = 38
_SECCOMP_MODE_FILTER = 2
_CAPABILITY_VERSION_3 = 0x20080522
_AF_UNIX = 1
_SET_ID_BITS = 0o6000  # S_ISUID | S_ISGID
_CREATING = 0o100 | 0o20000000  # O_CREAT | __O_TMPFILE (the same on x86_64 and aarch64)
_SOCK_DGRAM = 2
_SOCK_TYPE_MASK = 0xF

_NAMESPACE_FLAGS = 0x7E020080
"""Every ``CLONE_NEW*`` flag (time, mount, cgroup, UTS, IPC, user, PID, network): none may be asked for."""

_ARCHES = {"x86_64": (0, 0xC000003E), "amd64": (0, 0xC000003E), "aarch64": (1, 0xC00000B7), "arm64": (1, 0xC00000B7)}
"""Machine name: (its column in :data:`_NUMBERS`, its audit architecture)."""
_NUMBERS: dict[str, tuple[int | None, int | None]] = {  # name: (x86_64, aarch64); None where there is no such call
    "socket": (41, 198),
    "socketpair": (53, 199),
    "clone": (56, 220),
    "unshare": (272, 97),
    "clone3": (435, 435),
    "syslog": (103, 116),
    "io_uring_setup": (425, 425),
    "io_uring_enter": (426, 426),
    "io_uring_register": (427, 427),
    "mknod": (133, None),
    "mknodat": (259, 33),
    "keyctl": (250, 219),
    "add_key": (248, 217),
    "request_key": (249, 218),
    "userfaultfd": (323, 282),
    "setns": (308, 268),
    "bpf": (321, 280),
    "perf_event_open": (298, 241),
    "ptrace": (101, 117),
    "process_vm_readv": (310, 270),
    "process_vm_writev": (311, 271),
    "kexec_load": (246, 104),
    "kexec_file_load": (320, 294),
    "init_module": (175, 105),
    "finit_module": (313, 273),
    "delete_module": (176, 106),
    "mount": (165, 40),
    "umount2": (166, 39),
    "pivot_root": (155, 41),
    "chroot": (161, 51),
    "open_tree": (428, 428),
    "move_mount": (429, 429),
    "fsopen": (430, 430),
    "fsconfig": (431, 431),
    "fsmount": (432, 432),
    "fspick": (433, 433),
    "mount_setattr": (442, 442),
    "open_tree_attr": (467, 467),
    "open_by_handle_at": (304, 265),
    "name_to_handle_at": (303, 264),
    "fanotify_init": (300, 262),
    "kcmp": (312, 272),
    "acct": (163, 89),
    "swapon": (167, 224),
    "swapoff": (168, 225),
    "reboot": (169, 142),
    "quotactl": (179, 60),
    "iopl": (172, None),
    "ioperm": (173, None),
    "modify_ldt": (154, None),
    "uselib": (134, None),
    "vhangup": (153, 58),
    "chmod": (90, None),
    "fchmod": (91, 52),
    "fchmodat": (268, 53),
    "fchmodat2": (452, 452),
    "creat": (85, None),
    "open": (2, None),
    "openat": (257, 56),
    "openat2": (437, 437),
    "shmget": (29, 194),
    "shmat": (30, 196),
    "shmctl": (31, 195),
    "semget": (64, 190),
    "semop": (65, 193),
    "semctl": (66, 191),
    "semtimedop": (220, 192),
    "msgget": (68, 186),
    "msgsnd": (69, 189),
    "msgrcv": (70, 188),
    "msgctl": (71, 187),
    "mq_open": (240, 180),
    "mq_unlink": (241, 181),
    "mq_timedsend": (242, 182),
    "mq_timedreceive": (243, 183),
    "mq_notify": (244, 184),
    "mq_getsetattr": (245, 185),
}
_HELD_AT_EACCES = ("syslog", "io_uring_setup", "io_uring_enter", "io_uring_register", "mknod", "mknodat")
_MODE_ARGUMENT = {"chmod": 1, "fchmod": 1, "creat": 1, "fchmodat": 2, "fchmodat2": 2}
"""Calls that set a file's mode, and which of their arguments is the mode: refused when it asks for set-uid or set-gid."""
_OPENS = {"open": (1, 2), "openat": (2, 3)}
"""Calls that may create a file, and which arguments are their flags and mode."""
IPC: tuple[str, ...] = ("shmget", "shmat", "shmctl", "semget", "semop", "semctl", "semtimedop", "msgget", "msgsnd")
IPC += ("msgrcv", "msgctl", "mq_open", "mq_unlink", "mq_timedsend", "mq_timedreceive", "mq_notify", "mq_getsetattr")
"""System V IPC and POSIX message queues: refused where the process has no IPC namespace of its own."""
_BY_ARGUMENTS = ("socket", "socketpair", "clone", "unshare", "clone3", "openat2", *_MODE_ARGUMENT, *_OPENS)
REFUSED = tuple(name for name in _NUMBERS if name not in (*_HELD_AT_EACCES, *_BY_ARGUMENTS, *IPC))
"""System calls refused outright (``EPERM``), by name: kernel keyrings, page-fault handlers, other namespaces,
BPF, tracing and other processes' memory, kernel images and modules, every mount call, file handles."""
_LD_ABS, _JEQ, _JGE, _JSET, _AND, _RET = 0x20, 0x15, 0x35, 0x45, 0x54, 0x06
_ALLOW, _ERRNO = 0x7FFF0000, 0x00050000
_KEYCTL_JOIN_SESSION_KEYRING = 1


class _CapHeader(ctypes.Structure):
    _fields_ = [("version", ctypes.c_uint32), ("pid", ctypes.c_int)]


class _CapData(ctypes.Structure):
    _fields_ = [("effective", ctypes.c_uint32), ("permitted", ctypes.c_uint32), ("inheritable", ctypes.c_uint32)]


class _Instruction(ctypes.Structure):
    _fields_ = [("code", ctypes.c_uint16), ("jt", ctypes.c_uint8), ("jf", ctypes.c_uint8), ("k", ctypes.c_uint32)]


class _Program(ctypes.Structure):
    _fields_ = [("len", ctypes.c_ushort), ("filter", ctypes.POINTER(_Instruction))]


_libc = ctypes.CDLL(None, use_errno=True)


_bounding_dropped = False


def drop_bounding_set() -> None:
    """Take every capability out of the bounding set: no program this process or its children start
    gets one back. The process keeps those it has; a long-lived parent does this once for all its children."""
    global _bounding_dropped
    for cap in range(64):
        if _libc.prctl(_PR_CAPBSET_DROP, cap, 0, 0, 0) != 0 and ctypes.get_errno() == errno.EINVAL:
            break  # past the kernel's last capability
    _bounding_dropped = True


def drop_capabilities() -> bool:
    """Give up every capability, for good; True when none is left (also for a user that had none)."""
    if not _bounding_dropped:
        drop_bounding_set()
    _libc.prctl(_PR_CAP_AMBIENT, _PR_CAP_AMBIENT_CLEAR_ALL, 0, 0, 0)
    return _libc.capset(ctypes.byref(_NO_CAPABILITIES[0]), _NO_CAPABILITIES[1]) == 0


_Step = tuple[int | str, int, int | str, int | str]


def _machine_numbers() -> dict[str, int] | None:
    """This machine's system call numbers by name; None where it is not one :data:`_NUMBERS` knows."""
    found = _ARCHES.get(os.uname().machine.lower())
    if found is None:
        return None
    column = found[0]
    return {name: number for name, by_arch in _NUMBERS.items() if (number := by_arch[column]) is not None}


def _filter_program(*, refuse_ipc: bool) -> list[tuple[int, int, int, int]] | None:
    """The seccomp program (BPF) for this machine; None where its system call numbers are not known.
    ``refuse_ipc``: System V IPC and POSIX message queues refused too (:data:`IPC`).

    A deny-list, not an allow-list of system calls: the filter also holds for whatever program a script
    execs (a shell, a compiled tool), and the calls a C library needs change with its version (a call an
    allow-list missed fails those programs at random). What it refuses is every call that reaches past the
    process's own files and memory (:data:`REFUSED`), all else stays as the kernel and the other fences allow.
    """
    numbers = _machine_numbers()
    if numbers is None:
        return None
    arch = _ARCHES[os.uname().machine.lower()][1]
    steps: list[_Step] = [  # (code, k, where to go when true, when false); a code that is text is a label
        (_LD_ABS, 4, 0, 0),  # arch
        (_JEQ, arch, 0, "enosys"),  # another ABI (i386 calls from a 64-bit process)
        (_LD_ABS, 0, 0, 0),  # the system call's number
        (_JGE, 0x40000000, "eacces", 0),  # x32
    ]
    refused = [*REFUSED, *IPC] if refuse_ipc else REFUSED
    steps += [(_JEQ, numbers[name], "eperm", 0) for name in refused if name in numbers]
    steps += [(_JEQ, numbers[name], "eacces", 0) for name in _HELD_AT_EACCES if name in numbers]
    steps += [(_JEQ, numbers[name], f"mode{index}", 0) for name, index in _MODE_ARGUMENT.items() if name in numbers]
    steps += [(_JEQ, numbers[name], name, 0) for name in _OPENS if name in numbers]
    steps += [
        (_JEQ, numbers["openat2"], "enosys", 0),  # its mode is in memory, out of BPF's reach: C libraries then openat
        (_JEQ, numbers["clone3"], "enosys", 0),  # its flags are in memory, out of BPF's reach: C libraries then clone
        (_JEQ, numbers["clone"], "flags", 0),
        (_JEQ, numbers["unshare"], "flags", 0),
        (_JEQ, numbers["socket"], "socket", 0),
        (_JEQ, numbers["socketpair"], "socketpair", 0),
        (_RET, _ALLOW, 0, 0),
        ("flags", 0, 0, 0),
        (_LD_ABS, 16, 0, 0),  # clone's and unshare's flags (their low half)
        (_JSET, _NAMESPACE_FLAGS, "eperm", "allow"),
        ("socket", 0, 0, 0),
        (_LD_ABS, 16, 0, 0),  # the family
        (_JEQ, _AF_UNIX, "eacces", "allow"),
        ("socketpair", 0, 0, 0),
        (_LD_ABS, 16, 0, 0),
        (_JEQ, _AF_UNIX, 0, "allow"),
        (_LD_ABS, 24, 0, 0),  # its type
        (_AND, _SOCK_TYPE_MASK, 0, 0),
        (_JEQ, _SOCK_DGRAM, "eacces", "allow"),
    ]
    for name, (flags, mode) in _OPENS.items():  # a file created with set-uid or set-gid asked for
        steps += [(name, 0, 0, 0), (_LD_ABS, _argument(flags), 0, 0), (_JSET, _CREATING, f"mode{mode}", "allow")]
    for index in sorted({*_MODE_ARGUMENT.values(), *(mode for _flags, mode in _OPENS.values())}):
        steps += [(f"mode{index}", 0, 0, 0), (_LD_ABS, _argument(index), 0, 0), (_JSET, _SET_ID_BITS, "eperm", "allow")]
    steps += [
        ("allow", 0, 0, 0),
        (_RET, _ALLOW, 0, 0),
        ("eperm", 0, 0, 0),
        (_RET, _ERRNO | errno.EPERM, 0, 0),
        ("eacces", 0, 0, 0),
        (_RET, _ERRNO | errno.EACCES, 0, 0),
        ("enosys", 0, 0, 0),
        (_RET, _ERRNO | errno.ENOSYS, 0, 0),
    ]
    return _assemble(steps)


def _argument(index: int) -> int:
    """Where the low half of a system call's argument ``index`` lies in the filter's data (little-endian)."""
    return 16 + 8 * index


def _assemble(steps: list[_Step]) -> list[tuple[int, int, int, int]]:
    """BPF instructions from ``steps``: a step whose code is text is a label; jumps name labels or are 0."""
    labels: dict[str, int] = {}
    count = 0
    for code, _k, _true, _false in steps:
        if isinstance(code, str):
            labels[code] = count
        else:
            count += 1
    program: list[tuple[int, int, int, int]] = []
    for code, k, true, false in steps:
        if isinstance(code, str):
            continue
        here = len(program) + 1
        jt = labels[true] - here if isinstance(true, str) else true
        jf = labels[false] - here if isinstance(false, str) else false
        program.append((code, jt, jf, k))
    assert all(0 <= jt <= 255 and 0 <= jf <= 255 for _code, jt, jf, _k in program)
    return program


def _compiled(*, refuse_ipc: bool) -> tuple[_Program, ctypes.Array[_Instruction]] | None:
    steps = _filter_program(refuse_ipc=refuse_ipc)
    if steps is None:
        return None
    instructions = (_Instruction * len(steps))(*(_Instruction(*step) for step in steps))
    return _Program(len(steps), instructions), instructions  # the array lives as long as the program


_PROGRAMS = {refuse_ipc: _compiled(refuse_ipc=refuse_ipc) for refuse_ipc in (False, True)}
"""Built once: a forked child only installs one. By whether System V IPC and message queues are refused."""
_NO_CAPABILITIES = (_CapHeader(_CAPABILITY_VERSION_3, 0), (_CapData * 2)())


def fresh_session_keyring() -> bool:
    """Join a new, empty session keyring: no key of the session that started the worker is this process's
    to find, and whatever it could add would go there and die with it. True when it holds."""
    numbers = _machine_numbers()
    if numbers is None:
        return False
    return _libc.syscall(numbers["keyctl"], _KEYCTL_JOIN_SESSION_KEYRING, None) >= 0


def become_user(uid: int) -> bool:
    """Run as ``uid`` (and the group of that number, no other groups) from now on; True when it holds.

    From root this also empties the effective and permitted capabilities, for good.
    """
    try:
        os.setgroups([])
        os.setresgid(uid, uid, uid)
        os.setresuid(uid, uid, uid)
    except OSError:
        return False
    return os.getuid() == uid


def forbid_local_sockets(*, refuse_ipc: bool = False) -> bool:
    """Install the seccomp filter of this module on this process (and what it starts); True when it holds.

    ``refuse_ipc``: the process shares the IPC namespace of others (the host's): System V IPC and POSIX
    message queues (:data:`IPC`) are refused too, so no queue, semaphore or shared memory segment
    passes between calls or outlives one.
    """
    program = _PROGRAMS[refuse_ipc]
    if program is None:
        return False
    if _libc.prctl(_PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) != 0:
        return False
    return _libc.prctl(_PR_SET_SECCOMP, _SECCOMP_MODE_FILTER, ctypes.byref(program[0]), 0, 0) == 0
