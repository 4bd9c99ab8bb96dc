"""Hostile payloads shared by the tests of scripts and of code-skill bodies."""

from __future__ import annotations


def forking_payload(children: int, megabytes: int) -> str:
    """Python lines that fork ``children`` processes (through libc, past any audit hook), each touching
    ``megabytes`` of memory and then sleeping, and wait for them: a memory cap per process lets each through."""
    return f"""
import ctypes, os, time
fork = ctypes.CDLL(None).fork
children = []
for _ in range({children}):
    pid = fork()
    if pid == 0:
        block = bytearray({megabytes} * 1024 * 1024)
        for at in range(0, len(block), 4096):
            block[at] = 1
        time.sleep(20)
        os._exit(0)
    children.append(pid)
for pid in children:
    os.waitpid(pid, 0)
"""
