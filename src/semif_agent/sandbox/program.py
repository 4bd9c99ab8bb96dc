"""The call target that runs a whole program in a warm worker's child: :func:`run_program`.

What ``python SCRIPT ARG...`` (or ``sh SCRIPT``, or the executable itself) would do, without
starting an interpreter: the call's child (already confined, in its folder and environment, see
:mod:`._call`) runs a ``.py`` file as ``__main__`` (``sys.argv`` and ``sys.path[0]`` as Python
sets them), and replaces itself with ``/bin/sh`` for a ``.sh`` file or with any other executable.
Landlock, the seccomp filter, the limits, the namespaces and the cgroup hold across ``exec``.
A Python traceback shows the program's frames only; its exit status is the call's.
"""

from __future__ import annotations

import os
import sys
import types
from typing import Any

from . import _code_cache

_CANNOT_RUN = 126  # what a shell answers for a file it cannot execute


def run_program(payload: dict[str, Any], channel: object) -> None:
    """Run ``payload["program"]`` with ``payload["argv"]``: never returns for a program that is exec'd."""
    program, argv = str(payload["program"]), [str(arg) for arg in payload["argv"]]
    if program.endswith(".py"):
        _run_python(program, argv)
        return
    if program.endswith(".sh"):
        _exec("/bin/sh", ["sh", program, *argv], program)
    elif os.access(program, os.X_OK):
        _exec(program, [program, *argv], program)
    sys.stderr.write(f"cannot run {os.path.basename(program)}: not a .py or .sh file, and not executable\n")
    raise SystemExit(_CANNOT_RUN)


def _run_python(script: str, argv: list[str]) -> None:
    """Run ``script`` as module ``__main__``, with the globals :func:`runpy.run_path` gives it.

    Compiled here (:mod:`._code_cache`: once per version in a warm process) and run here: :mod:`runpy`
    looks for a zip archive and a cached file first, which in a freshly forked child costs a
    millisecond and some 300 pages copied on write.
    """
    sys.argv = [script, *argv]
    sys.path.insert(0, os.path.dirname(script))
    try:
        code = _code_cache.code_for(script)
        main = types.ModuleType("__main__")
        main.__dict__.update(__file__=script, __cached__=None, __loader__=None, __package__="", __spec__=None)
        sys.modules["__main__"] = main
        exec(code, main.__dict__)  # the skill's own program
    except (SystemExit, MemoryError):
        raise
    except BaseException as exc:  # noqa: BLE001 - printed as python would, then the exit status 1
        import traceback

        tb = exc.__traceback__
        while tb is not None and tb.tb_frame.f_globals.get("__name__") == __name__:
            tb = tb.tb_next
        traceback.print_exception(type(exc), exc, tb)
        raise SystemExit(1) from None


def _exec(path: str, args: list[str], program: str) -> None:
    """Replace this process with ``path``; returns only when the kernel refused it."""
    for stream in (sys.stdout, sys.stderr):
        stream.flush()
    try:
        os.execv(path, args)
    except OSError as exc:
        sys.stderr.write(f"cannot run {os.path.basename(program)}: {exc.strerror}\n")
        raise SystemExit(_CANNOT_RUN) from None
