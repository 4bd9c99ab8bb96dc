"""Python files compiled in the call's own process, once per version: :func:`code_for`.

A call target that runs a file (a skill script's ``entrypoint``, a whole program) gets its code here.
It is read and compiled in the call's child, never in the warm worker: the worker holds no skill's
source or compiled code, and the children start from a zygote that holds none either
(:mod:`._zygote`). A process kept warm between calls of one setup (:mod:`._resident`) keeps what it
compiled, so its later calls of an unchanged file skip compiling it.

Standard library only.
"""

from __future__ import annotations

import io
import os
from types import CodeType

MAX_BYTES = 256 * 1024
"""Larger files are compiled on each call, not kept."""
_MAX_FILES = 16
_compiled: dict[str, tuple[list[int], CodeType]] = {}


def prepare(path: str) -> list[int] | None:
    """The version of ``path`` (size, modification time, inode, device) that :func:`code_for` keeps its
    code by; None when it cannot be read. Nothing is compiled."""
    try:
        info = os.stat(path)
    except (OSError, ValueError):
        return None
    return [info.st_size, info.st_mtime_ns, info.st_ino, info.st_dev]


def code_for(path: str) -> CodeType:
    """The code of ``path`` as it is now: compiled by this process once per version of the file."""
    version = prepare(path)
    cached = _compiled.get(path)
    if cached is not None and version is not None and cached[0] == version:
        return cached[1]
    with io.open_code(path) as handle:
        source = handle.read()
    code = compile(source, path, "exec", dont_inherit=True)
    if version is not None and len(source) <= MAX_BYTES:
        if len(_compiled) >= _MAX_FILES:
            _compiled.clear()
        _compiled[path] = (version, code)
    return code
