"""Python source parsed into an AST one thread at a time (:func:`parse_python`); standard library only.

CPython 3.11 keeps the depth count of its AST builder in state shared by every thread of the
interpreter: when a parse pauses midway (the garbage collector runs a finalizer, another thread
takes over) and a second thread parses meanwhile, the first fails with ``SystemError: AST
constructor recursion depth mismatch``. Skill bodies and scripts are checked from many threads at
once (runs in a pool, agents side by side), so every parse here holds one lock.
"""

from __future__ import annotations

import ast
import threading

__all__ = ["parse_python"]

_ONE_AT_A_TIME = threading.RLock()  # re-entrant: a finalizer that parses inside a parse must not deadlock


def parse_python(source: str | bytes, filename: str = "<unknown>") -> ast.Module:
    """``ast.parse(source, filename)``, never at the same time as another parse through this function."""
    with _ONE_AT_A_TIME:
        return ast.parse(source, filename=filename)
