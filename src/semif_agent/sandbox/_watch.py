"""What the warm worker looks at while a call runs, besides its timeout: its memory cap and its disk allowance.

Standard library only; the worker imports it at start.
"""

from __future__ import annotations

import time
from typing import TYPE_CHECKING

from . import _cgroup, _disk

if TYPE_CHECKING:
    from ._call import Call


def out_of_memory(call: Call, slots: _cgroup.Slots | None) -> bool:
    """True (and the call marked so) when the kernel killed one of ``call``'s processes at the call's memory cap."""
    if call.reported or call.cgroup is None or slots is None or not slots.out_of_memory(call.cgroup):
        return False
    call.reported = "memory"
    call.notes.append("killed: the call and what it started ran out of their memory allowance")
    return True


def over_limits(call: Call, pid: int, slots: _cgroup.Slots | None, walks: dict[str, list[tuple[int, int]]]) -> bool:
    """True (and the call marked so) when ``call`` must be killed now; sets when to look again.

    Disk: what changed under its writable folders since it started, plus the files its processes
    (those of its cgroup, else its first process ``pid``) hold open after deleting them. ``walks`` shares folder walks between calls.
    """
    call.next_check = float("inf")
    if out_of_memory(call, slots):
        return True
    if call.disk_cap is not None and not call.reported:
        started = time.monotonic()
        if call.watched is None:
            call.watched = _disk.watched_folders(call.writable)
        written = _disk.changed_bytes(call.watched, call.started_ns, walks)
        processes = _cgroup.members(call.cgroup) if call.cgroup is not None else [pid]
        written += _disk.open_unlinked_bytes(processes, _disk.folder_devices(call.watched))
        call.next_check = _disk.next_check(time.monotonic() - started)
        if written > call.disk_cap:
            call.reported = "disk"
            call.notes.append(
                f"killed: wrote {written // 1048576} MB, over its {call.disk_cap // 1048576} MB allowance"
            )
            return True
    if call.next_check == float("inf") and not call.reported and slots is not None and call.cgroup in slots.memory:
        call.next_check = _disk.next_check(0.0)  # the memory cap is looked at as often
    return False
