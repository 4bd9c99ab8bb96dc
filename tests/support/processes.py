"""Find a confined process on the host from what it says of itself.

A confined call mounts a ``/proc`` of its own PID namespace: the number it reads there is not the host's,
and a namespace's own number is reused once it is gone. So it names itself instead: :data:`SELF` gives
the process a random name (its ``comm``, which the host's ``/proc`` shows too) and says it, and
:func:`host_pid` finds the live process of that name.
"""

from __future__ import annotations

import os

SELF = '__import__("ctypes").CDLL(None).prctl(15, (name := os.urandom(7).hex()).encode()) * 0 or name'
"""Python text a confined process evaluates (with ``os`` imported) to name itself and say the name."""


def host_pid(said: str) -> int | None:
    """The host's number of the live process named ``said`` (by :data:`SELF`); None when none lives."""
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            with open(f"/proc/{entry}/comm", encoding="ascii", errors="replace") as handle:
                if handle.read().strip() == said.strip():
                    return int(entry)
        except OSError:
            continue
    return None


def pid_namespaces(pids: set[int]) -> set[str]:
    """The PID namespaces of the live ``pids`` (as ``/proc/<pid>/ns/pid`` names them)."""
    found = set()
    for pid in pids:
        try:
            found.add(os.readlink(f"/proc/{pid}/ns/pid"))
        except OSError:
            continue
    return found
