"""Kill a confined run's process and its process group (standard library only).

The host (:mod:`.sandbox`, :mod:`.worker`), the script launcher and the warm
worker all kill this way; the launcher and the worker load this module
without the package.
"""

from __future__ import annotations

import _signal  # the C module: 'signal' would pull in enum, a few ms per script start
import os


def kill_group(pid: int) -> None:
    """SIGKILL ``pid`` and the process group it leads; a process already gone, or not ours, is no error."""
    for kill in (os.kill, os.killpg):
        try:
            kill(pid, _signal.SIGKILL)
        except OSError:
            pass
