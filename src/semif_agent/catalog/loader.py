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
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from . import spec
from .descriptor import SkillDescriptor
from .errors import SkillParseError
from .folder_search import (  # noqa: F401 - the search's names, kept here for the modules that import them
    LINK_NOT_FOLLOWED,
    MAX_DEPTH,
    MAX_ENTRIES,
    MAX_FOLDERS,
    MAX_LISTED,
    NOT_UTF8,
    PATH_TOO_LONG,
    SKILL_MD_NAMES,
    SKIPPED_FOLDERS,
    FolderSearch,
    find_skill_folders,
    is_skipped_folder,
    precedence,
    search_skill_folders,
)
from .frontmatter import SkillDocument, read_document


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

    def __init__(self, folder: Path, data: Mapping[str, object]) -> None:
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

    def text(self, key: str, check: Callable[[str], list[str]]) -> str | None:
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
        assert isinstance(raw, str)  # check_script finds a problem in anything else
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
