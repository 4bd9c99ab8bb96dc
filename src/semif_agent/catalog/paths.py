"""Resolve a caller-supplied relative path inside a root folder, or refuse it uniformly.

Every way out (``..``, an absolute or drive path, ``~``, a symlink pointing
outside, percent-encoded ``%2e%2e`` or ``%2f``, a NUL byte) raises the same
:class:`SkillPathError` with the same message, so a refusal reveals nothing
about the host's files or layout.
"""

from __future__ import annotations

import errno
import os
import sys
from collections.abc import Iterable
from pathlib import Path
from urllib.parse import unquote

from .._beneath import open_folder_beneath, open_regular_at, open_root
from .errors import SkillPathError

OUTSIDE_SKILL = "path is not inside the skill"
OUTSIDE_WORKSPACE = "path is not inside the workspace"
_O_PATH = (os.O_PATH | os.O_CLOEXEC) if sys.platform == "linux" and hasattr(os, "O_PATH") else 0
_DELETED = " (deleted)"  # what /proc shows after the name of a file removed while open


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
    return Path(real_path_inside(root, relative, message=message))


def refuse_escape(relative: object, *, message: str = OUTSIDE_SKILL) -> str:
    """``relative`` when it is text that names no way out of a folder as written (nor once percent-decoded), else
    :class:`SkillPathError` with ``message``."""
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
    return relative


def real_path_inside(root: str | os.PathLike[str], relative: str, *, message: str = OUTSIDE_SKILL) -> str:
    """:func:`resolve_inside`'s answer as a string (no :class:`~pathlib.Path` built), with the same checks."""
    refuse_escape(relative, message=message)
    base = real_path(root)
    target = real_path(os.path.join(base, relative.replace("\\", "/")))
    if target != base and not target.startswith(base.rstrip(os.sep) + os.sep):
        raise SkillPathError(message)
    return target


def real_path(path: str | os.PathLike[str]) -> str:
    """:func:`os.path.realpath` of ``path``, asked of the kernel in three system calls where it can answer.

    An existing path is opened without being read (``O_PATH``) and its descriptor's link in
    ``/proc/self/fd`` read back: the path the kernel resolved, every symlink followed, now. A path
    that does not exist (or any other refusal, or no ``/proc``) goes to :func:`os.path.realpath`.
    """
    if _O_PATH:
        try:
            descriptor = os.open(path, _O_PATH)
        except OSError:
            return os.path.realpath(path)
        try:
            resolved = os.readlink(f"/proc/self/fd/{descriptor}")
        except OSError:
            resolved = ""
        finally:
            os.close(descriptor)
        if resolved.startswith("/") and not resolved.endswith(_DELETED):
            return resolved
    return os.path.realpath(path)


def relative_inside(root: str | os.PathLike[str], path: str | os.PathLike[str]) -> str | None:
    """``path`` (absolute) as a POSIX path relative to ``root`` when it lies inside it, else None."""
    base = os.path.realpath(root)
    target = os.path.realpath(path)
    if target == base or not target.startswith(base.rstrip(os.sep) + os.sep):
        return None
    return Path(os.path.relpath(target, base)).as_posix()


def open_skill_folder(
    locations: Iterable[str | os.PathLike[str]], folder: str | os.PathLike[str], *, else_itself: bool = False
) -> int:
    """A descriptor of the skill folder ``folder``, opened from the deepest of ``locations`` (the folders its skills
    were found in) that holds it as written, no link followed below that location: a folder on the way swapped
    for a link, before or after the skill was found, is refused (``OSError``), never followed out. A folder no
    location holds is refused too, or with ``else_itself`` opened by its own path (a link there refused)."""
    target = os.path.normpath(folder)
    holders = [os.path.normpath(location) for location in locations]
    inside = [base for base in holders if target == base or target.startswith(base.rstrip(os.sep) + os.sep)]
    if not inside and not else_itself:
        raise OSError(errno.ENOENT, "not in a skills location", target)
    base = max(inside, key=len) if inside else os.path.dirname(target)
    root_fd = open_root(os.path.realpath(base))
    try:
        return open_folder_beneath(root_fd, Path(os.path.relpath(target, base)).as_posix())
    finally:
        os.close(root_fd)


def open_file_inside(folder_fd: int, relative: str, *, message: str = OUTSIDE_SKILL) -> int | None:
    """A descriptor of the regular file ``relative`` below the folder ``folder_fd``, opened for reading without
    following a link at any component, or None when there is none such; :class:`SkillPathError` when ``relative``
    names a way out (:func:`refuse_escape`)."""
    return open_regular_at(folder_fd, refuse_escape(relative, message=message).replace("\\", "/"))
