"""What a confined process sees of the host's files (Linux; standard library only).

:func:`narrow_view` gives the calling process a mount namespace (and a cgroup
namespace) of its own. Where it can, its root is the allow-listed root of
:mod:`._root` (built once by a long-lived parent, :func:`share_root`, or here):
only the system folders and the call's own, its own ``/tmp``, ``/dev/shm`` and
``/proc``. Where that root cannot be made, the host's view stays, in which:

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

TYPE_CHECKING = False
if TYPE_CHECKING or __package__:
    from . import _root
else:  # loaded by the script launcher from this folder, without the package
    import _root

DEVICES = ("null", "zero", "full", "random", "urandom", "tty")
"""The device nodes a confined program finds in ``/dev``."""
_LINKS = {"fd": "/proc/self/fd", "stdin": "/proc/self/fd/0", "stdout": "/proc/self/fd/1", "stderr": "/proc/self/fd/2"}
_CLONE_NEWNS, _CLONE_NEWCGROUP = 0x00020000, 0x02000000
_MS_RDONLY, _MS_NOSUID, _MS_NODEV, _MS_NOEXEC = 1, 2, 4, 8
_MS_REMOUNT, _MS_BIND, _MS_REC, _MS_PRIVATE = 32, 4096, 16384, 1 << 18
_SEALED = _MS_NOSUID | _MS_NODEV | _MS_NOEXEC
_PRIVATE_TMPFS_BYTES = 64 * 1024 * 1024
_COVER_OPTIONS = b"size=1m,mode=0777"

_libc = ctypes.CDLL(None, use_errno=True)
_MNT_DETACH = 2
_inherited_private = False  # this process's mounts are already private (its parent made them so)
_shared = {"dev": False, "run": False, "kmsg": False}  # the parts of the view its parent made once for all
_shared_root: list[_root.Root] = []  # the allow-listed root its parent built once for all (share_root)
_hide_run = [True]  # what its parent's calls may not use: /run (the network)


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


def narrow_view(
    *,
    writable: list[str],
    readable: list[str],
    system: list[str],
    cwd: str,
    tmpfs_bytes: int | None = None,
    hide_run: bool = True,
    idmap_fd: int = -1,
    covered: list[str] | None = None,
) -> tuple[bool, str, bool]:
    """Give this process its narrowed view; (whether all of it holds, which view, whether the call's folders
    are idmapped to :data:`._root.CALL_UID`).

    The view is ``allow-list`` where the root of :mod:`._root` can be made (the parent's, else one made
    here from ``system``): only the system folders, the call's ``writable`` and ``readable`` folders and its
    ``cwd``; else ``mount-namespace``, the host's files with the parts of the module's docstring covered
    (the call's folders under ``/tmp`` bound into its private one). ``tmpfs_bytes``: the size of the
    private ``/tmp`` and ``/dev/shm`` (default 64 MiB each); ``idmap_fd``: a user namespace to idmap the
    call's folders with (-1: none, the call stays the user it is); ``covered``: folders inside the ``writable``
    ones it sees as empty folders of its own, in either view (:func:`cover`).
    """
    size = _size(tmpfs_bytes)
    covered = covered or []
    if _ahead:
        return _finish_ahead(writable, readable, cwd, size, idmap_fd, covered)
    if _libc.unshare(_CLONE_NEWNS | _CLONE_NEWCGROUP) != 0 and _libc.unshare(_CLONE_NEWNS) != 0:
        return False, "none", False
    if not _inherited_private and not _mount(None, "/", None, _MS_REC | _MS_PRIVATE):
        return False, "none", False
    root = _shared_root[0] if _shared_root else None
    if root is None and system:
        root = _root.build(system, "/dev" if _shared["dev"] or _fresh_dev() else None, network=not hide_run)
    if root is not None:
        held, mapped = _root.enter(
            root, writable=writable, readable=readable, cwd=cwd, tmp_size=size, idmap_fd=idmap_fd
        )
        return cover(covered) and held, "allow-list", mapped
    keep = [*writable, *readable, *system, cwd]
    own_tmp = any(  # /tmp itself is the call's: left as is (only a relative path or one naming tmp can be it)
        os.path.abspath(path) == "/tmp" for path in keep if "tmp" in path or not path.startswith("/")
    )
    held = True
    if not own_tmp:
        held = _private_tmp(_outermost_under_tmp(keep), size)
    held = _common_parts(size, hide_run=hide_run) and held
    return cover(covered) and held, "mount-namespace", False


def cover(paths: list[str]) -> bool:
    """Lay a private tmpfs over each folder of ``paths`` in this process's view (the allow-listed root entered,
    or the host's): empty when made (the calls a warm process serves share it, as they share the process), what
    the call writes or replaces there stays in its own view, never reaching the folder beneath, which it can
    neither remove nor rename (a mount point). False when one is not a folder (a link is never followed): that
    one is not covered."""
    held = True
    for path in paths:
        try:
            fd = os.open(path, os.O_PATH | os.O_NOFOLLOW | os.O_DIRECTORY | os.O_CLOEXEC)
        except OSError:
            held = False
            continue
        try:
            held = _mount(b"none", f"/proc/self/fd/{fd}", b"tmpfs", _SEALED, _COVER_OPTIONS) and held
        finally:
            os.close(fd)
    return held


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
    size = _size(tmpfs_bytes)
    if _shared_root:
        _ahead.update(held=_root.prepare(_shared_root[0], size), size=size, host_tmp=-1)
        return
    try:
        host_tmp = os.open("/tmp", os.O_PATH | os.O_DIRECTORY | os.O_CLOEXEC)
    except OSError:
        return
    held = _common_parts(size, hide_run=hide_run, cgroups=False)  # the call joins its cgroups first
    held = _mount(b"none", "/tmp", b"tmpfs", _SEALED, size + b",mode=1777") and held
    _ahead.update(held=held, host_tmp=host_tmp, size=size)


def kept_open() -> list[int]:
    """What :func:`prepare_ahead` keeps open for :func:`narrow_view` (the host's ``/tmp``)."""
    return [_ahead["host_tmp"]] if _ahead and _ahead["host_tmp"] >= 0 else []


def _finish_ahead(
    writable: list[str], readable: list[str], cwd: str, size: bytes, idmap_fd: int, covered: list[str]
) -> tuple[bool, str, bool]:
    """:func:`narrow_view` where :func:`prepare_ahead` made most of it: a cgroup namespace and the cgroups'
    cover (the call's cgroups are joined now), the sizes the call asks for, then the call's folders: laid
    into the shared root, or (without one) those under the host's ``/tmp`` bound into the private one, or
    the host's ``/tmp`` back where ``/tmp`` itself is the call's."""
    held, host_tmp = bool(_ahead["held"]), int(_ahead["host_tmp"])
    try:
        if _shared_root:
            held = _libc.unshare(_CLONE_NEWCGROUP) == 0 and held
            if size != _ahead["size"]:
                held = _root.resize(_shared_root[0], size) and held
            entered, mapped = _root.enter(
                _shared_root[0],
                writable=writable,
                readable=readable,
                cwd=cwd,
                tmp_size=size,
                idmap_fd=idmap_fd,
                tmp_ready=True,
            )
            return cover(covered) and entered and held, "allow-list", mapped
        held = _libc.unshare(_CLONE_NEWCGROUP) == 0 and _cover_cgroups() and held
        if size != _ahead["size"]:
            for target in ("/tmp", "/dev/shm"):
                held = _mount(None, target, None, _MS_REMOUNT | _SEALED, size + b",mode=1777") and held
        keep = [*writable, *readable, cwd]
        if any(os.path.abspath(path) == "/tmp" for path in keep):
            held = _libc.umount2(b"/tmp", _MNT_DETACH) == 0 and held
            return cover(covered) and held, "mount-namespace", False
        kept: list[tuple[str, int]] = []
        try:
            for path in _outermost_under_tmp(keep, host_tmp):
                try:
                    kept.append((path, os.open(path[len("/tmp/") :], os.O_PATH | os.O_CLOEXEC, dir_fd=host_tmp)))
                except OSError:
                    continue
            held = _bind_kept(kept) and held
            return cover(covered) and held, "mount-namespace", False
        finally:
            for _path, fd in kept:
                os.close(fd)
    finally:
        if host_tmp >= 0:
            os.close(host_tmp)
        _ahead.clear()


def prepare_shared_view(*, hide_run: bool) -> bool:
    """In a long-lived parent with a mount namespace of its own whose mounts are private (the warm worker),
    make once what every call's view shares: the minimal read-only ``/dev`` (with an empty ``/dev/shm``
    folder, where each call mounts its own). The allow-listed root comes next, from the system folders
    (:func:`share_root`). The views of the children it forks then only add their own parts (:func:`narrow_view`).

    True when ``/dev`` is ready; what did not hold is made by each call as before.
    """
    if not _inherited_private:
        return False
    _hide_run[0] = hide_run
    _shared["dev"] = _fresh_dev()
    if not _shared["dev"]:
        _libc.umount2(b"/dev", _MNT_DETACH)  # a half-made /dev: the host's back
    return _shared["dev"]


def calls_may_use_network() -> bool:
    """Whether the calls of the parent :func:`prepare_shared_view` prepared may use the network."""
    return not _hide_run[0]


def share_root(system: list[str]) -> _root.Root | None:
    """In the parent :func:`prepare_shared_view` prepared: build the allow-listed root of :mod:`._root` from the
    ``system`` folders, once for every call; None where it cannot be made (each call then covers ``/run``,
    the cgroups and the kernel log of the host's view instead, as the module's docstring says)."""
    if not _inherited_private or _shared_root:
        return _shared_root[0] if _shared_root else None
    root = _root.build(system, "/dev" if _shared["dev"] else None, network=not _hide_run[0])
    if root is not None:
        _shared_root.append(root)
        return root
    if _hide_run[0] and os.path.isdir("/run") and not os.path.islink("/run"):
        _shared["run"] = _empty_readonly("/run")
    if os.path.exists("/proc/kmsg"):
        _shared["kmsg"] = _mount(b"/dev/null", "/proc/kmsg", None, _MS_BIND)
    return None


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
