"""Run one skill script in a confined process. The host spawns this file; never import it.

Usage: ``python -I _launcher.py PACKAGE_PARENT SPEC_JSON SCRIPT [ARG...]``

It applies the limits and confinement of ``SPEC_JSON`` (see :mod:`._confine`)
to itself, then runs ``SCRIPT``: a ``.py`` file as ``__main__`` in this same
interpreter (as ``python SCRIPT`` would), a ``.sh`` file with ``/bin/sh``, any
other executable directly. What went wrong beyond an exit status (running out
of memory) is written to the spec's ``status_file``.
"""

from __future__ import annotations

import json
import os
import runpy
import sys
import traceback


def _report(spec: dict, error_type: str) -> None:
    path = spec.get("status_file")
    if not path:
        return
    try:
        with open(path, "w", encoding="utf-8") as handle:
            json.dump({"error_type": error_type}, handle)
    except OSError:
        pass


def _run_python(script: str, spec: dict) -> None:
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
        tb = exc.__traceback__
        own_files = {os.path.abspath(__file__), os.path.abspath(runpy.__file__)}
        while tb is not None and os.path.abspath(tb.tb_frame.f_code.co_filename) in own_files:
            tb = tb.tb_next
        traceback.print_exception(type(exc), exc, tb)
        sys.exit(1)


def main() -> None:
    package_parent, spec_json, script, *args = sys.argv[1:]
    sys.path.insert(0, package_parent)
    from semif_agent.catalog import _confine

    spec = json.loads(spec_json)
    _confine.confine(spec)
    sys.path.remove(package_parent)
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
