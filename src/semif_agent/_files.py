"""Files handled by the host without trusting what a skill left: :func:`replace_file` (in one step),
:func:`open_regular` (never through a link, never a FIFO or device), :func:`copy_tree` (only files, folders and
links that stay inside, from directory descriptors); standard library only, so the kernel may import it."""

from __future__ import annotations

import contextlib
import fnmatch
import os
import shutil
import stat
import tempfile
from pathlib import Path
from typing import BinaryIO

from ._beneath import open_folder_beneath, open_regular_at, open_root, walk


def replace_file(path: str | os.PathLike[str], data: str | bytes, *, fsync: bool = False) -> None:
    """Write ``data`` (text as UTF-8) beside ``path``, then rename it over ``path``.

    Readers see the old file or the new one, never part of either; a failure
    leaves the old file and no temporary one, and raises. The new file keeps
    the permissions of the one it replaces; a file that did not exist is made
    readable by its owner only. ``fsync`` flushes it to disk before the rename.
    """
    target = Path(path)
    fd, temporary = tempfile.mkstemp(dir=target.parent, prefix=f".{target.name}.", suffix=".tmp")
    try:
        with os.fdopen(fd, "wb") as handle:
            with contextlib.suppress(FileNotFoundError):
                os.fchmod(handle.fileno(), stat.S_IMODE(os.stat(target).st_mode))
            handle.write(data.encode("utf-8") if isinstance(data, str) else data)
            if fsync:
                handle.flush()
                os.fsync(handle.fileno())
        os.replace(temporary, target)
    except BaseException:
        with contextlib.suppress(FileNotFoundError):
            os.unlink(temporary)
        raise


def open_regular(path: str | os.PathLike[str]) -> BinaryIO | None:
    """``path`` opened for reading when it is a regular file (never through a link), else None.

    Opened without blocking (a FIFO never hangs the caller) and checked on the
    open descriptor, so a file swapped for a device or a link after a check is
    refused all the same.
    """
    try:
        fd = os.open(path, os.O_RDONLY | getattr(os, "O_NOFOLLOW", 0) | getattr(os, "O_NONBLOCK", 0))
    except OSError:
        return None
    handle = os.fdopen(fd, "rb")
    try:
        regular = stat.S_ISREG(os.fstat(fd).st_mode)
    except OSError:
        regular = False
    if not regular:
        handle.close()
        return None
    return handle


def open_regular_beneath(root: str | os.PathLike[str], relative: str) -> BinaryIO | None:
    """The regular file ``relative`` below the folder ``root`` opened for reading, from ``root``'s descriptor (never
    through a link, nor out of ``root``, never a FIFO or device), else None."""
    try:
        root_fd = open_root(root)
    except OSError:
        return None
    try:
        fd = open_regular_at(root_fd, relative)
    finally:
        os.close(root_fd)
    return None if fd is None else os.fdopen(fd, "rb")


def copy_tree(source: Path, dest: Path, *, skip: tuple[str, ...] = ()) -> None:
    """Copy the folder ``source`` into ``dest`` from directory descriptors (:mod:`._beneath`): regular files (with
    their times and modes), folders (with their modes), and links whose target stays below the link's folder (relative, no ``..``;
    others are left out, as are FIFOs, sockets and device nodes, and names matching ``skip``, glob patterns).

    Nothing is read through a link, and a folder swapped for one during the copy
    is not entered. Raises :class:`~._beneath.TreeTooLarge` past the walk's caps.
    """
    dest.mkdir(parents=True, exist_ok=True)
    modes: list[tuple[str, int]] = []  # each folder's permissions, set once its contents are in
    source_fd = open_root(source)
    try:
        dest_fd = open_root(dest)
        try:
            for folder in walk(source_fd):
                folder.folders[:] = [name for name in folder.folders if not _skipped(name, skip)]
                modes.append((folder.path, stat.S_IMODE(os.fstat(folder.fd).st_mode)))
                into = open_folder_beneath(dest_fd, folder.path)
                try:
                    for name in folder.folders:
                        with contextlib.suppress(FileExistsError):
                            os.mkdir(name, 0o700, dir_fd=into)
                    for entry in folder.others:
                        if not _skipped(entry.name, skip):
                            _copy_entry(folder.fd, entry.name, into)
                finally:
                    os.close(into)
            for path, mode in reversed(modes):
                into = open_folder_beneath(dest_fd, path)
                try:
                    os.fchmod(into, mode)
                finally:
                    os.close(into)
        finally:
            os.close(dest_fd)
    finally:
        os.close(source_fd)


def _skipped(name: str, patterns: tuple[str, ...]) -> bool:
    return any(fnmatch.fnmatch(name, pattern) for pattern in patterns)


def _copy_entry(source_fd: int, name: str, dest_fd: int) -> None:
    """Copy the entry ``name`` of the folder ``source_fd`` into ``dest_fd`` when it is a regular file (as opened) or a
    link that stays below its folder; anything else is left out."""
    with contextlib.suppress(OSError):
        target = os.readlink(name, dir_fd=source_fd)
        parts = target.split("/")
        if not target.startswith("/") and ".." not in parts:
            with contextlib.suppress(FileExistsError):
                os.symlink(target, name, dir_fd=dest_fd)
        return
    fd = open_regular_at(source_fd, name)
    if fd is None:
        return
    with os.fdopen(fd, "rb") as handle:
        status = os.fstat(fd)
        flags = os.O_WRONLY | os.O_CREAT | os.O_TRUNC | getattr(os, "O_NOFOLLOW", 0) | getattr(os, "O_CLOEXEC", 0)
        with os.fdopen(os.open(name, flags, 0o600, dir_fd=dest_fd), "wb") as out:
            shutil.copyfileobj(handle, out)
            out.flush()
            os.fchmod(out.fileno(), stat.S_IMODE(status.st_mode))
            os.utime(out.fileno(), ns=(status.st_atime_ns, status.st_mtime_ns))
