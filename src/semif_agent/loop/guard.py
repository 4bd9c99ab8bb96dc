"""Keep skill bodies from writing outside the data dirs or starting processes.

While a body runs, an audit hook (:pep:`578`) checks every file open for
writing, every remove, rename, mkdir and SQLite connection, and every attempt
to start a process, against the run's write roots. A refused operation raises
:class:`~semif_agent.errors.WriteRefused` (also a ``PermissionError``) inside
the body. The hook is installed once per process and is inert outside a
guarded block, which is scoped with a context variable, so concurrent runs and
the host's own code are unaffected.

This is a guard against mistakes and careless generated code, not a sandbox
against hostile code: threads a body starts itself, and C extensions, are not
watched.
"""

from __future__ import annotations

import contextlib
import contextvars
import os
import sys
from collections.abc import Iterator
from pathlib import Path

from ..errors import WriteRefused
from ..skills import check_write, real_roots

_roots: contextvars.ContextVar[tuple[tuple[Path, ...], tuple[str, ...], str] | None] = contextvars.ContextVar(
    "semif_write_roots", default=None
)
_installed = False
_WRITE_FLAGS = os.O_WRONLY | os.O_RDWR | os.O_CREAT | os.O_TRUNC | os.O_APPEND
_PATH_EVENTS = {  # event -> indexes of path arguments written to
    "os.remove": (0,),
    "os.rmdir": (0,),
    "os.mkdir": (0,),
    "os.rename": (0, 1),
    "os.truncate": (0,),
    "os.symlink": (1,),
    "os.link": (1,),
    "os.chmod": (0,),
    "shutil.rmtree": (0,),
    "shutil.copyfile": (1,),
    "shutil.move": (1,),
}
_PROCESS_EVENTS = frozenset(
    {"subprocess.Popen", "os.system", "os.exec", "os.posix_spawn", "os.spawn", "os.fork", "os.forkpty", "pty.spawn"}
)


@contextlib.contextmanager
def guarded(roots: tuple[Path, ...], skill: str) -> Iterator[None]:
    """Within this block (and tasks or threads started with its context), enforce ``roots``."""
    _install()
    token = _roots.set((roots, real_roots(roots), skill))
    try:
        yield
    finally:
        _roots.reset(token)


def _install() -> None:
    global _installed
    if not _installed:
        sys.addaudithook(_audit)
        _installed = True


def _audit(event: str, args: tuple) -> None:
    state = _roots.get()
    if state is None:
        return
    roots, resolved, skill = state
    if event == "open":
        path, mode, flags = (args + (None, None, None))[:3]
        if _is_write(mode, flags):
            _check(path, roots, resolved, skill)
    elif event == "sqlite3.connect":
        database = args[0] if args else None
        if database not in (None, ":memory:", b":memory:", ""):
            _check(database, roots, resolved, skill)
    elif event in _PATH_EVENTS:
        for index in _PATH_EVENTS[event]:
            if index < len(args):
                _check(args[index], roots, resolved, skill)
    elif event in _PROCESS_EVENTS:
        raise WriteRefused(f"skill {skill!r} may not start processes ({event})")


def _is_write(mode: object, flags: object) -> bool:
    if isinstance(mode, str):
        return any(c in mode for c in "wax+")
    return isinstance(flags, int) and bool(flags & _WRITE_FLAGS)


def _check(path: object, roots: tuple[Path, ...], resolved: tuple[str, ...], skill: str) -> None:
    if isinstance(path, int) or path is None:
        return  # an already-open descriptor
    if isinstance(path, bytes):
        path = os.fsdecode(path)
    _roots_state = _roots.set(None)  # resolving paths must not re-enter the hook
    try:
        check_write(str(path), roots, skill=skill, resolved_roots=resolved)
    finally:
        _roots.reset(_roots_state)


@contextlib.contextmanager
def unguarded() -> Iterator[None]:
    """Lift the guard for the host's own work done on a body's behalf (e.g. an engine call)."""
    token = _roots.set(None)
    try:
        yield
    finally:
        _roots.reset(token)
