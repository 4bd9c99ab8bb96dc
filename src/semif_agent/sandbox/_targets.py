"""What a pool's call runs: a module-level function of this package, named (:func:`target_name`), and the
modules every worker imports at start (:func:`preload_everywhere`)."""

from __future__ import annotations

import re
import sys
from collections.abc import Callable
from typing import Any

from .channel import Channel
from .errors import CallTargetError

PRELOAD: dict[str, None] = {}
"""Modules every pool's workers import at start (see :func:`preload_everywhere`)."""
_TARGET = re.compile(r"semif_agent(\.[A-Za-z_]\w*)+:[A-Za-z_]\w*")

CallTarget = Callable[[dict[str, Any], Channel], object]
"""What a call runs: ``function(payload, channel)``, a module-level function of this package."""


def target_name(target: CallTarget) -> str:
    """``"semif_agent.module:function"``, what the worker's child imports and calls, for ``target``.

    Raises :class:`~.errors.CallTargetError` unless ``target`` is a
    module-level function of this package (what the child can import by name).
    """
    module = getattr(target, "__module__", None) or ""
    name = getattr(target, "__qualname__", None) or ""
    found = getattr(sys.modules.get(module), name, None) if "." not in name else None
    text = f"{module}:{name}"
    if found is not target or not _TARGET.fullmatch(text):
        raise CallTargetError(f"a call target is a module-level function of semif_agent, not {target!r}")
    return text


def preload_everywhere(target: CallTarget) -> None:
    """Have every pool's workers import ``target``'s module at start, so calls into it start warm.

    For the targets of the layers above, registered when their module is
    imported; each adds to the cost of every call's fork: keep it to what
    most calls use.
    """
    PRELOAD[target_name(target).split(":")[0]] = None
