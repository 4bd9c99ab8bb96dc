"""Run one skill script in a confined process. The host spawns this file; never import it.

Usage: ``python -I _launcher.py PACKAGE_PARENT SPEC SCRIPT [ARG...]``

``SPEC`` is the confinement (see :mod:`._confine`) as hex-encoded
:mod:`marshal` data, which needs no import to read. The launcher applies it
to itself, then runs ``SCRIPT``: a ``.py`` file as ``__main__`` in this same
interpreter (as ``python SCRIPT`` would), a ``.sh`` file with ``/bin/sh``, any
other executable directly. What went wrong beyond an exit status (running out
of memory) is written as one word to the spec's ``status_file``. It imports
as little as it can: every millisecond here is paid by every script run.
"""

from __future__ import annotations

import marshal
import os
import sys


def _report(spec: dict, error_type: str) -> None:
    path = spec.get("status_file")
    if path:
        try:
            with open(path, "w", encoding="utf-8") as handle:
                handle.write(error_type)
        except OSError:
            pass


def _run_python(script: str, spec: dict) -> None:
    import runpy

    try:
        runpy.run_path(script, run_name="__main__")
    except SystemExit:
        raise
    except MemoryError:
        _report(spec, "memory")
        sys.stderr.write("MemoryError: the script ran out of its memory allowance\n")
        sys.stderr.flush()
        os._exit(1)
    except BaseException as exc:  # noqa: BLE001 - print it as python would, then fail
        import traceback

        tb = exc.__traceback__
        own_files = {os.path.abspath(__file__), os.path.abspath(runpy.__file__)}
        while tb is not None and os.path.abspath(tb.tb_frame.f_code.co_filename) in own_files:
            tb = tb.tb_next
        traceback.print_exception(type(exc), exc, tb)
        sys.exit(1)


def main() -> None:
    package_parent, spec_hex, script, *args = sys.argv[1:]
    here = os.path.dirname(os.path.abspath(__file__))
    sys.path.insert(0, here)
    import _confine  # this folder's module, without importing the package

    sys.path.remove(here)
    spec = marshal.loads(bytes.fromhex(spec_hex))
    _confine.confine(spec)
    sys.path.append(package_parent)
    if script.endswith(".py"):
        sys.argv = [script, *args]
        sys.path.insert(0, os.path.dirname(script))
        _run_python(script, spec)
        return
    if script.endswith(".sh"):
        os.execv("/bin/sh", ["sh", script, *args])
    if os.access(script, os.X_OK):
        os.execv(script, [script, *args])
    sys.stderr.write(f"cannot run {os.path.basename(script)}: not a .py or .sh file, and not executable\n")
    sys.exit(126)


if __name__ == "__main__":
    main()
