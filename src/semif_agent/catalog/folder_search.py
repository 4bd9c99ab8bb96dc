"""Where skill folders are: a search of a folder of skills at any depth, and what it leaves out, with why.

A folder of skills is untrusted content: the search never follows a link, is
bounded in depth, folders and entries, searches a folder mounted in two places
once, and leaves out (with a reason) every folder it cannot name safely, so
that a hostile folder tree can neither slow it without bound nor give a path
that a later step cannot store, print or open (:func:`search_skill_folders`).
"""

from __future__ import annotations

import os
import stat
from dataclasses import dataclass, field
from pathlib import Path

from .._text import plural
from .left_out import SEARCH_STOPPED, LeftOut, more_lines

SKILL_MD_NAMES = ("SKILL.md", "skill.md")
"""File names of a skill document, preferred first."""


MAX_DEPTH = 256
"""How many folders deep below a folder of skills the search goes (real collections nest skills 14 deep; a
folder deeper than this is reported, not searched). The search holds one open folder per level, so this also
bounds the file descriptors it holds."""

SKIPPED_FOLDERS = frozenset(
    {
        ".git",
        ".hg",
        ".svn",
        ".bzr",
        "node_modules",
        "__pycache__",
        ".venv",
        "venv",
        ".tox",
        ".nox",
        ".mypy_cache",
        ".pytest_cache",
        ".ruff_cache",
        ".cache",
        ".idea",
        ".vscode",
    }
)
"""Folders never searched for skills: version control, caches, virtual environments, editor state.

Other hidden folders are searched: collections keep skills in ``.system``,
``.curated`` or ``.experimental`` (Codex keeps its built-in skills so).
"""


def is_skipped_folder(name: str) -> bool:
    """True for a folder that never holds skills (:data:`SKIPPED_FOLDERS`)."""
    return name in SKIPPED_FOLDERS


NOT_UTF8 = "its name is not valid UTF-8 (shown with its bytes escaped); not searched"
"""Why a folder whose name is not UTF-8 is left out: no path to it could be stored, printed or sent as text."""
PATH_TOO_LONG = "its path is longer than the system allows; cannot be opened by it, not read"
"""Why a skill folder nested below folders whose names add up past the system's path limit is left out."""
LINK_NOT_FOLLOWED = "a link out of the skills folder; not followed (list a folder kept elsewhere in [skills] folders)"
"""What the load report and validation say of a link in a skills folder."""
MAX_ENTRIES = 10_000
"""The most entries a folder searched for skills may hold; a folder with more is refused, not searched."""
MAX_FOLDERS = 50_000
"""The most folders one search opens; past it the search stops, and says where."""
MAX_LISTED = 200_000
"""The most entries one search lists, over all its folders (4,000 real skills, as their packages ship them, hold
about 10,000); past it the search stops, and says where. Folders mounted into each other can make a tree of tens
of thousands of folders of :data:`MAX_ENTRIES` each, that no loop check notices: this bounds the whole walk."""


@dataclass(frozen=True)
class FolderSearch:
    """What a search for skill folders found (``(path relative to the root, folder)``, in :func:`precedence` order)
    and what it left out: ``(path, why)`` for each folder or link it did not search, the first
    :data:`~.left_out.MAX_NAMED` of them, and how many more by reason (``more_skipped``)."""

    found: list[tuple[str, Path]]
    skipped: list[tuple[Path, str]]
    more_skipped: dict[str, int] = field(default_factory=dict)
    root: Path | None = None

    def reported(self) -> list[tuple[Path, str]]:
        """``(path, why)`` of each folder left out by name, then one ``(root, "N more folders left out, not named:
        why")`` for each reason of the others: for a caller that reports folders one by one."""
        counted = [(self.root or Path("."), line) for line in more_lines(self.more_skipped)]
        return [*self.skipped, *counted]


def find_skill_folders(root: str | os.PathLike[str], *, max_depth: int = MAX_DEPTH) -> list[tuple[str, Path]]:
    """Every skill folder under ``root``: ``(path relative to root, folder)``, in :func:`precedence` order
    (:func:`search_skill_folders`, without what it left out)."""
    return search_skill_folders(root, max_depth=max_depth).found


def search_skill_folders(root: str | os.PathLike[str], *, max_depth: int = MAX_DEPTH) -> FolderSearch:
    """Every skill folder under ``root``, and what the search left out and why.

    Every folder is searched, at any depth down to ``max_depth`` levels, a
    skill folder's own subfolders too: a folder holding a ``SKILL.md`` is a
    skill wherever it lies, so a skill nested in another's folder
    (``skill-a/lib/sub-skill/SKILL.md``, as published packages ship them) is
    a skill of its own. Version-control, cache and environment folders
    (:data:`SKIPPED_FOLDERS`) are never searched; other hidden folders are.
    ``root`` itself is not a candidate: pass a skill folder's parent to find it.

    A skills folder is untrusted content, so the search never follows a
    symbolic link: a link that leads out of ``root`` is reported and left out
    (a folder elsewhere is loaded by listing it as a location of its own), and
    a link inside it is left out silently, its target being searched where it
    is. Each folder is opened relative to the one above it, refusing links
    (``O_NOFOLLOW``), so a folder swapped for a link while the search runs is
    not entered either.

    Nothing is left out without a reason, each given with the folder it
    concerns: a ``SKILL.md`` that is not a regular file (a link, a device) or
    a skill document named otherwise (``Skill.md``: clients read only
    :data:`SKILL_MD_NAMES`), a
    folder that cannot be opened or read, one of more than
    :data:`MAX_ENTRIES` entries, one deeper than ``max_depth``, one that is
    the same folder as one above it (a loop through a mount), and the folder
    where the search stopped after opening :data:`MAX_FOLDERS` folders or
    listing :data:`MAX_LISTED` entries. A folder met again (mounted in two
    places) is searched once, where it is met first. A folder whose name is not
    UTF-8 (:data:`NOT_UTF8`) is left out, its name shown with the bytes
    escaped, and so is a skill folder whose SKILL.md's path is longer than the
    system opens (:data:`PATH_TOO_LONG`): every folder found can be opened,
    stored and printed by its path. The walk is iterative and holds one open
    folder per level: no folder tree, however deep, can exhaust the stack or
    the file descriptors. The first :data:`~.left_out.MAX_NAMED` folders left
    out are named, the others counted by reason.
    """
    search = _Search(os.path.abspath(root), max_depth)
    search.run()
    search.found.sort(key=lambda pair: precedence(pair[0]))
    return FolderSearch(search.found, search.skipped.named, dict(search.skipped.more), Path(search.base))


@dataclass
class _Open:
    """A folder the search is inside: its descriptor, and the subfolders of it still to search (last first)."""

    fd: int
    relative: str
    depth: int
    identity: tuple[int, int]
    pending: list[str]


class _Search:
    """One depth-first search below ``base`` (:func:`search_skill_folders`)."""

    def __init__(self, base: str, max_depth: int) -> None:
        self.base = base
        self.real_base = os.path.realpath(base)
        self.max_depth = max_depth
        self.found: list[tuple[str, Path]] = []
        self.skill_folders: set[str] = set()  # the paths in found
        self.skipped: LeftOut[tuple[Path, str]] = LeftOut()
        self.listed = 0  # entries listed so far, over every folder
        self.path_max = _path_max(base)

    def run(self) -> None:
        try:
            root_fd = os.open(self.base, os.O_RDONLY | os.O_DIRECTORY)
        except OSError:
            return  # no folder of skills here: nothing to find, nothing left out
        path: list[_Open] = [_Open(root_fd, "", 0, _identity(root_fd), self._subfolders(root_fd, ""))]
        on_path = {path[0].identity}
        searched = {path[0].identity}
        opened = 1
        try:
            while path:
                here = path[-1]
                if not here.pending:
                    os.close(here.fd)
                    on_path.discard(here.identity)
                    path.pop()
                    continue
                name = here.pending.pop()
                relative = f"{here.relative}/{name}" if here.relative else name
                if here.depth + 1 > self.max_depth:
                    self._leave_out(relative, f"nested deeper than {self.max_depth} folders; not searched")
                    continue
                if opened >= MAX_FOLDERS or self.listed >= MAX_LISTED:
                    rest = sum(len(folder.pending) for folder in path)
                    bound = (
                        f"opening {MAX_FOLDERS} folders" if opened >= MAX_FOLDERS else f"listing {MAX_LISTED} entries"
                    )
                    self._leave_out(
                        relative, f"not searched, nor {plural(rest, 'more folder')} after it: {SEARCH_STOPPED} {bound}"
                    )
                    return
                try:
                    fd = os.open(name, os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW, dir_fd=here.fd)
                except OSError as exc:
                    self._leave_out(relative, f"cannot be opened ({exc.strerror or exc}); not searched")
                    continue
                opened += 1
                identity = _identity(fd)
                if identity in on_path:
                    os.close(fd)
                    self._leave_out(relative, "the same folder as one above it (a loop); not searched again")
                    continue
                if identity in searched:
                    os.close(fd)
                    self._leave_out(
                        relative, "the same folder as one searched already (mounted twice); not searched again"
                    )
                    continue
                searched.add(identity)
                on_path.add(identity)
                path.append(_Open(fd, relative, here.depth + 1, identity, self._subfolders(fd, relative)))
        finally:
            for folder in path:
                os.close(folder.fd)

    def _subfolders(self, fd: int, relative: str) -> list[str]:
        """The subfolders of the folder open as ``fd`` to search, last first; notes its skill folders and what it
        leaves out."""
        try:
            entries = _entries(fd)
        except OSError as exc:
            self._leave_out(relative, f"cannot be read ({exc.strerror or exc}); not searched")
            return []
        self.listed += MAX_ENTRIES + 1 if entries is None else len(entries)
        if entries is None:
            self._leave_out(relative, f"holds more than {MAX_ENTRIES} entries; not searched")
            return []
        names = [name for name, _ in entries]
        if relative and relative not in self.skill_folders and not any(name in SKILL_MD_NAMES for name in names):
            misnamed = next((name for name in names if name.casefold() == "skill.md"), None)
            if misnamed is not None:
                self._leave_out(relative, f"its skill document is named {misnamed}; only SKILL.md or skill.md is read")
        subfolders: list[str] = []
        for name, kind in entries:
            if kind == _OTHER or is_skipped_folder(name):
                continue
            path = f"{relative}/{name}" if relative else name
            if kind == _LINK:
                if self._links_out_to_a_folder(fd, name, relative):
                    self._leave_out(path, LINK_NOT_FOLLOWED)
                continue
            if not _is_utf8(name):
                self._leave_out(path, NOT_UTF8)
                continue
            document = _skill_document(fd, name)
            if document == "regular" and self._too_long(path):
                self._leave_out(path, PATH_TOO_LONG)
            elif document == "regular":
                self.found.append((path, Path(self.base, path)))
                self.skill_folders.add(path)
            elif document:
                self._leave_out(path, f"{document}; not read")
            subfolders.append(name)
        subfolders.reverse()
        return subfolders

    def _links_out_to_a_folder(self, fd: int, name: str, relative: str) -> bool:
        """Whether the link ``name`` in the folder open as ``fd`` (at ``relative``) leads to a folder out of the
        folder searched (a link to a file, such as a skill's shared reference, can hold no skill: it is not
        reported). The folder's real path is the searched folder's, joined: the search follows no link below it."""
        try:
            target = os.readlink(name, dir_fd=fd)
        except OSError:
            return False  # gone since it was listed
        resolved = os.path.realpath(os.path.join(self.real_base, relative, target))
        inside = resolved == self.real_base or resolved.startswith(self.real_base.rstrip(os.sep) + os.sep)
        return not inside and os.path.isdir(resolved)

    def _too_long(self, relative: str) -> bool:
        """Whether the SKILL.md of the skill folder at ``relative`` has a path longer than the system opens."""
        longest = os.path.join(self.base, relative, SKILL_MD_NAMES[0])
        return len(os.fsencode(longest)) >= self.path_max

    def _leave_out(self, relative: str, why: str) -> None:
        """Note a folder left out: named while there is room (:class:`~.left_out.LeftOut`), else counted."""
        if not (self.skipped.has_room() or SEARCH_STOPPED in why):
            self.skipped.more[why] += 1  # counted only: no path is made for it
            return
        shown = _shown(relative)  # a name that is not UTF-8 (of a link, a folder) never reaches a report raw
        self.skipped.add((Path(self.base, shown) if shown else Path(self.base), why), why)


def _is_utf8(name: str) -> bool:
    """Whether a name listed from a folder is UTF-8 (the bytes of one that is not are read as lone surrogates)."""
    try:
        name.encode("utf-8")
    except UnicodeEncodeError:
        return False
    return True


def _shown(path: str) -> str:
    """``path`` as text any encoding can hold: the bytes of a name that is not UTF-8 shown as ``\\xff``."""
    return os.fsencode(path).decode("utf-8", "backslashreplace")


def _path_max(base: str) -> int:
    """The longest path, in bytes with its final zero, the system opens below ``base`` (4,096 on Linux)."""
    try:
        return os.pathconf(base, "PC_PATH_MAX")
    except (OSError, ValueError, AttributeError):
        return 4096


def _identity(fd: int) -> tuple[int, int]:
    info = os.fstat(fd)
    return info.st_dev, info.st_ino


def precedence(relative: str) -> tuple[int, bool, list[str]]:
    """Where a skill folder found at ``relative`` (below the folder searched) stands among the others, first first:
    nearer the top before a nested one, a folder with no hidden folder in its path before one in a hidden folder,
    then by path. Of two skills that give one name, the first keeps it (:mod:`semif_agent.tree.leaf_ids`), so a
    skill dropped into a hidden or nested collection never takes the name of one kept at the top."""
    parts = relative.split("/")
    return len(parts), any(part.startswith(".") for part in parts), parts


_FOLDER, _LINK, _OTHER = "folder", "link", "other"


def _entries(fd: int) -> list[tuple[str, str]] | None:
    """The entries of the folder open as ``fd``, sorted by name: ``(name, kind)``, the kind a folder, a link or
    other (read from the listing where the file system gives it, so a file costs no call of its own); None when
    it holds more than :data:`MAX_ENTRIES`."""
    found: list[tuple[str, str]] = []
    with os.scandir(fd) as entries:
        for entry in entries:
            try:
                kind = _LINK if entry.is_symlink() else _FOLDER if entry.is_dir(follow_symlinks=False) else _OTHER
            except OSError:
                continue  # gone since it was listed
            found.append((entry.name, kind))
            if len(found) > MAX_ENTRIES:
                return None
    return sorted(found)


def _skill_document(folder_fd: int, name: str) -> str:
    """``"regular"`` when the folder ``name`` holds a skill document that is a regular file (as
    :func:`find_skill_md`), else why the one it holds cannot be read (a link, a folder, a device), else ``""``."""
    why = ""
    for document in SKILL_MD_NAMES:
        try:
            info = os.stat(f"{name}/{document}", dir_fd=folder_fd, follow_symlinks=False)
        except OSError:
            continue
        if stat.S_ISREG(info.st_mode):
            return "regular"
        if not why:
            why = f"{document} is a link" if stat.S_ISLNK(info.st_mode) else f"{document} is not a regular file"
    return why
