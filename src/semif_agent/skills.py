"""The code-skill contract: what a skill body receives and what it returns.

A body defines ``predict(ctx, request) -> Prediction`` and
``act(ctx, request, prediction) -> ActionResult``, importing these names from
here. Kernel code: standard library only, so bodies load in milliseconds.
"""

from __future__ import annotations

import os
import secrets
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from .engine.base import Engine
from .engine.decisions import DecisionRequest, DecisionResult, Option
from .errors import WriteRefused

__all__ = [
    "Request",
    "ActionContext",
    "Prediction",
    "ActionResult",
    "DecisionRequest",
    "DecisionResult",
    "Option",
]


def new_request_id() -> str:
    """A sortable, unique id: ``YYYYmmdd-HHMMSS-xxxxxx``."""
    return time.strftime("%Y%m%d-%H%M%S") + "-" + secrets.token_hex(3)


@dataclass(frozen=True)
class Request:
    """What the user asked, with a stable ``id`` (used e.g. to name files)."""

    text: str
    id: str = field(default_factory=new_request_id)
    meta: dict[str, Any] = field(default_factory=dict)


@dataclass
class Prediction:
    """``predict``'s forecast, and the ``(DecisionRequest, DecisionResult)`` pairs it made."""

    text: str
    decisions: list = field(default_factory=list)


@dataclass
class ActionResult:
    """``act``'s outcome: a human-readable ``action_log`` and the ``new_state``."""

    action_log: str
    new_state: str


@dataclass
class ActionContext:
    """What a skill body is handed.

    ``engine`` is the real SemIf engine (budgeted for this run); ``config`` the
    agent config, with every configured path made absolute. ``write_roots`` are
    the directories the skill may write under: :meth:`data_path` and
    :meth:`check_write` refuse anything else.
    """

    engine: Engine
    config: dict[str, Any] = field(default_factory=dict)
    write_roots: tuple[Path, ...] = ()
    skill: str = ""
    run_id: str = ""

    def data_path(self, *parts: str | os.PathLike[str]) -> Path:
        """A path under the data dirs, for writing.

        The first part may name a configured path (``ctx.data_path("drafts",
        "x.txt")`` is ``config["drafts"]/x.txt``); otherwise the parts are taken
        relative to the first write root. A result outside every write root is
        refused with :class:`WriteRefused`.
        """
        if not parts:
            raise WriteRefused("data_path needs at least one path part")
        first, rest = str(parts[0]), parts[1:]
        configured = self.config.get(first)
        if isinstance(configured, str) and first not in ("", ".", ".."):
            base = Path(configured)
        else:
            if not self.write_roots:
                raise WriteRefused("no data dirs are configured for this skill")
            base, rest = self.write_roots[0], parts
        return self.check_write(base.joinpath(*rest))

    def check_write(self, path: str | os.PathLike[str]) -> Path:
        """``path`` resolved, if it lies under a write root; else :class:`WriteRefused`."""
        return check_write(path, self.write_roots, skill=self.skill)

    def write_atomic(self, path: str | os.PathLike[str], text: str) -> Path:
        """Replace ``path``'s content with ``text`` all at once (a temporary file, then a rename).

        Readers never see a half-written file, and a crash leaves the old one.
        The path is checked like :meth:`check_write`.
        """
        target = self.check_write(path)
        target.parent.mkdir(parents=True, exist_ok=True)
        temporary = self.check_write(target.with_name(f".{target.name}.{secrets.token_hex(4)}.tmp"))
        try:
            temporary.write_text(text, encoding="utf-8")
            os.replace(temporary, target)
        finally:
            if temporary.exists():
                temporary.unlink()
        return target


def check_write(path: str | os.PathLike[str], roots: tuple[Path, ...], *, skill: str = "") -> Path:
    """Resolve ``path`` (following symlinks) and refuse it unless it is under one of ``roots``."""
    resolved = Path(os.path.realpath(os.path.abspath(os.fspath(path))))
    for root in roots:
        real_root = Path(os.path.realpath(root))
        if resolved == real_root or real_root in resolved.parents:
            return resolved
    who = f"skill {skill!r}" if skill else "a skill"
    allowed = ", ".join(str(r) for r in roots) or "none configured"
    raise WriteRefused(f"{who} may not write to {path}: it is outside the data dirs ({allowed})")
