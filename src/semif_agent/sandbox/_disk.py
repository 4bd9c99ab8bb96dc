"""How much a run has written to its writable folders (standard library only).

RLIMIT_FSIZE caps one file; this caps the total. While a run goes, its
supervisor (the warm worker, or the script launcher) calls
:func:`changed_bytes` every so often and kills the run past its allowance.
What counts: every file and folder under the run's writable folders whose
status changed since the run started (``st_ctime``, which a process cannot
set back), at its allocated size and at least one 4 KiB block. A file that
existed before and was appended to counts whole; writes to a folder shared
with runs going on at the same time count for each of them. A file the run
deleted but still holds open counts too (:func:`open_unlinked_bytes`, read
from ``/proc/<pid>/fd`` of the run's processes), at its allocated size.
"""

from __future__ import annotations

import os
import stat
import time

TYPE_CHECKING = False
if TYPE_CHECKING or __package__:
    from .._beneath import open_beneath, open_root
else:  # loaded by the script launcher from this folder, without the package (it puts the package's folder on the path)
    from _beneath import open_beneath, open_root

BLOCK = 4096
FIRST_CHECK_SEC = 0.1
"""The first look, and the shortest time between two: a run shorter than this costs nothing."""
MAX_SHARE = 0.1
"""The share of the supervisor's time looking may take: slower walks are spaced out."""


def run_start_ns() -> int:
    """The wall-clock start of a run as file change times see it (they lag by up to a clock tick)."""
    return time.time_ns() - 20_000_000


def folder_entries(folder: str) -> list[tuple[int, int]]:
    """``(change time ns, bytes)`` of every file and folder under ``folder``, each inode once.

    Each folder is opened from ``folder``'s descriptor, never through a link (:mod:`.._beneath`): a folder the
    run swapped for a link while it was walked is not entered, so nothing outside is looked at.
    """
    entries: list[tuple[int, int]] = []
    seen: set[tuple[int, int]] = set()
    try:
        root = open_root(folder)
    except OSError:
        return entries
    try:
        stack = [""]
        while stack:
            relative = stack.pop()
            try:
                fd = open_beneath(root, relative, os.O_RDONLY | os.O_DIRECTORY) if relative else root
            except OSError:
                continue
            try:
                _list_folder(fd, relative, stack, entries, seen)
            finally:
                if fd != root:
                    os.close(fd)
    finally:
        os.close(root)
    return entries


def _list_folder(
    fd: int, relative: str, stack: list[str], entries: list[tuple[int, int]], seen: set[tuple[int, int]]
) -> None:
    try:
        scanner = os.scandir(fd)
    except OSError:
        return
    with scanner:
        for entry in scanner:
            try:
                info = entry.stat(follow_symlinks=False)
                if stat.S_ISDIR(info.st_mode):
                    stack.append(f"{relative}/{entry.name}" if relative else entry.name)
            except OSError:
                continue
            key = (info.st_dev, info.st_ino)
            if key in seen:
                continue
            seen.add(key)
            entries.append((info.st_ctime_ns, max(info.st_blocks * 512, BLOCK)))


def changed_bytes(folders: list[str], since_ns: int, cache: dict[str, list[tuple[int, int]]] | None = None) -> int:
    """Bytes under ``folders`` changed at or after ``since_ns`` (wall clock); ``cache`` shares walks between runs."""
    total = 0
    for folder in folders:
        entries = cache.get(folder) if cache is not None else None
        if entries is None:
            entries = folder_entries(folder)
            if cache is not None:
                cache[folder] = entries
        total += sum(size for changed, size in entries if changed >= since_ns)
    return total


def next_check(walk_seconds: float) -> float:
    """When to look again: at least :data:`FIRST_CHECK_SEC` from now, longer when looking is slow."""
    return time.monotonic() + max(FIRST_CHECK_SEC, walk_seconds / MAX_SHARE)


def watched_folders(writable: list[str]) -> list[str]:
    """The folders among a run's writable paths (``/dev/null`` and other files are not watched)."""
    return [path for path in writable if os.path.isdir(path)]


def folder_devices(folders: list[str]) -> set[int]:
    """The file systems ``folders`` are on (their ``st_dev``)."""
    devices: set[int] = set()
    for folder in folders:
        try:
            devices.add(os.stat(folder).st_dev)
        except OSError:
            continue
    return devices


def open_unlinked_bytes(pids: list[int], devices: set[int]) -> int:
    """Bytes allocated to regular files on ``devices`` that the processes ``pids`` hold open after
    they were deleted (no name left for the folder walk to find), each file once."""
    total = 0
    seen: set[tuple[int, int]] = set()
    for pid in pids:
        try:
            names = os.listdir(f"/proc/{pid}/fd")
        except OSError:
            continue
        for name in names:
            try:
                info = os.stat(f"/proc/{pid}/fd/{name}")
            except OSError:
                continue
            key = (info.st_dev, info.st_ino)
            if info.st_nlink == 0 and stat.S_ISREG(info.st_mode) and info.st_dev in devices and key not in seen:
                seen.add(key)
                total += info.st_blocks * 512
    return total
