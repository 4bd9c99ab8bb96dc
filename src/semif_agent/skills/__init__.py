"""The code-skill contract: what a skill body receives and what it returns, and helpers bodies may use.

A body defines ``predict(ctx, request) -> Prediction`` and
``act(ctx, request, prediction) -> ActionResult``, importing these names from
here. Kernel code: standard library only, so bodies load in milliseconds.

Helpers: :mod:`.dates` reads dates, times and ranges as people say them
("next Tuesday at 10:30", "this week"), against a ``now`` that
:func:`current_time` takes from the request or the ``[config] now`` setting.
"""

from __future__ import annotations

import contextlib
import os
import secrets
import time
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ..engine.base import Engine
from ..engine.decisions import DecisionRequest, DecisionResult, Option
from ..errors import UserError, WriteRefused
from .dates import TimeRange, When, current_time, read_range, read_when

try:  # POSIX advisory locks; elsewhere ``locked`` only checks the path.
    import fcntl
except ImportError:  # pragma: no cover
    fcntl = None  # type: ignore[assignment]  # no fcntl on this platform: locked() only checks the path

__all__ = [
    "Request",
    "ActionContext",
    "Prediction",
    "ActionResult",
    "DecisionRequest",
    "DecisionResult",
    "Option",
    # dates and times as people say them (see semif_agent.skills.dates)
    "current_time",
    "read_when",
    "read_range",
    "When",
    "TimeRange",
]


def new_request_id() -> str:
    """A sortable, unique id: ``YYYYmmdd-HHMMSS-xxxxxx``."""
    return time.strftime("%Y%m%d-%H%M%S") + "-" + secrets.token_hex(3)


@dataclass(frozen=True)
class Request:
    """What the user asked, with a stable ``id`` (used e.g. to name files).

    ``text`` must be a string that is valid Unicode (text read from the
    command line with undecodable bytes is refused with a :class:`UserError`).
    """

    text: str
    id: str = field(default_factory=new_request_id)
    meta: dict[str, Any] = field(default_factory=dict)

    def __post_init__(self) -> None:
        check_request(self.text)


REQUEST_BYTES = 64 * 1024
"""The largest request taken, in bytes of UTF-8 (64 KiB): a longer one is refused before anything runs."""


def check_request(text: object) -> None:
    """Refuse ``text`` as a request unless it is valid text (:func:`check_text`) of at most :data:`REQUEST_BYTES`."""
    check_text(text)
    size = len(str(text).encode("utf-8"))
    if size > REQUEST_BYTES:
        raise UserError(
            f"the request is {size:,} bytes, over the cap of {REQUEST_BYTES:,} bytes (64 KiB) on a request: "
            "put long text in a file and ask about the file"
        )


def check_text(text: object, what: str = "the request") -> None:
    """Refuse ``text`` unless it is a ``str`` that UTF-8 can encode (no undecodable bytes, no lone surrogates)."""
    if not isinstance(text, str):
        raise UserError(f"{what} must be text, not {type(text).__name__}")
    try:
        text.encode("utf-8")
    except UnicodeEncodeError as exc:
        char = ord(text[exc.start])
        shown = f"the byte 0x{char - 0xDC00:02x}" if 0xDC80 <= char <= 0xDCFF else f"a lone surrogate U+{char:04X}"
        raise UserError(
            f"{what} is not valid UTF-8 text: character {exc.start + 1} is {shown} "
            "(pass it in UTF-8, e.g. with a UTF-8 locale)"
        ) from None


@dataclass
class Prediction:
    """``predict``'s forecast, and the ``(DecisionRequest, DecisionResult)`` pairs it made."""

    text: str
    decisions: list[tuple[DecisionRequest, DecisionResult]] = field(default_factory=list)


@dataclass
class ActionResult:
    """``act``'s outcome: a human-readable ``action_log`` and the ``new_state``."""

    action_log: str
    new_state: str


BODY_FUNCTIONS = ("predict", "act")


def missing_functions(body: object) -> list[str]:
    """The contract's functions (``predict``, ``act``) that a loaded ``body`` does not define."""
    return [name for name in BODY_FUNCTIONS if not callable(getattr(body, name, None))]


def body_line(exc: BaseException, path: str | os.PathLike[str]) -> int | None:
    """The line of the body at ``path`` where ``exc`` was raised (its deepest frame there), if any."""
    import traceback

    frames = [f for f in traceback.extract_tb(exc.__traceback__) if f.filename == os.fspath(path)]
    return frames[-1].lineno if frames else None


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
    _real_write_roots: tuple[str, ...] | None = field(  # resolved at the first check (a factory: set per context)
        default_factory=lambda: None, init=False, repr=False, compare=False
    )

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
        """``path`` resolved, if it lies under a write root; else :class:`WriteRefused`.

        The write roots are resolved once per context (a run's): a root swapped for a link during the
        run does not move where the run may write."""
        if self._real_write_roots is None:
            self._real_write_roots = real_roots(self.write_roots)
        return check_write(path, self.write_roots, skill=self.skill, resolved_roots=self._real_write_roots)

    def write_atomic(self, path: str | os.PathLike[str], text: str) -> Path:
        """Replace ``path``'s content with ``text`` all at once (a temporary file, then a rename).

        Readers never see a half-written file, and a crash leaves the old one.
        The path is checked like :meth:`check_write`.
        """
        target = self.check_write(path)
        _make_folder(target.parent)
        temporary = self.check_write(target.with_name(f".{target.name}.{secrets.token_hex(4)}.tmp"))
        try:
            temporary.write_text(text, encoding="utf-8")
            os.replace(temporary, target)
        finally:
            if temporary.exists():
                temporary.unlink()
        return target

    @contextlib.contextmanager
    def locked(self, path: str | os.PathLike[str]) -> Iterator[Path]:
        """Hold an exclusive lock on the folder of ``path`` while reading and rewriting it.

        ``with ctx.locked(ctx.data_path("todos", "todos.json")) as path:`` then
        read, change and :meth:`write_atomic` it: every run that locks the same
        folder waits its turn, so none loses another's change. The folder is
        created if missing; ``path`` is checked like :meth:`check_write`.
        """
        target = self.check_write(path)
        _make_folder(target.parent)
        if fcntl is None:  # pragma: no cover - no advisory locks here
            yield target
            return
        fd = os.open(target.parent, os.O_RDONLY | getattr(os, "O_DIRECTORY", 0) | getattr(os, "O_CLOEXEC", 0))
        try:
            fcntl.flock(fd, fcntl.LOCK_EX)
            yield target
        finally:
            os.close(fd)  # closing releases the lock


def _make_folder(folder: Path) -> None:
    if not folder.is_dir():  # most writes go to a folder that is there: no mkdir to check and refuse
        folder.mkdir(parents=True, exist_ok=True)


def real_roots(roots: Iterable[str | os.PathLike[str]]) -> tuple[str, ...]:
    """``roots`` resolved (symlinks followed), as :func:`check_write` compares paths with them."""
    return tuple(os.path.realpath(root) for root in roots)


def check_write(
    path: str | os.PathLike[str],
    roots: tuple[Path, ...],
    *,
    skill: str = "",
    resolved_roots: tuple[str, ...] | None = None,
) -> Path:
    """Resolve ``path`` (following symlinks) and refuse it unless it is under one of ``roots``.

    ``resolved_roots``: :func:`real_roots` of ``roots``, when the caller resolved them already.
    """
    resolved = os.path.realpath(os.path.abspath(os.fspath(path)))
    for real_root in real_roots(roots) if resolved_roots is None else resolved_roots:
        if resolved == real_root or resolved.startswith(
            real_root if real_root.endswith(os.sep) else real_root + os.sep
        ):
            return Path(resolved)
    who = f"skill {skill!r}" if skill else "a skill"
    allowed = ", ".join(str(r) for r in roots) or "none configured"
    raise WriteRefused(f"{who} may not write to {path}: it is outside the data dirs ({allowed})")
