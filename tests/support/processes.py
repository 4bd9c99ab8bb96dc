"""Find a confined process on the host from what it says of itself.

A confined call mounts a ``/proc`` of its own PID namespace: the number it reads there is not the host's.
It says :data:`SELF` instead (its number there and its PID namespace), and :func:`host_pid` finds it.
"""

from __future__ import annotations

import os

SELF = 'os.readlink("/proc/self") + " " + os.readlink("/proc/self/ns/pid")'
"""Python text a confined process evaluates (with ``os`` imported) to say who it is."""


def host_pid(said: str) -> int | None:
    """The host's number of the live process that said ``said`` (:data:`SELF`); None when none lives."""
    number, namespace = said.split(" ", 1)
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            if os.readlink(f"/proc/{entry}/ns/pid") != namespace:
                continue
            with open(f"/proc/{entry}/status", encoding="ascii") as handle:
                numbers = next(line for line in handle if line.startswith("NSpid:")).split()[1:]
        except (OSError, StopIteration):
            continue
        if numbers and numbers[-1] == number:
            return int(entry)
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
