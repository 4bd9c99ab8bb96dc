"""What a confined process may still ask of the kernel (Linux; standard library only).

Applied last by :func:`._confine.confine`, each where the kernel allows it:

- :func:`drop_capabilities`: every capability leaves the bounding, ambient,
  effective, permitted and inheritable sets, so a root script has no
  ``CAP_MKNOD`` (no device node), ``CAP_SYS_ADMIN`` (no mount), ``CAP_SYSLOG``
  (no kernel log) or ``CAP_DAC_OVERRIDE`` (root's own file permissions hold),
  and no program it starts gets any back.
- :func:`forbid_local_sockets`: a seccomp filter refusing (``EACCES``) a new
  ``AF_UNIX`` socket and a datagram ``socketpair`` (which could send to a path),
  so no UNIX socket of the host is reachable, by path or abstract name, whatever
  the mount view shows; also ``mknod`` (no device node, FIFO or socket file,
  even where Landlock does not hold), ``syslog(2)`` (the kernel log) and
  ``io_uring`` (which opens sockets past the filter). Stream socket pairs (what
  asyncio and multiprocessing use between their own ends) stay allowed.
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
_SOCK_DGRAM = 2
_SOCK_TYPE_MASK = 0xF

# (audit arch, socket, socketpair, syslog, io_uring_setup, mknod, mknodat) per machine
_SYSCALLS = {
    "x86_64": (0xC000003E, 41, 53, 103, 425, 133, 259),
    "amd64": (0xC000003E, 41, 53, 103, 425, 133, 259),
    "aarch64": (0xC00000B7, 198, 199, 116, 425, 33, 33),
    "arm64": (0xC00000B7, 198, 199, 116, 425, 33, 33),
}
_LD_ABS, _JEQ, _JGE, _AND, _RET = 0x20, 0x15, 0x35, 0x54, 0x06
_ALLOW, _ERRNO = 0x7FFF0000, 0x00050000


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


def _filter_program() -> list[tuple[int, int, int, int]] | None:
    """The seccomp program (BPF) for this machine; None where its system call numbers are not known."""
    numbers = _SYSCALLS.get(os.uname().machine.lower())
    if numbers is None:
        return None
    arch, socket, socketpair, syslog, io_uring_setup, mknod, mknodat = numbers
    deny = _ERRNO | errno.EACCES
    return [
        (_LD_ABS, 0, 0, 4),  # 0: arch
        (_JEQ, 1, 0, arch),  # 1: ours -> 3
        (_RET, 0, 0, _ERRNO | errno.ENOSYS),  # 2: another ABI (i386 calls from a 64-bit process)
        (_LD_ABS, 0, 0, 0),  # 3: system call number
        (_JGE, 15, 0, 0x40000000),  # 4: x32 -> deny
        (_JEQ, 14, 0, syslog),  # 5 -> deny
        (_JEQ, 13, 0, io_uring_setup),  # 6 -> deny
        (_JEQ, 12, 0, mknod),  # 7 -> deny
        (_JEQ, 11, 0, mknodat),  # 8 -> deny
        (_JEQ, 2, 0, socket),  # 9 -> 12
        (_JEQ, 3, 0, socketpair),  # 10 -> 14
        (_RET, 0, 0, _ALLOW),  # 11
        (_LD_ABS, 0, 0, 16),  # 12: socket's family
        (_JEQ, 6, 5, _AF_UNIX),  # 13 -> deny, else allow
        (_LD_ABS, 0, 0, 16),  # 14: socketpair's family
        (_JEQ, 0, 3, _AF_UNIX),  # 15 -> 16, else allow
        (_LD_ABS, 0, 0, 24),  # 16: its type
        (_AND, 0, 0, _SOCK_TYPE_MASK),  # 17
        (_JEQ, 1, 0, _SOCK_DGRAM),  # 18 -> deny
        (_RET, 0, 0, _ALLOW),  # 19
        (_RET, 0, 0, deny),  # 20
    ]


def _compiled() -> tuple[_Program, ctypes.Array[_Instruction]] | None:
    steps = _filter_program()
    if steps is None:
        return None
    instructions = (_Instruction * len(steps))(*(_Instruction(*step) for step in steps))
    return _Program(len(steps), instructions), instructions  # the array lives as long as the program


_PROGRAM = _compiled()  # built once: a forked child only installs it
_NO_CAPABILITIES = (_CapHeader(_CAPABILITY_VERSION_3, 0), (_CapData * 2)())


def forbid_local_sockets() -> bool:
    """Install the seccomp filter of this module on this process (and what it starts); True when it holds."""
    if _PROGRAM is None:
        return False
    if _libc.prctl(_PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) != 0:
        return False
    return _libc.prctl(_PR_SET_SECCOMP, _SECCOMP_MODE_FILTER, ctypes.byref(_PROGRAM[0]), 0, 0) == 0
