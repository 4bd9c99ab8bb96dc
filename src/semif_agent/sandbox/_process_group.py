"""Kill a confined run's process and its process group (standard library only).

The host (:mod:`.process`, :mod:`.pool`), the script launcher and the warm
worker all kill this way; the launcher and the worker load this module
without the package.
"""

from __future__ import annotations

import os

TYPE_CHECKING = False  # typing's own costs an import per script start
if TYPE_CHECKING:  # typeshed has no stub for the C module; 'signal' has its functions and constants, typed
    import signal as _signal
else:
    import _signal  # the C module: 'signal' would pull in enum, a few ms per script start


def kill_group(pid: int) -> None:
    """SIGKILL ``pid`` and the process group it leads; a process already gone, or not ours, is no error."""
    for kill in (os.kill, os.killpg):
        try:
            kill(pid, _signal.SIGKILL)
        except OSError:
            pass
