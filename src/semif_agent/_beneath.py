"""Folders a child could have changed, handled by the host from directory descriptors; standard library only.

A skill body, a script or a thread they left behind can rename, swap or link
anything under the folders they write (the write dirs, a call's private
folder). A host that names a path there and lets the kernel resolve it may
be walked out of them by a link planted before, or swapped in between a
check and its use; a host that walks a tree there by recursion may be
stopped by a deep one. So every host operation on such a folder goes
through this module:

- :func:`open_root` opens the folder the host trusts (by its resolved path),
  refusing a link in its last component; everything below is reached from
  its descriptor.
- :func:`open_beneath` opens a relative path below such a descriptor, never
  through a link nor out of it: with ``openat2`` (``RESOLVE_BENEATH |
  RESOLVE_NO_SYMLINKS``) where the kernel has it, else one component at a time
  with ``O_NOFOLLOW``. A link anywhere on the way fails (``ELOOP``), as does a
  ``..`` or an absolute path (``EXDEV``). :func:`open_folder_beneath` does so
  for a folder, making the missing ones when asked; :func:`open_regular_at`
  for a file to read, only once it is known to be a regular one (a FIFO or a
  device node is never opened); :func:`lexists_beneath` says whether anything
  is at a path.
- :func:`replace_at` writes a file whole in a held folder: a temporary file of
  a random name made with ``O_EXCL | O_NOFOLLOW``, its mode set on its
  descriptor, renamed over the target relative to the held folder (a link
  there is replaced, never written through).
- :func:`walk` lists a tree without recursion, each folder opened from its
  parent's descriptor with ``O_NOFOLLOW`` (a folder swapped for a link since
  it was listed is not entered), and stops with :class:`TreeTooLarge` past a
  depth or an entry count. :func:`remove_contents` (and :func:`remove_tree`)
  empties a folder the same way, moving what lies too deep up into the folder
  to empty it from there, and stops past an entry count, leaving the rest.
"""

from __future__ import annotations

import contextlib
import errno
import os
import stat
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:  # collections.abc costs the warm worker, and so every call's child, nothing at run time
    from collections.abc import Iterator

MAX_DEPTH = 64  # folders below a walked folder, at most
MAX_ENTRIES = 200_000  # names listed by one walk, at most

_CLOEXEC = getattr(os, "O_CLOEXEC", 0)
_NOFOLLOW = getattr(os, "O_NOFOLLOW", 0)
_DIRECTORY = getattr(os, "O_DIRECTORY", 0)
_NONBLOCK = getattr(os, "O_NONBLOCK", 0)
_PATH = getattr(os, "O_PATH", 0)
_FOLDER = os.O_RDONLY | _DIRECTORY | _NOFOLLOW | _CLOEXEC

_OPENAT2 = 437  # the same number on every Linux architecture
_RESOLVE_NO_SYMLINKS, _RESOLVE_BENEATH = 0x04, 0x08
_openat2: Any = None  # the libc ``syscall`` function once looked up; False where the kernel lacks openat2


class TreeTooLarge(OSError):
    """A walk passed its depth or entry cap; the message says which, in a line."""

    def __str__(self) -> str:
        return str(self.strerror)


def open_root(path: str | os.PathLike[str]) -> int:
    """A descriptor of the folder ``path`` (resolved by the host), refusing a link or anything else in its place."""
    return os.open(path, _FOLDER)


def open_beneath(dir_fd: int, relative: str, flags: int = os.O_RDONLY, mode: int = 0o600) -> int:
    """Open ``relative`` below the folder ``dir_fd``, never through a link nor out of the folder (``OSError``)."""
    parts = _parts(relative)
    flags |= _NOFOLLOW | _CLOEXEC
    if len(parts) <= 1:  # no folder on the way: O_NOFOLLOW alone holds
        return os.open(parts[0] if parts else ".", flags, mode, dir_fd=dir_fd)
    fd = _by_openat2(dir_fd, "/".join(parts), flags, mode)
    if fd is not None:
        return fd
    folder = dir_fd
    try:
        for part in parts[:-1]:
            opened = os.open(part, _FOLDER, dir_fd=folder)
            if folder != dir_fd:
                os.close(folder)
            folder = opened
        return os.open(parts[-1], flags, mode, dir_fd=folder)
    finally:
        if folder != dir_fd:
            os.close(folder)


def open_folder_beneath(dir_fd: int, relative: str, *, make: bool = False) -> int:
    """A descriptor of the folder ``relative`` below ``dir_fd`` (never through a link); with ``make``, the folders
    missing on the way are made, one at a time from their parent's descriptor."""
    if not make:
        return open_beneath(dir_fd, relative, os.O_RDONLY | _DIRECTORY)
    folder = os.dup(dir_fd)
    try:
        for part in _parts(relative):
            with contextlib.suppress(FileExistsError):
                os.mkdir(part, 0o777, dir_fd=folder)
            opened = os.open(part, _FOLDER, dir_fd=folder)
            os.close(folder)
            folder = opened
    except BaseException:
        os.close(folder)
        raise
    return folder


def open_regular_at(dir_fd: int, relative: str) -> int | None:
    """A descriptor of the regular file ``relative`` below ``dir_fd`` opened for reading, else None: never through a
    link, and a FIFO or device node is never opened at all (looked at through an ``O_PATH`` descriptor first, the
    file opened again from that descriptor once it is known to be a regular one)."""
    if _PATH:
        try:
            located = open_beneath(dir_fd, relative, _PATH)
        except OSError:
            return None
        try:
            if not stat.S_ISREG(os.fstat(located).st_mode):
                return None
            return os.open(f"/proc/self/fd/{located}", os.O_RDONLY | _NONBLOCK | _CLOEXEC)
        except FileNotFoundError:  # no /proc: opened by name below (without blocking), and checked again
            pass
        except OSError:
            return None
        finally:
            os.close(located)
    try:
        fd = open_beneath(dir_fd, relative, os.O_RDONLY | _NONBLOCK)
    except OSError:
        return None
    try:
        if stat.S_ISREG(os.fstat(fd).st_mode):
            return fd
    except OSError:
        pass
    os.close(fd)
    return None


def lexists_beneath(root: str | os.PathLike[str], relative: str) -> bool:
    """Whether anything (a link too) is at ``relative`` below the folder ``root``, looked at from ``root``'s
    descriptor; a link or a file on the way counts as something there (it is not followed)."""
    try:
        root_fd = open_root(root)
    except OSError:
        return False
    try:
        folder = open_folder_beneath(root_fd, os.path.dirname(relative))
    except FileNotFoundError:
        return False
    except OSError:
        return True
    finally:
        os.close(root_fd)
    try:
        os.stat(os.path.basename(relative) or ".", dir_fd=folder, follow_symlinks=False)
        return True
    except FileNotFoundError:
        return False
    except OSError:
        return True
    finally:
        os.close(folder)


def replace_at(dir_fd: int, name: str, data: bytes, mode: int | None = None) -> None:
    """Write ``data`` as the file ``name`` of the folder ``dir_fd`` in one step, with ``mode`` (its permission bits
    only: never set-user-ID) when given, else readable by its owner only.

    The bytes go to a new file of a random name (made with ``O_EXCL``, so a
    planted file or link there fails the write instead of receiving it),
    renamed over ``name``: a link at ``name`` is replaced, never written
    through. A failure leaves no temporary file, and raises.
    """
    if _parts(name) != [name]:
        raise OSError(errno.EINVAL, "not a plain file name", name)
    temporary = f".{name[:64]}.{os.urandom(8).hex()}.tmp"
    fd = os.open(temporary, os.O_WRONLY | os.O_CREAT | os.O_EXCL | _NOFOLLOW | _CLOEXEC, 0o600, dir_fd=dir_fd)
    try:
        with os.fdopen(fd, "wb") as handle:
            handle.write(data)
            if mode is not None:
                os.fchmod(handle.fileno(), stat.S_IMODE(mode) & 0o777)
        os.replace(temporary, name, src_dir_fd=dir_fd, dst_dir_fd=dir_fd)
    except BaseException:
        with contextlib.suppress(OSError):
            os.unlink(temporary, dir_fd=dir_fd)
        raise


class Folder:
    """One folder of a :func:`walk`: its path below the root (``""`` for the root), its descriptor (open until the
    walk moves on), its subfolders' names (remove some to leave them out) and its other entries (files, links,
    FIFOs, sockets, devices: the caller decides; ``entry.stat(follow_symlinks=False)`` works while the walk
    holds ``fd``). A plain class: ``dataclasses`` would bring ``inspect`` into the warm worker, which imports
    this module, and so into every call's child."""

    __slots__ = ("path", "fd", "folders", "others")

    def __init__(self, path: str, fd: int) -> None:
        self.path, self.fd = path, fd
        self.folders: list[str] = []
        self.others: list[os.DirEntry[str]] = []


def walk(root_fd: int, *, max_depth: int = MAX_DEPTH, max_entries: int = MAX_ENTRIES) -> Iterator[Folder]:
    """The folders below ``root_fd``, top-down, each listed in name order; never through a link, without recursion.

    A folder replaced by a link (or anything else) after it was listed is
    left out. Raises :class:`TreeTooLarge` on reaching a folder deeper than
    ``max_depth`` or listing more than ``max_entries`` names.
    """
    held: list[tuple[Folder, int, list[str]]] = []  # the folders being walked: depth, subfolders left (last first)
    current: Folder | None = None  # the folder listed and handed out, not yet held
    seen = 0
    try:
        current, depth = Folder("", os.dup(root_fd)), 0
        while current is not None:
            seen = _list(current, seen, max_entries)
            yield current
            held.append((current, depth, sorted(current.folders, reverse=True)))
            current = None
            while held and current is None:
                parent, depth, left = held[-1]
                if not left:
                    held.pop()
                    os.close(parent.fd)
                    continue
                name = left.pop()
                try:
                    fd = os.open(name, _FOLDER | _NONBLOCK, dir_fd=parent.fd)
                except OSError:  # swapped for a link or a file since it was listed, or gone
                    continue
                if depth + 1 > max_depth:
                    os.close(fd)
                    raise TreeTooLarge(errno.ELOOP, f"folders nested deeper than {max_depth} levels")
                current, depth = Folder(f"{parent.path}/{name}" if parent.path else name, fd), depth + 1
    finally:
        for parent, _, _ in held:
            os.close(parent.fd)
        if current is not None:
            os.close(current.fd)


def _list(folder: Folder, seen: int, max_entries: int) -> int:
    """Fill ``folder``'s names (sorted), counting them on from ``seen``; the new count."""
    with os.scandir(folder.fd) as entries:
        for entry in entries:
            seen += 1
            if seen > max_entries:
                raise TreeTooLarge(errno.EFBIG, f"more than {max_entries} files and folders")
            try:
                is_folder = entry.is_dir(follow_symlinks=False)
            except OSError:
                continue
            if is_folder:
                folder.folders.append(entry.name)
            else:
                folder.others.append(entry)
    folder.folders.sort()
    folder.others.sort(key=lambda entry: entry.name)
    return seen


def remove_contents(root_fd: int, *, max_depth: int = MAX_DEPTH, max_entries: int = MAX_ENTRIES) -> bool:
    """Remove everything in the folder ``root_fd``, never following a link (a link is removed, not its target), without
    recursion; whether the folder is empty after.

    A folder deeper than ``max_depth`` is moved up into the root (renamed
    from its parent's descriptor to the root's) and emptied from there, so a
    chain of any depth is removed holding at most ``max_depth`` descriptors.
    Past ``max_entries`` names it stops and leaves the rest (then False): it
    never raises for what it finds.
    """
    seen = moved = 0
    held: list[tuple[int, str, list[tuple[str, bool]] | None]] = []
    try:
        held.append((os.dup(root_fd), "", None))
        while held:
            fd, name, pending = held[-1]
            if pending is None:
                pending = []
                with os.scandir(fd) as entries:
                    for entry in entries:
                        seen += 1
                        if seen > max_entries:
                            return False
                        try:
                            pending.append((entry.name, entry.is_dir(follow_symlinks=False)))
                        except OSError:
                            pending.append((entry.name, False))
                held[-1] = (fd, name, pending)
            if pending:
                child, is_folder = pending.pop()
                if not is_folder:
                    try:
                        os.unlink(child, dir_fd=fd)
                        continue
                    except IsADirectoryError:  # a folder put in its place since it was listed
                        pass
                    except OSError:
                        continue
                if len(held) > max_depth:  # moved up into the root, to be emptied from there: fds stay bounded
                    moved += 1
                    flat = f".deeper-{moved}-{os.urandom(4).hex()}"
                    try:
                        os.rename(child, flat, src_dir_fd=fd, dst_dir_fd=held[0][0])
                    except OSError:
                        return False
                    held[0][2].append((flat, True))  # type: ignore[union-attr] # the root's names were listed before any descent
                    continue
                try:
                    opened = os.open(child, _FOLDER | _NONBLOCK, dir_fd=fd)
                except OSError:  # a link or file put in its place since it was listed: removed as what it is
                    with contextlib.suppress(OSError):
                        os.unlink(child, dir_fd=fd)
                    continue
                held.append((opened, child, None))
                continue
            held.pop()
            os.close(fd)
            if held:
                with contextlib.suppress(OSError):
                    os.rmdir(name, dir_fd=held[-1][0])
        with os.scandir(root_fd) as entries:
            return next(entries, None) is None
    except OSError:
        return False
    finally:
        for fd, _, _ in held:
            os.close(fd)


def remove_tree(path: str | os.PathLike[str], *, max_entries: int = MAX_ENTRIES) -> bool:
    """Remove the folder ``path`` and everything in it (:func:`remove_contents`, then the folder itself); whether
    it is gone. Never raises: a host's clean-up goes on whatever a child left there."""
    try:
        fd = open_root(path)
    except FileNotFoundError:
        return True
    except OSError:
        return False
    try:
        emptied = remove_contents(fd, max_entries=max_entries)
    finally:
        os.close(fd)
    try:
        os.rmdir(path)
    except FileNotFoundError:
        return True
    except OSError:
        return False
    return emptied


def _parts(relative: str) -> list[str]:
    """The names of a relative path (``.`` and empty ones dropped); ``OSError`` for an absolute one or a ``..``."""
    if relative.startswith("/"):
        raise OSError(errno.EXDEV, "an absolute path where a relative one was expected", relative)
    parts = [part for part in relative.split("/") if part not in ("", ".")]
    if ".." in parts:
        raise OSError(errno.EXDEV, "a path that climbs out of its folder", relative)
    return parts


def _by_openat2(dir_fd: int, relative: str, flags: int, mode: int) -> int | None:
    """``openat2`` beneath ``dir_fd`` with no link followed; None where the kernel (or the platform) lacks it."""
    global _openat2
    if _openat2 is None:
        _openat2 = _load_openat2()
    if _openat2 is False:
        return None
    import ctypes

    how = (ctypes.c_uint64 * 3)(flags, mode if flags & os.O_CREAT else 0, _RESOLVE_BENEATH | _RESOLVE_NO_SYMLINKS)
    fd = _openat2(_OPENAT2, dir_fd, os.fsencode(relative), ctypes.byref(how), ctypes.sizeof(how))
    if fd >= 0:
        return int(fd)
    code = ctypes.get_errno()
    if code in (errno.ENOSYS, errno.EPERM):  # an old kernel, or a filter that refuses it: one name at a time
        _openat2 = False
        return None
    raise OSError(code, os.strerror(code), relative)


def _load_openat2() -> Any:
    import sys

    if not sys.platform.startswith("linux"):
        return False
    try:
        import ctypes

        function = ctypes.CDLL(None, use_errno=True).syscall
    except (ImportError, OSError, AttributeError):
        return False
    function.restype = ctypes.c_long
    function.argtypes = [ctypes.c_long, ctypes.c_int, ctypes.c_char_p, ctypes.c_void_p, ctypes.c_size_t]
    return function
