"""The root a confined process sees: an allow-list of the host's folders, bound into a fresh tmpfs (Linux).

Standard library only (the script launcher loads it without the package). :func:`build` makes, in a
mount namespace whose mounts are private, a read-only tmpfs at :data:`AT` holding only:

- the system folders a program needs (``/usr``, the ``/lib`` and ``/bin`` folders or their links), the
  Python installation, the folders on ``sys.path`` and this package, each bound read-only at its own path
  (the folders above it made empty, as needed);
- of ``/etc``, the few files programs read (:func:`.limits.etc_allowed`), each bound read-only, its
  links kept as links; nothing else, and no file other users may not read;
- the minimal ``/dev`` (:mod:`._mounts`), an empty ``/proc`` and ``/tmp`` to mount on, and an empty folder
  for every other top-level folder of the host (``/root``, ``/home``...): nothing in them, nothing to
  ``stat``.

A long-lived parent (the warm worker) builds it once; each call's child, in a mount namespace of its own
(:func:`enter`), lays a private tmpfs over each top-level folder its own folders lie under (the system
folders bound there are bound again), binds its folders (the skill's, its write dirs, its data) at their
paths, mounts its own ``/tmp``, ``/dev/shm`` and ``/proc`` (its PID namespace), then makes the tmpfs its
root (``pivot_root``) and lets the host's go: no path leads back to it.

Where the children run as :data:`CALL_UID` (:func:`idmap_namespace`), the folders a call writes (its
write dirs, its private folder) are bound idmapped: root's files there look like that user's to it, and
what it writes is root's on disk. What it only reads is bound as it is: it reads it as any other user
would (a root-only file there stays out of its reach).
"""

from __future__ import annotations

import ctypes
import os
import stat

AT = "/run"
"""Where the new root is built in the builder's mount namespace (covering the host's ``/run`` there only)."""
CALL_UID = 65533
"""The user (and group) a call runs as where its parent is root: no file of the host is its own."""
_CALL_ENTRIES = {
    "/etc/passwd": f"semif-call:x:{CALL_UID}:{CALL_UID}:confined call:/nonexistent:/usr/sbin/nologin\n",
    "/etc/group": f"semif-call:x:{CALL_UID}:\n",
}
"""What the root's copies of these files add to the host's: the call's user has a name, as programs expect."""
_MS_RDONLY, _MS_NOSUID, _MS_NODEV, _MS_NOEXEC = 1, 2, 4, 8
_MS_REMOUNT, _MS_BIND, _MS_REC = 32, 4096, 16384
_SEALED = _MS_NOSUID | _MS_NODEV | _MS_NOEXEC
_MNT_DETACH = 2
_CLONE_NEWUSER = 0x10000000
_SYS = {"pivot_root": (155, 41), "open_tree": (428, 428), "move_mount": (429, 429), "mount_setattr": (442, 442)}
_COLUMN = {"x86_64": 0, "amd64": 0, "aarch64": 1, "arm64": 1}.get(os.uname().machine.lower())
_OPEN_TREE_CLONE, _OPEN_TREE_CLOEXEC, _AT_RECURSIVE, _AT_EMPTY_PATH = 1, 0o2000000, 0x8000, 0x1000
_MOVE_MOUNT_F_EMPTY_PATH = 0x4
_MOUNT_ATTR_RDONLY, _MOUNT_ATTR_NOSUID, _MOUNT_ATTR_NODEV, _MOUNT_ATTR_IDMAP = 0x1, 0x2, 0x4, 0x100000
_AT_FDCWD = -100
_LAYER_SIZE = b"size=1m,mode=0755"

_libc = ctypes.CDLL(None, use_errno=True)

ETC_ALLOWED = (
    "ld.so.cache",
    "localtime",
    "timezone",
    "passwd",
    "group",
    "nsswitch.conf",
    "mime.types",
    "ssl/certs",
    "ssl/openssl.cnf",
    "ca-certificates",
    "alternatives",
    "os-release",
    "locale.alias",
    "protocols",
    "services",
)
"""The entries of ``/etc`` a call may read: what the C library, Python and common tools read at start."""
ETC_WITH_NETWORK = ("hosts", "resolv.conf", "host.conf", "gai.conf")
"""Those only a call allowed the network may read (name resolution)."""
RUN_WITH_NETWORK = ("/run/systemd/resolve", "/run/resolvconf")
"""Where ``/etc/resolv.conf`` may lead: bound for a call allowed the network."""


def etc_allowed(*, network: bool) -> list[str]:
    """The paths of :data:`ETC_ALLOWED` (and, with ``network``, :data:`ETC_WITH_NETWORK`) that exist and any
    user may read (a folder: read and enter), the ``python3.*`` folders (Python's site configuration) too."""
    try:
        names = [
            *ETC_ALLOWED,
            *(ETC_WITH_NETWORK if network else ()),
            *(name for name in sorted(os.listdir("/etc")) if name == "python3" or name.startswith("python3.")),
        ]
    except OSError:
        return []
    found = []
    for name in names:
        path = os.path.join("/etc", name)
        try:
            info = os.lstat(path)
        except OSError:
            continue
        others = stat.S_IROTH | (stat.S_IXOTH if stat.S_ISDIR(info.st_mode) else 0)
        if stat.S_ISLNK(info.st_mode) or info.st_mode & others == others:
            found.append(path)
    return found


def system_paths(paths: list[str], *, network: bool) -> list[str]:
    """``paths`` as a root may hold them: ``/etc`` as :func:`etc_allowed` says (whole or in part, only the
    allowed entries), ``/run`` only with ``network``, and no ``/proc``, ``/sys`` or ``/dev`` (made apart)."""
    allowed = etc_allowed(network=network)
    kept = []
    for path in paths:
        path = os.path.normpath(path) if path.startswith("/") else ""
        if not path or any(_inside(path, apart) for apart in ("/proc", "/sys", "/dev")):
            continue
        if _inside(path, "/etc"):
            kept += (
                [entry for entry in allowed if _inside(entry, path) or _inside(path, entry)]
                if path != "/etc"
                else allowed
            )
            continue
        if _inside(path, "/run") and not (network and any(_inside(path, run) for run in RUN_WITH_NETWORK)):
            continue
        kept.append(path)
    return list(dict.fromkeys(kept))


class _MountAttr(ctypes.Structure):
    _fields_ = [
        ("attr_set", ctypes.c_uint64),
        ("attr_clr", ctypes.c_uint64),
        ("propagation", ctypes.c_uint64),
        ("userns_fd", ctypes.c_uint64),
    ]


def _mount(source: bytes | None, target: str, kind: bytes | None, flags: int, data: bytes | None = None) -> bool:
    return _libc.mount(source, os.fsencode(target), kind, ctypes.c_ulong(flags), data) == 0


def _syscall(name: str, *args: object) -> int:
    if _COLUMN is None:
        return -1
    return int(_libc.syscall(ctypes.c_long(_SYS[name][_COLUMN]), *args))


def _inside(path: str, folder: str) -> bool:
    return path == folder or path.startswith(folder.rstrip("/") + "/")


def _top(path: str) -> str:
    return "/" + path.strip("/").split("/", 1)[0]


class Root:
    """A built root: where it is, and what the builder put in it (kept, in order, to lay it again)."""

    def __init__(self, at: str) -> None:
        self.at = at
        self.bound: list[str] = []  # host paths bound read-only at their own path
        self.links: dict[str, str] = {}  # links made, by path: their target

    def inner(self, path: str) -> str:
        """``path`` as the builder sees it inside the root."""
        return self.at + path

    def covering(self, path: str) -> str | None:
        """The bound folder ``path`` lies in (or is), if any."""
        found = [bound for bound in self.bound if _inside(path, bound)]
        return max(found, key=len) if found else None


def build(paths: list[str], devices: str | None, *, network: bool) -> Root | None:
    """Make the root described in the module's docstring at :data:`AT` from ``paths`` (the host's paths to
    bind, as :func:`system_paths` keeps them; missing ones skipped) and ``devices`` (a ``/dev`` to bind, None:
    none); ``network``: the calls may use the network. None when it cannot be made here (no :data:`AT`
    folder, no privilege); nothing of it is left then."""
    if not os.path.isdir(AT) or os.path.islink(AT):
        return None
    opened: list[tuple[str, int]] = []
    previous_mask = os.umask(0o022)
    try:
        for path in sorted(system_paths(paths, network=network)):
            if path == "/" or _inside(AT, path):
                continue
            try:
                opened.append((path, os.open(path, os.O_PATH | os.O_NOFOLLOW | os.O_CLOEXEC)))
            except OSError:
                continue
        device_fd = os.open(devices, os.O_PATH | os.O_CLOEXEC) if devices else -1
        if not _mount(b"none", AT, b"tmpfs", _SEALED & ~_MS_NOEXEC, b"size=1m,mode=0755"):
            return None
        root = Root(AT)
        try:
            _skeleton(root)
            for path, fd in opened:
                if root.covering(path) is None:
                    _place_system(root, path, fd)
            if device_fd >= 0:
                _bind(device_fd, root.inner("/dev"), readonly=True)
        finally:
            if device_fd >= 0:
                os.close(device_fd)
        if not _mount(None, AT, None, _MS_REMOUNT | _MS_RDONLY | (_SEALED & ~_MS_NOEXEC), b"size=1m,mode=0755"):
            _libc.umount2(os.fsencode(AT), _MNT_DETACH)
            return None
        return root
    except OSError:
        _libc.umount2(os.fsencode(AT), _MNT_DETACH)
        return None
    finally:
        os.umask(previous_mask)
        for _path, fd in opened:
            os.close(fd)


def _skeleton(root: Root) -> None:
    """An empty folder in the root for each top-level folder of the host (links kept as links), and for
    ``/dev``, ``/proc`` and ``/tmp``."""
    for name in sorted({*os.listdir("/"), "dev", "proc", "tmp"}):
        path = "/" + name
        if os.path.islink(path):
            root.links[path] = os.readlink(path)
            os.symlink(root.links[path], root.inner(path))
        elif name in ("dev", "proc", "tmp") or os.path.isdir(path):
            os.mkdir(root.inner(path), 0o755)


def _place_system(root: Root, path: str, fd: int) -> None:
    """Bind the host's ``path`` (open at ``fd``) read-only at its place, or copy it when it is a link."""
    parent = os.path.dirname(path)
    if any(_inside(path, link) for link in root.links):
        return  # under a link of the root (/lib -> usr/lib): the link's target brings it
    _make_folders(root.inner(parent))
    target = root.inner(path)
    info = os.fstat(fd)
    if stat.S_ISLNK(info.st_mode):
        root.links[path] = os.readlink(path)
        os.symlink(root.links[path], target)
        return
    if path in _CALL_ENTRIES and stat.S_ISREG(info.st_mode):
        with open(f"/proc/self/fd/{fd}", "rb") as host, open(target, "xb") as copy:
            text = host.read(1 << 20)
            copy.write(text + (b"" if text.endswith(b"\n") or not text else b"\n") + _CALL_ENTRIES[path].encode())
        os.chmod(target, 0o644)
        return
    _make_mountpoint(target, folder=stat.S_ISDIR(info.st_mode))
    if _bind(fd, target, readonly=True):
        root.bound.append(path)


def _make_folders(path: str) -> None:
    os.makedirs(path, mode=0o755, exist_ok=True)


def _make_mountpoint(target: str, *, folder: bool) -> None:
    if os.path.lexists(target):
        return
    if folder:
        _make_folders(target)
    else:
        _make_folders(os.path.dirname(target))
        os.close(os.open(target, os.O_CREAT | os.O_WRONLY | os.O_CLOEXEC, 0o644))


def _bind(fd: int, target: str, *, readonly: bool) -> bool:
    """Bind what ``fd`` is open at (and the mounts under it) at ``target``; read-only when ``readonly``."""
    if not _mount(f"/proc/self/fd/{fd}".encode(), target, None, _MS_BIND | _MS_REC):
        return False
    if not readonly:
        return True
    return _mount(None, target, None, _MS_REMOUNT | _MS_BIND | _MS_RDONLY | _MS_NOSUID | _MS_NODEV)


def idmap_namespace(uid: int) -> int:
    """A user namespace mapping its root to ``uid`` (user and group), open; -1 where it cannot be made.

    Made by a short-lived child of this process (root in the initial namespace), which exits once it is open.
    """
    ready_r, ready_w = os.pipe()
    hold_r, hold_w = os.pipe()
    pid = os.fork()
    if pid == 0:
        try:
            os.close(ready_r)
            os.close(hold_w)
            # its number as this /proc counts (this process may be in a PID namespace the /proc is not of)
            number = os.readlink("/proc/self").encode()
            os.write(ready_w, number if _libc.unshare(_CLONE_NEWUSER) == 0 else b"-")
            os.read(hold_r, 1)
        finally:
            os._exit(0)
    os.close(ready_w)
    os.close(hold_r)
    fd = -1
    try:
        seen_as = os.read(ready_r, 32).decode()
        if seen_as.isdigit():
            for name in ("uid_map", "gid_map"):
                with open(f"/proc/{seen_as}/{name}", "w", encoding="ascii") as handle:
                    handle.write(f"0 {uid} 1\n")
            fd = os.open(f"/proc/{seen_as}/ns/user", os.O_RDONLY | os.O_CLOEXEC)
    except OSError:
        fd = -1
    finally:
        os.close(ready_r)
        os.close(hold_w)
        os.waitpid(pid, 0)
    return fd


def enter(
    root: Root,
    *,
    writable: list[str],
    readable: list[str],
    cwd: str,
    tmp_size: bytes,
    idmap_fd: int = -1,
    tmp_ready: bool = False,
) -> tuple[bool, bool]:
    """In this process's own mount namespace (a copy of the builder's): lay the call's folders into ``root``
    and make it this process's root, as the module's docstring says; (whether it holds, whether the
    folders it writes are idmapped to :data:`CALL_UID`, so that it must run as that user).

    ``writable`` and ``readable``: the call's own folders and files (missing ones skipped); ``cwd`` is made
    in the root when no folder brings it; ``tmp_size``: the private ``/tmp``'s and ``/dev/shm``'s mount
    options; ``tmp_ready``: :func:`prepare` made them already.
    """
    previous_mask = os.umask(0o022)
    try:
        return _enter(root, writable, readable, cwd, tmp_size, idmap_fd, tmp_ready=tmp_ready)
    finally:
        os.umask(previous_mask)


def _enter(
    root: Root, writable: list[str], readable: list[str], cwd: str, tmp_size: bytes, idmap_fd: int, *, tmp_ready: bool
) -> tuple[bool, bool]:
    wanted = _call_paths(root, writable, readable)
    layered: set[str] = set()
    if not tmp_ready:
        prepare(root, tmp_size)
    layered.add("/tmp")
    mapped = idmap_fd >= 0 and any(rw for _path, rw in wanted)
    trees: list[tuple[str, bool, int]] = []
    try:
        for path, rw in wanted:
            fd = _open_tree(path, readonly=not rw, idmap_fd=idmap_fd if mapped and rw else -1)
            if fd < 0 and mapped and rw:  # one folder cannot be idmapped: none are, and the call stays root
                for _path, _rw, opened in trees:
                    if opened >= 0:
                        os.close(opened)
                trees.clear()
                return _enter(root, writable, readable, cwd, tmp_size, -1, tmp_ready=True)
            trees.append((path, rw, fd))
        held = True
        for path, rw, fd in trees:
            top = _top(path)
            if root.covering(path) is None and top not in layered:
                held = _layer(root, top, _LAYER_SIZE) and held
                layered.add(top)
            held = _place_call(root.inner(path), path, fd, readonly=not rw) and held
        if root.covering(cwd) is None and not any(_inside(cwd, path) for path, _rw in wanted):
            if _top(cwd) not in layered and cwd != "/":
                held = _layer(root, _top(cwd), _LAYER_SIZE) and held
            _make_folders(root.inner(cwd))
    finally:
        for _path, _rw, fd in trees:
            if fd >= 0:
                os.close(fd)
    return _pivot(root.at) and held, mapped


def _place_call(target: str, path: str, tree: int, *, readonly: bool) -> bool:
    """Put the call's ``path`` at ``target``: the detached copy ``tree`` moved there, or (-1: the kernel has no
    detached copies, before Linux 5.12) a bind of the path, read-only when ``readonly``."""
    if tree >= 0:
        _make_mountpoint(target, folder=stat.S_ISDIR(os.fstat(tree).st_mode))
        return _syscall("move_mount", tree, b"", _AT_FDCWD, os.fsencode(target), _MOVE_MOUNT_F_EMPTY_PATH) == 0
    try:
        fd = os.open(path, os.O_PATH | os.O_CLOEXEC)
    except OSError:
        return False
    try:
        _make_mountpoint(target, folder=stat.S_ISDIR(os.fstat(fd).st_mode))
        return _bind(fd, target, readonly=readonly)
    finally:
        os.close(fd)


def prepare(root: Root, tmp_size: bytes) -> bool:
    """The part of :func:`enter` no call's folders change: a private ``/tmp`` (the system folders under the
    host's bound again), ``/dev/shm`` and ``/proc`` (this process's PID namespace). True when all of it holds."""
    held = _layer(root, "/tmp", tmp_size + b",mode=1777")
    held = _mount(b"none", root.inner("/dev/shm"), b"tmpfs", _SEALED, tmp_size + b",mode=1777") and held
    proc = root.inner("/proc")
    return (_mount(b"proc", proc, b"proc", _SEALED) or _mount(b"/proc", proc, None, _MS_BIND | _MS_REC)) and held


def resize(root: Root, tmp_size: bytes) -> bool:
    """Give the private ``/tmp`` and ``/dev/shm`` :func:`prepare` made the size ``tmp_size``."""
    held = True
    for target in ("/tmp", "/dev/shm"):
        held = _mount(None, root.inner(target), None, _MS_REMOUNT | _SEALED, tmp_size + b",mode=1777") and held
    return held


def _call_paths(root: Root, writable: list[str], readable: list[str]) -> list[tuple[str, bool]]:
    """The call's paths to bind, outermost first, as (path, writable): those a system folder already shows
    read-only are left out, and so are those inside another of the call's (it brings them)."""
    wanted: dict[str, bool] = {}
    for path, rw in [*((p, True) for p in writable), *((p, False) for p in readable)]:
        path = os.path.normpath(path) if path.startswith("/") else ""
        if path and _top(path) in root.links:  # /lib/x, where /lib is a link: placed where it leads
            path = os.path.realpath(path)
        if not path or path == "/" or _inside(path, "/dev") or _inside(path, "/proc") or not os.path.lexists(path):
            continue
        if not rw and root.covering(path) is not None:
            continue
        wanted[path] = wanted.get(path, False) or rw
    found: list[tuple[str, bool]] = []
    for path in sorted(wanted):
        if not any(_inside(path, outer) and (rw or not wanted[path]) for outer, rw in found):
            found.append((path, wanted[path]))
    return found


def _open_tree(path: str, *, readonly: bool, idmap_fd: int) -> int:
    """A detached copy of the mounts at ``path`` (read-only when ``readonly``, idmapped by ``idmap_fd`` when
    given), open; -1 when it cannot be made so."""
    flags = _OPEN_TREE_CLONE | _OPEN_TREE_CLOEXEC | _AT_RECURSIVE
    fd = _syscall("open_tree", _AT_FDCWD, os.fsencode(path), flags)
    if fd < 0:
        return -1
    attr = _MountAttr(attr_set=_MOUNT_ATTR_NOSUID | _MOUNT_ATTR_NODEV | (_MOUNT_ATTR_RDONLY if readonly else 0))
    if idmap_fd >= 0:
        attr.attr_set |= _MOUNT_ATTR_IDMAP
        attr.userns_fd = idmap_fd
    flags = _AT_EMPTY_PATH | _AT_RECURSIVE
    if _syscall("mount_setattr", fd, b"", flags, ctypes.byref(attr), ctypes.c_size_t(ctypes.sizeof(attr))) != 0:
        os.close(fd)
        return -1
    return fd


def _layer(root: Root, top: str, options: bytes) -> bool:
    """Cover the root's ``top`` folder with a private tmpfs of ``options``: the system folders bound under
    it, and its links, made again in it."""
    under = [path for path in root.bound if _inside(path, top) and path != top]
    kept: list[tuple[str, int]] = []
    try:
        for path in under:
            try:
                kept.append((path, os.open(root.inner(path), os.O_PATH | os.O_CLOEXEC)))
            except OSError:
                continue
        if not _mount(b"none", root.inner(top), b"tmpfs", _SEALED & ~_MS_NOEXEC, options):
            return False
        held = True
        for path, fd in kept:
            _make_mountpoint(root.inner(path), folder=stat.S_ISDIR(os.fstat(fd).st_mode))
            held = _mount(f"/proc/self/fd/{fd}".encode(), root.inner(path), None, _MS_BIND | _MS_REC) and held
        for path, target in root.links.items():
            if _inside(path, top) and path != top:
                _make_folders(os.path.dirname(root.inner(path)))
                os.symlink(target, root.inner(path))
        return held
    finally:
        for _path, fd in kept:
            os.close(fd)


def _pivot(at: str) -> bool:
    """Make ``at`` this process's root, and let the old one go (detached: nothing of it stays reachable)."""
    try:
        os.chdir(at)
    except OSError:
        return False
    if _syscall("pivot_root", b".", b".") != 0:
        return False
    held = _libc.umount2(b".", _MNT_DETACH) == 0
    os.chdir("/")
    return held
