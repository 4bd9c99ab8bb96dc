"""Resolve a caller-supplied relative path inside a root folder, or refuse it uniformly.

Every way out (``..``, an absolute or drive path, ``~``, a symlink pointing
outside, percent-encoded ``%2e%2e`` or ``%2f``, a NUL byte) raises the same
:class:`SkillPathError` with the same message, so a refusal reveals nothing
about the host's files or layout.
"""

from __future__ import annotations

import os
from pathlib import Path
from urllib.parse import unquote

from .errors import SkillPathError

OUTSIDE_SKILL = "path is not inside the skill"
OUTSIDE_WORKSPACE = "path is not inside the workspace"


def _looks_like_escape(text: str) -> bool:
    if "\x00" in text:
        return True
    normalized = text.replace("\\", "/")
    if normalized.startswith(("/", "~")) or (len(normalized) > 1 and normalized[1] == ":"):
        return True
    return ".." in normalized.split("/")


def resolve_inside(root: str | os.PathLike[str], relative: str, *, message: str = OUTSIDE_SKILL) -> Path:
    """The real path of ``relative`` under ``root``; raises :class:`SkillPathError` when it leaves it.

    The result may not exist yet; symlinks along it are followed and must stay
    under ``root``. The empty path and ``.`` name ``root`` itself.
    """
    if not isinstance(relative, str):
        raise SkillPathError(message)
    decoded = relative
    for _ in range(3):
        if _looks_like_escape(decoded):
            raise SkillPathError(message)
        if "%" not in decoded:
            break
        decoded = unquote(decoded)
    else:
        if _looks_like_escape(decoded):
            raise SkillPathError(message)
    base = os.path.realpath(root)
    target = os.path.realpath(os.path.join(base, relative.replace("\\", "/")))
    if target != base and not target.startswith(base.rstrip(os.sep) + os.sep):
        raise SkillPathError(message)
    return Path(target)


def relative_inside(root: str | os.PathLike[str], path: str | os.PathLike[str]) -> str | None:
    """``path`` (absolute) as a POSIX path relative to ``root`` when it lies inside it, else None."""
    base = os.path.realpath(root)
    target = os.path.realpath(path)
    if target == base or not target.startswith(base.rstrip(os.sep) + os.sep):
        return None
    return Path(os.path.relpath(target, base)).as_posix()
