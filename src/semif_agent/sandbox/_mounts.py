"""What a confined process sees of ``/dev``, ``/tmp``, ``/run`` and the cgroups (Linux; standard library only).

:func:`narrow_view` gives the calling process a mount namespace (and a cgroup
namespace) of its own, in which:

- ``/dev`` is a fresh read-only tmpfs (``nodev``, ``nosuid``, ``noexec``)
  holding only :data:`DEVICES`, each bound from the host's, the usual links
  (``fd``, ``stdin``...) and a private, empty ``/dev/shm``: no disk, no
  ``/dev/kmsg``, no other process's shared memory;
- ``/tmp`` is a private tmpfs holding only the call's own folders that lie
  under the host's ``/tmp`` (bound at the same paths): no other process's
  files or sockets there (unless ``/tmp`` itself is one of the call's folders);
- ``/run`` (unless the call may use the network: name resolution reads it)
  and ``/sys/fs/cgroup`` are empty and read-only, and ``/proc/kmsg`` is
  ``/dev/null``: no host socket there, no other process's cgroup or PID.

A long-lived parent (the warm worker) makes the parts every call shares once,
in its own mount namespace (:func:`prepare_shared_view`): its children copy
them with their namespace and add only ``/tmp``, ``/dev/shm`` and the cgroups'
cover, a third of the mounts.

The private tmpfs mounts are capped in size and, being memory, count against
the call's memory cgroup. Mounts must come before Landlock (which forbids
them) and before capabilities are dropped. Nothing here reaches the host's
mounts: the new namespace's mounts are made private first.
"""

from __future__ import annotations

import ctypes
import os
import stat
from typing import Any

DEVICES = ("null", "zero", "full", "random", "urandom", "tty")
"""The device nodes a confined program finds in ``/dev``."""
_LINKS = {"fd": "/proc/self/fd", "stdin": "/proc/self/fd/0", "stdout": "/proc/self/fd/1", "stderr": "/proc/self/fd/2"}
_CLONE_NEWNS, _CLONE_NEWCGROUP = 0x00020000, 0x02000000
_MS_RDONLY, _MS_NOSUID, _MS_NODEV, _MS_NOEXEC = 1, 2, 4, 8
_MS_REMOUNT, _MS_BIND, _MS_REC, _MS_PRIVATE = 32, 4096, 16384, 1 << 18
_SEALED = _MS_NOSUID | _MS_NODEV | _MS_NOEXEC
_PRIVATE_TMPFS_BYTES = 64 * 1024 * 1024

_libc = ctypes.CDLL(None, use_errno=True)
_MNT_DETACH = 2
_inherited_private = False  # this process's mounts are already private (its parent made them so)
_shared = {"dev": False, "run": False, "kmsg": False}  # the parts of the view its parent made once for all


def mounts_are_private() -> None:
    """Say that this process's mounts no longer propagate to the host's (a long-lived parent made them
    private in a mount namespace of its own): the namespaces of the children it forks need not redo it."""
    global _inherited_private
    _inherited_private = True


def _mount(source: bytes | None, target: str, kind: bytes | None, flags: int, data: bytes | None = None) -> bool:
    return _libc.mount(source, os.fsencode(target), kind, ctypes.c_ulong(flags), data) == 0


def _bind_fd(fd: int, target: str) -> bool:
    return _mount(f"/proc/self/fd/{fd}".encode(), target, None, _MS_BIND)


def _empty_readonly(target: str) -> bool:
    return _mount(b"none", target, b"tmpfs", _MS_RDONLY | _SEALED, b"size=4k,mode=0555")


def _outermost_under_tmp(paths: list[str], host_tmp: int | None = None) -> list[str]:
    """The paths under ``/tmp`` that exist, without those inside another of them.

    ``host_tmp``: the host's ``/tmp``, open, where a private one covers it now (else the paths are looked at as they are).
    """
    wanted = {os.path.abspath(path) for path in paths if path.startswith("/tmp/")}
    found = sorted(path for path in wanted if _exists(path, host_tmp))
    return [path for index, path in enumerate(found) if not any(path.startswith(p + "/") for p in found[:index])]


def _exists(path: str, host_tmp: int | None) -> bool:
    if host_tmp is None:
        return os.path.exists(path)
    try:
        os.stat(path[len("/tmp/") :], dir_fd=host_tmp)
    except (OSError, ValueError):
        return False
    return True


def narrow_view(keep_under_tmp: list[str], *, tmpfs_bytes: int | None = None, hide_run: bool = True) -> bool:
    """Give this process the narrowed view described in the module's docstring; True when all of it holds.

    ``keep_under_tmp``: the call's folders and files (those under ``/tmp`` are bound into its private one);
    ``tmpfs_bytes``: the size of the private ``/tmp`` and ``/dev/shm`` (default 64 MiB each).
    What a long-lived parent made once (:func:`prepare_shared_view`) is inherited, not made again.
    """
    size = _size(tmpfs_bytes)
    own_tmp = any(  # /tmp itself is the call's: left as is (only a relative path or one naming tmp can be it)
        os.path.abspath(path) == "/tmp" for path in keep_under_tmp if "tmp" in path or not path.startswith("/")
    )
    if _ahead:
        return _finish_ahead(keep_under_tmp, size, own_tmp=own_tmp)
    if _libc.unshare(_CLONE_NEWNS | _CLONE_NEWCGROUP) != 0 and _libc.unshare(_CLONE_NEWNS) != 0:
        return False
    if not _inherited_private and not _mount(None, "/", None, _MS_REC | _MS_PRIVATE):
        return False
    held = True
    if not own_tmp:
        held = _private_tmp(_outermost_under_tmp(keep_under_tmp), size)
    return _common_parts(size, hide_run=hide_run) and held


def _size(tmpfs_bytes: int | None) -> bytes:
    return f"size={tmpfs_bytes or _PRIVATE_TMPFS_BYTES}".encode()


def _common_parts(size: bytes, *, hide_run: bool, cgroups: bool = True) -> bool:
    """What every call's view has, whatever its folders: ``/dev``, ``/dev/shm``, ``/run``, the kernel log and
    (with ``cgroups``) the cgroups' cover."""
    held = _shared["dev"] or _fresh_dev()
    held = held and _mount(b"none", "/dev/shm", b"tmpfs", _SEALED, size + b",mode=1777")
    if hide_run and not _shared["run"] and os.path.isdir("/run") and not os.path.islink("/run"):
        held = _empty_readonly("/run") and held
    elif not hide_run and _shared["run"]:
        held = _libc.umount2(b"/run", _MNT_DETACH) == 0 and held  # the call may resolve names: /run back
    if cgroups:
        held = _cover_cgroups() and held
    if not _shared["kmsg"] and os.path.exists("/proc/kmsg"):
        held = _mount(b"/dev/null", "/proc/kmsg", None, _MS_BIND) and held
    return held


def _cover_cgroups() -> bool:
    if os.path.isdir("/sys/fs/cgroup") and not os.path.islink("/sys/fs/cgroup"):
        return _empty_readonly("/sys/fs/cgroup")
    return True


_ahead: dict[str, Any] = {}  # what a child forked ahead of its call made of its view (prepare_ahead)


def prepare_ahead(*, tmpfs_bytes: int | None, hide_run: bool) -> None:
    """In a child forked ahead of its call (:mod:`._ready`): make the part of :func:`narrow_view` that does
    not depend on the call now, while the worker is idle. A mount namespace of its own with ``/dev``,
    ``/dev/shm``, ``/run``, the kernel log and an empty private ``/tmp`` (of
    ``tmpfs_bytes``, the size the last calls asked for); the host's ``/tmp`` stays open, so that
    :func:`narrow_view` binds the call's folders in it, then closes it. Nothing made: :func:`narrow_view`
    makes all of it for the call, as in any other child.
    """
    if _libc.unshare(_CLONE_NEWNS) != 0:
        return
    if not _inherited_private and not _mount(None, "/", None, _MS_REC | _MS_PRIVATE):
        return
    try:
        host_tmp = os.open("/tmp", os.O_PATH | os.O_DIRECTORY | os.O_CLOEXEC)
    except OSError:
        return
    size = _size(tmpfs_bytes)
    held = _common_parts(size, hide_run=hide_run, cgroups=False)  # the call joins its cgroups first
    held = _mount(b"none", "/tmp", b"tmpfs", _SEALED, size + b",mode=1777") and held
    _ahead.update(held=held, host_tmp=host_tmp, size=size)


def kept_open() -> list[int]:
    """What :func:`prepare_ahead` keeps open for :func:`narrow_view` (the host's ``/tmp``)."""
    return [_ahead["host_tmp"]] if _ahead else []


def _finish_ahead(keep_under_tmp: list[str], size: bytes, *, own_tmp: bool) -> bool:
    """:func:`narrow_view` where :func:`prepare_ahead` made most of it: a cgroup namespace and the cgroups'
    cover (the call's cgroups are joined now), the sizes the call asks for, its folders under the host's ``/tmp`` bound into the private one
    (or the host's back where ``/tmp`` itself is the call's)."""
    held, host_tmp = bool(_ahead["held"]), int(_ahead["host_tmp"])
    try:
        held = _libc.unshare(_CLONE_NEWCGROUP) == 0 and _cover_cgroups() and held
        if size != _ahead["size"]:
            for target in ("/tmp", "/dev/shm"):
                held = _mount(None, target, None, _MS_REMOUNT | _SEALED, size + b",mode=1777") and held
        if own_tmp:
            return _libc.umount2(b"/tmp", _MNT_DETACH) == 0 and held
        kept: list[tuple[str, int]] = []
        try:
            for path in _outermost_under_tmp(keep_under_tmp, host_tmp):
                try:
                    kept.append((path, os.open(path[len("/tmp/") :], os.O_PATH | os.O_CLOEXEC, dir_fd=host_tmp)))
                except OSError:
                    continue
            return _bind_kept(kept) and held
        finally:
            for _path, fd in kept:
                os.close(fd)
    finally:
        os.close(host_tmp)
        _ahead.clear()


def prepare_shared_view(*, hide_run: bool) -> bool:
    """In a long-lived parent with a mount namespace of its own whose mounts are private (the warm worker),
    make once what every call's view shares: the minimal read-only ``/dev`` (with an empty ``/dev/shm``
    folder, where each call mounts its own), ``/proc/kmsg`` as ``/dev/null`` and, with ``hide_run``, an
    empty ``/run``. The views of the children it forks then only add their own parts (:func:`narrow_view`).

    True when ``/dev`` is ready; what did not hold is made by each call as before.
    """
    if not _inherited_private:
        return False
    _shared["dev"] = _fresh_dev()
    if not _shared["dev"]:
        _libc.umount2(b"/dev", _MNT_DETACH)  # a half-made /dev: the host's back
    if hide_run and os.path.isdir("/run") and not os.path.islink("/run"):
        _shared["run"] = _empty_readonly("/run")
    if os.path.exists("/proc/kmsg"):
        _shared["kmsg"] = _mount(b"/dev/null", "/proc/kmsg", None, _MS_BIND)
    return _shared["dev"]


def _fresh_dev() -> bool:
    """Cover ``/dev`` with a read-only tmpfs holding :data:`DEVICES` (bound from the host's), the usual
    links and an empty ``/dev/shm`` folder; True when all of it holds."""
    kept: list[tuple[str, int]] = []
    try:
        for path in [f"/dev/{name}" for name in DEVICES]:
            try:
                kept.append((path, os.open(path, os.O_PATH | os.O_CLOEXEC)))
            except OSError:
                continue
        if not _mount(b"none", "/dev", b"tmpfs", _SEALED, b"size=64k,mode=0755"):
            return False
        held = _bind_kept(kept)
    finally:
        for _path, fd in kept:
            os.close(fd)
    for name, target in _LINKS.items():
        os.symlink(target, f"/dev/{name}")
    os.mkdir("/dev/shm", 0o1777)
    return _mount(None, "/dev", None, _MS_REMOUNT | _MS_RDONLY | _SEALED) and held


def _private_tmp(folders: list[str], size: bytes) -> bool:
    """Cover ``/tmp`` with a private tmpfs of ``size``, ``folders`` (under the host's ``/tmp``) bound in it."""
    kept: list[tuple[str, int]] = []
    try:
        for path in folders:
            try:
                kept.append((path, os.open(path, os.O_PATH | os.O_CLOEXEC)))
            except OSError:
                continue
        if not _mount(b"none", "/tmp", b"tmpfs", _SEALED, size + b",mode=1777"):
            return False
        return _bind_kept(kept)
    finally:
        for _path, fd in kept:
            os.close(fd)


def _bind_kept(kept: list[tuple[str, int]]) -> bool:
    """Bind each opened ``(path, fd)`` at its path, made (folder or empty file) in the fresh tmpfs above it."""
    held = True
    for path, fd in kept:
        if stat.S_ISDIR(os.fstat(fd).st_mode):  # not through /proc: a lookup there costs more than the bind
            os.makedirs(path, exist_ok=True)
        else:
            os.makedirs(os.path.dirname(path), exist_ok=True)
            os.close(os.open(path, os.O_CREAT | os.O_WRONLY | os.O_CLOEXEC, 0o666))
        held = _bind_fd(fd, path) and held
    return held
