"""Files handled by the host without trusting what a skill left: :func:`replace_file` (in one step),
:func:`open_regular` (never through a link, never a FIFO or device), :func:`copy_tree` (only files, folders and
links as links); standard library only, so the kernel may import it."""

from __future__ import annotations

import contextlib
import os
import shutil
import stat
import tempfile
from pathlib import Path
from typing import BinaryIO


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


def is_file_or_folder(path: str | os.PathLike[str]) -> bool:
    """Whether ``path`` itself (not what a link points to) is a regular file or a folder."""
    try:
        mode = os.lstat(path).st_mode
    except OSError:
        return False
    return stat.S_ISREG(mode) or stat.S_ISDIR(mode)


def copy_tree(source: Path, dest: Path, *, skip: tuple[str, ...] = ()) -> None:
    """Copy the folder ``source`` into ``dest``: regular files (with their times and modes), folders, and links as
    links (never read through); FIFOs, sockets and device nodes are left out, as are names matching ``skip``
    (glob patterns)."""
    skipped = shutil.ignore_patterns(*skip) if skip else None

    def ignore(folder: str, names: list[str]) -> set[str]:
        left_out = set(skipped(folder, names)) if skipped is not None else set()
        for name in names:
            full = os.path.join(folder, name)
            if not (os.path.islink(full) or is_file_or_folder(full)):
                left_out.add(name)
        return left_out

    shutil.copytree(source, dest, symlinks=True, ignore=ignore, copy_function=_copy_regular, dirs_exist_ok=True)


def _copy_regular(source: str, dest: str) -> str:
    """Copy ``source`` to ``dest`` when it is still a regular file when opened (a copy function for copytree)."""
    handle = open_regular(source)
    if handle is None:
        return dest
    flags = os.O_WRONLY | os.O_CREAT | os.O_TRUNC | getattr(os, "O_NOFOLLOW", 0)
    with handle, os.fdopen(os.open(dest, flags, 0o600), "wb") as out:
        shutil.copyfileobj(handle, out)
    shutil.copystat(source, dest, follow_symlinks=False)
    return dest
