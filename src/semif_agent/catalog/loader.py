"""Lenient loading of one skill folder, as real clients do.

A skill loads unless it cannot be understood at all: unreadable SKILL.md, no
frontmatter, broken YAML, or no usable description. A one-line value that
YAML refuses only for an unquoted colon (``description: ... Usage: /cmd``) is
read as plain text, as clients read it, with a warning
(:meth:`~.frontmatter.SkillDocument.lenient_data`). Everything else (a name
that differs from its folder, is too long or badly formed, fields of the wrong
type, a script that is missing) loads with a warning on the descriptor.
Unknown keys are ignored here; strict validation reports them.
"""

from __future__ import annotations

import dataclasses
import os
import stat
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from . import spec
from .descriptor import SkillDescriptor
from .errors import SkillParseError
from .frontmatter import SkillDocument, read_document

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


LINK_NOT_FOLLOWED = "a link out of the skills folder; not followed (list a folder kept elsewhere in [skills] folders)"
"""What the load report and validation say of a link in a skills folder."""
MAX_ENTRIES = 10_000
"""The most entries a folder searched for skills may hold; a folder with more is refused, not searched."""
MAX_FOLDERS = 50_000
"""The most folders one search opens; past it the search stops, and says where."""


@dataclass(frozen=True)
class FolderSearch:
    """What a search for skill folders found (``(path relative to the root, folder)``, in :func:`precedence` order)
    and what it left out: ``(path, why)`` for each folder or link it did not search."""

    found: list[tuple[str, Path]]
    skipped: list[tuple[Path, str]]


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
    where the search stopped after opening :data:`MAX_FOLDERS` folders. The
    walk is iterative and holds one open folder per level: no folder tree,
    however deep, can exhaust the stack or the file descriptors.
    """
    search = _Search(os.path.abspath(root), max_depth)
    search.run()
    search.found.sort(key=lambda pair: precedence(pair[0]))
    return FolderSearch(search.found, search.skipped)


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
        self.skipped: list[tuple[Path, str]] = []

    def run(self) -> None:
        try:
            root_fd = os.open(self.base, os.O_RDONLY | os.O_DIRECTORY)
        except OSError:
            return  # no folder of skills here: nothing to find, nothing left out
        path: list[_Open] = [_Open(root_fd, "", 0, _identity(root_fd), self._subfolders(root_fd, ""))]
        on_path = {path[0].identity}
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
                if opened >= MAX_FOLDERS:
                    rest = sum(len(folder.pending) for folder in path)
                    self._leave_out(
                        relative,
                        f"not searched, nor {rest} more folder(s) after it: "
                        f"the search stops after opening {MAX_FOLDERS} folders",
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
                on_path.add(identity)
                path.append(_Open(fd, relative, here.depth + 1, identity, self._subfolders(fd, relative)))
        finally:
            for folder in path:
                os.close(folder.fd)

    def _subfolders(self, fd: int, relative: str) -> list[str]:
        """The subfolders of the folder open as ``fd`` to search, last first; notes its skill folders and what it
        leaves out."""
        try:
            names = _entry_names(fd)
        except OSError as exc:
            self._leave_out(relative, f"cannot be read ({exc.strerror or exc}); not searched")
            return []
        if names is None:
            self._leave_out(relative, f"holds more than {MAX_ENTRIES} entries; not searched")
            return []
        if relative and relative not in self.skill_folders and not any(name in SKILL_MD_NAMES for name in names):
            misnamed = next((name for name in names if name.casefold() == "skill.md"), None)
            if misnamed is not None:
                self._leave_out(relative, f"its skill document is named {misnamed}; only SKILL.md or skill.md is read")
        subfolders: list[str] = []
        for name in names:
            if is_skipped_folder(name):
                continue
            path = f"{relative}/{name}" if relative else name
            try:
                info = os.stat(name, dir_fd=fd, follow_symlinks=False)
            except OSError:
                continue  # gone since it was listed
            if stat.S_ISLNK(info.st_mode):
                if _links_out_to_a_folder(os.path.join(self.base, path), self.real_base):
                    self._leave_out(path, LINK_NOT_FOLLOWED)
                continue
            if not stat.S_ISDIR(info.st_mode):
                continue
            document = _skill_document(fd, name)
            if document == "regular":
                self.found.append((path, Path(self.base, path)))
                self.skill_folders.add(path)
            elif document:
                self._leave_out(path, f"{document}; not read")
            subfolders.append(name)
        subfolders.reverse()
        return subfolders

    def _leave_out(self, relative: str, why: str) -> None:
        self.skipped.append((Path(self.base, relative) if relative else Path(self.base), why))


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


def _entry_names(fd: int) -> list[str] | None:
    """The names in the folder open as ``fd``, sorted; None when it holds more than :data:`MAX_ENTRIES`."""
    names: list[str] = []
    with os.scandir(fd) as entries:
        for entry in entries:
            names.append(entry.name)
            if len(names) > MAX_ENTRIES:
                return None
    return sorted(names)


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


def _links_out_to_a_folder(path: str, real_base: str) -> bool:
    """Whether the link at ``path`` leads to a folder out of ``real_base`` (a link to a file, such as a skill's
    shared reference, can hold no skill: it is not reported)."""
    target = os.path.realpath(path)
    inside = target == real_base or target.startswith(real_base.rstrip(os.sep) + os.sep)
    return not inside and os.path.isdir(target)


def find_skill_md(folder: str | os.PathLike[str]) -> Path | None:
    """The skill document of ``folder`` (``SKILL.md``, else ``skill.md``) that is a regular file, or None (a
    link is never taken for one)."""
    for name in SKILL_MD_NAMES:
        candidate = os.path.join(folder, name)
        try:
            if stat.S_ISREG(os.lstat(candidate).st_mode):
                return Path(candidate)
        except OSError:
            continue
    return None


def parse_skill_md(skill_md: Path) -> tuple[SkillDocument, dict[str, Any]]:
    """A SKILL.md's document and its frontmatter parsed leniently (raises :class:`SkillParseError`); the
    document's ``read_leniently`` says what was read as plain text, if anything."""
    document = read_document(skill_md)
    data, read_leniently = document.lenient_data(path=str(skill_md))
    if read_leniently:
        document = dataclasses.replace(document, read_leniently=read_leniently)
    return document, data


def parse_failure(exc: SkillParseError) -> str:
    """Why a skill whose SKILL.md raised ``exc`` is skipped: the reason, after its line when known."""
    return (f"line {exc.line}: " if exc.line else "") + exc.reason


@dataclass(frozen=True)
class LoadResult:
    """The outcome of loading one folder: a descriptor, or the reason it was skipped.

    ``watched`` lists the files (relative to the folder) the frontmatter names:
    their appearing or disappearing changes the outcome, so a refresh re-checks them.
    """

    folder: Path
    descriptor: SkillDescriptor | None
    skipped: str = ""
    watched: tuple[str, ...] = ()


def load_skill(
    folder: Path,
    *,
    namespace: str,
    source: str,
    source_label: str,
    skill_md: Path | None = None,
    parsed: tuple[SkillDocument, dict[str, Any]] | None = None,
) -> LoadResult:
    """Load the skill in ``folder`` leniently; never raises for a bad skill.

    ``parsed`` is its SKILL.md already read by :func:`parse_skill_md`, for a
    caller that needs more of the document than the load keeps (it is then
    read once).
    """
    skill_md = skill_md or find_skill_md(folder)
    if skill_md is None:
        return LoadResult(folder, None, "no SKILL.md")
    if parsed is None:
        try:
            parsed = parse_skill_md(skill_md)
        except SkillParseError as exc:
            return LoadResult(folder, None, parse_failure(exc))
    fields = _Fields(folder, parsed[1])
    if parsed[0].read_leniently:
        fields.warnings.append(parsed[0].read_leniently)
    description = fields.description()
    watched = fields.watched()
    if description is None:
        return LoadResult(folder, None, fields.fatal, watched)
    name = fields.name()
    descriptor = SkillDescriptor(
        skill_id=f"{namespace}@{name}",
        name=name,
        namespace=namespace,
        description=description,
        root=folder,
        source=source,
        source_label=source_label,
        script=fields.script(),
        hooks=fields.hooks(),
        license=fields.text("license", spec.check_license),
        compatibility=fields.text("compatibility", spec.check_compatibility),
        metadata=fields.metadata(),
        allowed_tools=fields.allowed_tools(),
        skill_md=skill_md,
        warnings=tuple(fields.warnings),
    )
    return LoadResult(folder, descriptor, "", watched)


class _Fields:
    """Reads each field of one frontmatter leniently, collecting warnings."""

    def __init__(self, folder: Path, data: Mapping[str, Any]) -> None:
        self.folder = folder
        self.data = data
        self.warnings: list[str] = []
        self.fatal = ""

    def name(self) -> str:
        raw = self.data.get("name")
        if raw is None or (isinstance(raw, str) and not raw.strip()):
            self.warnings.append("no 'name'; using the folder name")
            return spec.normalize_name(self.folder.name)
        if not isinstance(raw, str):
            self.warnings.append(f"'name' should be a string; read {raw!r} as text")
            raw = str(raw)
        name = spec.normalize_name(raw)
        self.warnings.extend(spec.name_problems(name))
        self.warnings.extend(spec.folder_problems(name, self.folder))
        return name

    def description(self) -> str | None:
        raw = self.data.get("description")
        if raw is None or (isinstance(raw, str) and not raw.strip()):
            self.fatal = "missing description"
            return None
        if isinstance(raw, (Mapping, list)):
            self.fatal = "'description' must be text"
            return None
        if not isinstance(raw, str):
            self.warnings.append("'description' should be a string; read it as text")
            raw = str(raw)
        self.warnings.extend(spec.check_description(raw))
        return raw.strip()

    def text(self, key: str, check: Any) -> str | None:
        raw = self.data.get(key)
        if raw is None:
            return None
        if isinstance(raw, (Mapping, list)):
            self.warnings.append(f"'{key}' must be text; ignored")
            return None
        value = raw if isinstance(raw, str) else str(raw)
        self.warnings.extend(check(value))
        return value.strip() or None

    def metadata(self) -> dict[str, str]:
        raw = self.data.get("metadata")
        if raw is None:
            return {}
        if not isinstance(raw, Mapping):
            self.warnings.append("'metadata' must be a mapping; ignored")
            return {}
        self.warnings.extend(spec.check_metadata(raw))
        return {str(key): value if isinstance(value, str) else str(value) for key, value in raw.items()}

    def allowed_tools(self) -> tuple[str, ...]:
        raw = self.data.get("allowed-tools")
        if raw is None:
            return ()
        if isinstance(raw, list):
            return tuple(str(item).strip() for item in raw if str(item).strip())
        if not isinstance(raw, str):
            self.warnings.append("'allowed-tools' must be a string; ignored")
            return ()
        tools = (tool.rstrip(",") for tool in spec.split_allowed_tools(raw))
        return tuple(tool for tool in tools if tool)

    def script(self) -> str | None:
        raw = self.data.get("script")
        if raw is None:
            return None
        problems = spec.check_script(raw, self.folder)
        if problems:
            self.warnings.extend(f"{problem}; ignored" for problem in problems)
            return None
        return _clean(raw)

    def hooks(self) -> dict[str, str]:
        raw = self.data.get("hooks")
        if raw is None:
            return {}
        if not isinstance(raw, Mapping):
            self.warnings.extend(spec.check_hooks(raw, self.folder))
            return {}
        hooks: dict[str, str] = {}
        for hook_type, script in raw.items():
            problems = spec.check_hooks({hook_type: script}, self.folder)
            if problems:
                self.warnings.extend(f"{problem}; ignored" for problem in problems)
            else:
                hooks[hook_type] = _clean(script)
        return hooks

    def watched(self) -> tuple[str, ...]:
        paths = [self.data.get("script")]
        hooks = self.data.get("hooks")
        if isinstance(hooks, Mapping):
            paths.extend(hooks.values())
        return tuple(_clean(path) for path in paths if isinstance(path, str) and path.strip())


def _clean(path: str) -> str:
    return path.strip().replace("\\", "/")
