"""One confined call in the warm worker: its child process's steps.

:func:`run_child` is what a call's forked child does, in order: die with the
worker, leave the worker's process group (when no PID namespace holds it),
take the host's network back (a call allowed it) or keep none, close what it
inherited, join the call's ``pids`` cgroup, point stdout and stderr at the
worker's pipes, take the call's folder and environment, confine itself
(:mod:`._confine`), say what held, then import the target and call it
(:func:`run_target`). Standard library only, apart from the catalog's own
sandbox modules; the worker imports it at start.
"""

from __future__ import annotations

import importlib
import os
import signal
import sys
from typing import Any

from . import _cgroup, _confine, _isolation
from .channel import Channel

WARM_LATER = frozenset({"asyncio"})
"""Heavy modules the worker imports once a call has needed them, so later calls find them warm."""
_HERE = os.path.dirname(os.path.abspath(__file__))
_FD_CEILING = 1 << 20  # above any descriptor: closerange stops at the process's own limit


def run_child(request: dict[str, Any], fds: tuple[int, int, int, int], held: dict[str, str], *,
              cgroup: str | None, host_netns: int) -> None:
    """Set up the forked child of a call and run it; never returns (``os._exit`` with its status).

    ``fds``: the channel's two ends (to the worker, from it), then stdout's and stderr's pipes.
    """
    code = 1
    try:
        _isolation.die_with_parent()
        signal.set_wakeup_fd(-1)
        signal.signal(signal.SIGCHLD, signal.SIG_DFL)
        if held["processes"] != "pid-namespace":
            os.setpgid(0, 0)
            _isolation.become_subreaper()
        spec = request["confine"]
        if held["network"] != "namespace" and host_netns >= 0 and not _isolation.join_network(host_netns):
            held["network"] = "namespace"  # could not go back: the call has no network
        for fd, target in ((fds[2], 1), (fds[3], 2)):
            os.dup2(fd, target)
        close_inherited(keep={fds[0], fds[1], *(fd for fd, _dir in _confine._preopened.values())})
        if cgroup is not None and _cgroup.join(cgroup):
            spec["process_limit_held"] = True
            held["process_limit"] = "cgroup"
        null = os.open(os.devnull, os.O_RDONLY)
        os.dup2(null, 0)
        os.close(null)
        os.chdir(request["cwd"])
        os.environ.clear()
        os.environ.update(request["env"])
        channel = Channel(fds[0], fds[1])
        held.update(_confine.confine(spec))
        channel.report("C", held)
        code = run_target(request, channel)
    except BaseException:  # noqa: BLE001 - the child must always exit through os._exit
        import traceback

        traceback.print_exc()
    finally:
        for stream in (sys.stdout, sys.stderr):
            try:
                stream.flush()
            except Exception:  # noqa: BLE001
                pass
        os._exit(code)


def run_target(request: dict[str, Any], channel: Channel) -> int:
    """Import the call's target, call it with the payload and the channel; the exit status."""
    had = set(sys.modules)
    try:
        module_name, function_name = request["target"].split(":")
        function = getattr(importlib.import_module(module_name), function_name)
        value = function(request["payload"], channel)
        if value is not None:
            channel.send_value(value)
        return 0
    except SystemExit as exc:
        if exc.code is None or isinstance(exc.code, int):
            return exc.code or 0
        sys.stderr.write(f"{exc.code}\n")
        return 1
    except MemoryError:
        channel.report("E", "memory")
        sys.stderr.write("MemoryError: the call ran out of its memory allowance\n")
        return 1
    except BaseException as exc:  # noqa: BLE001 - reported as the call's failure
        import traceback

        channel.report("E", "exception")
        tb = exc.__traceback__
        while tb is not None and _is_machinery(tb.tb_frame.f_code.co_filename):
            tb = tb.tb_next
        traceback.print_exception(type(exc), exc, tb)
        return 1
    finally:
        warm = sorted(WARM_LATER & (set(sys.modules) - had))
        if warm:
            channel.report("W", warm)


def _is_machinery(filename: str) -> bool:
    """A frame of the call's machinery (the catalog's private modules), not of the function called."""
    return os.path.dirname(filename) == _HERE and os.path.basename(filename).startswith("_")


def close_inherited(keep: set[int]) -> None:
    """Close every descriptor a forked child inherited but ``keep`` and the standard three."""
    start = 3
    for fd in sorted(keep):
        if fd > start:
            os.closerange(start, fd)
        start = max(start, fd + 1)
    os.closerange(start, _FD_CEILING)


def remove_tree(path: str) -> None:
    """Remove a call's folder and what the call left in it (symbolic links are not followed)."""
    try:
        os.rmdir(path)
        return
    except OSError:
        pass
    for folder, subfolders, files in os.walk(path, topdown=False):
        for name in files:
            try:
                os.unlink(os.path.join(folder, name))
            except OSError:
                pass
        for name in subfolders:
            target = os.path.join(folder, name)
            try:
                os.unlink(target) if os.path.islink(target) else os.rmdir(target)
            except OSError:
                pass
    try:
        os.rmdir(path)
    except OSError:
        pass
