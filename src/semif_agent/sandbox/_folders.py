"""The private folders of a warm worker's calls: :class:`CallFolders`.

Each call gets a folder of its own under the worker's calls folder (its ``TMPDIR``, writable, bound into
its private ``/tmp``); once the call has ended the worker empties it and gives it to a later call. A
folder is touched only when nothing of its call can run any more: every process of the call reaped
(the init of its PID namespace: the kernel ended the rest first), gone from its cgroup, or the one warm
process left stopped and seen alone (:mod:`._warm_check`). A call that ran with neither a PID namespace
nor a cgroup has its folder emptied once the worker finds no orphan of it left.

What a hostile call leaves there (a chain of folders thousands deep, a link swapped for a folder) is
the emptying's to deal with (:func:`._call.empty_folder`); whatever it answers or raises, the worker
goes on: a folder not emptied is never given to another call. Standard library only; the worker
imports it at start.
"""

from __future__ import annotations

import os
from collections.abc import Callable


class CallFolders:
    """The calls' private folders of one worker: those free (emptied), and those waiting for their call's
    processes to be gone."""

    def __init__(self, calls_folder: str, empty_folder: Callable[[str], bool]) -> None:
        """Folders under ``calls_folder``, emptied with ``empty_folder`` (True when it left the folder empty)."""
        self.calls_folder, self.empty_folder = calls_folder, empty_folder
        self.free: list[str] = []
        self.made = 0
        self.waiting: list[tuple[str, str | None]] = []  # (folder, the cgroup of its call's processes, or None)

    def take(self) -> str:
        """A folder for a call: one emptied before, else a new one. Raises ``OSError`` when none can be made."""
        if self.free:
            return self.free.pop()
        self.made += 1
        path = os.path.join(self.calls_folder, f"{os.getpid()}-{self.made}")
        os.mkdir(path, 0o700)
        return path

    def give_back(self, folder: str) -> None:
        """A folder no call wrote to (its call never started): free again."""
        self.free.append(folder)

    def empty(self, folder: str) -> bool:
        """Empty ``folder`` now (nothing of its call runs: see the module's documentation) and free it; False
        (and it is never used again) when it is not left empty, whatever the reason."""
        try:
            emptied = bool(self.empty_folder(folder))
        except Exception:  # noqa: BLE001 - a hostile tree (too deep, too large, changed) ends only that folder
            emptied = False
        if emptied:
            self.free.append(folder)
        return emptied

    def empty_later(self, folder: str, cgroup: str | None) -> None:
        """Empty ``folder`` once its call's processes are gone: the cgroup ``cgroup`` empty, or (None) no
        orphan of the worker's left (:meth:`empty_waiting`)."""
        self.waiting.append((folder, cgroup))

    def empty_waiting(self, members: Callable[[str], list[int]], orphans_left: bool) -> None:
        """Empty the waiting folders whose call has no process left: its cgroup has no ``members``, or
        (without a cgroup) no orphan is ``orphans_left``."""
        still = []
        for folder, cgroup in self.waiting:
            gone = not members(cgroup) if cgroup is not None else not orphans_left
            if gone:
                self.empty(folder)
            else:
                still.append((folder, cgroup))
        self.waiting = still
