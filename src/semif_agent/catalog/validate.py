"""Strict validation of SKILL.md skills against the Agent Skills specification.

Every problem of a skill is reported, not just the first: the YAML, each
field's rules (see :mod:`.spec`), unknown keys, and semif's ``script`` and
``hooks``, which must name files inside the skill.
"""

from __future__ import annotations

import os
from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from . import spec
from .errors import SkillParseError, SkillsPathNotFound
from .frontmatter import read_document
from .loader import LINK_NOT_FOLLOWED, SKILL_MD_NAMES, find_skill_folders, find_skill_md


@dataclass(frozen=True)
class ValidationReport:
    """The verdict on one skill folder: its name (when readable) and every error found."""

    path: Path
    name: str | None = None
    errors: tuple[str, ...] = field(default_factory=tuple)

    @property
    def ok(self) -> bool:
        """True when the skill has no error."""
        return not self.errors

    def to_dict(self) -> dict[str, object]:
        """A JSON-ready view: path, name, ok, errors."""
        return {"path": str(self.path), "name": self.name, "ok": self.ok, "errors": list(self.errors)}


def validate_skill(path: str | os.PathLike[str]) -> ValidationReport:
    """Validate one skill folder (or its SKILL.md file) strictly."""
    folder = Path(path)
    if folder.is_file() and folder.name in SKILL_MD_NAMES:
        folder = folder.parent
    if folder.is_symlink():
        return ValidationReport(folder, None, (LINK_NOT_FOLLOWED,))
    if not folder.exists():
        return ValidationReport(folder, None, ("path does not exist",))
    if not folder.is_dir():
        return ValidationReport(folder, None, ("not a directory",))
    skill_md = find_skill_md(folder)
    if skill_md is None:
        linked = next((name for name in SKILL_MD_NAMES if (folder / name).is_symlink()), None)
        why = f"{linked} is a link; not read" if linked else "missing required file SKILL.md"
        return ValidationReport(folder, None, (why,))
    try:
        data = read_document(skill_md).data()
    except SkillParseError as exc:
        where = f"line {exc.line}: " if exc.line else ""
        return ValidationReport(folder, None, (where + exc.reason,))
    errors = validate_frontmatter(data, folder)
    name = data.get("name") if isinstance(data.get("name"), str) else None
    return ValidationReport(folder, name, tuple(errors))


def validate_frontmatter(data: dict[str, Any], folder: Path) -> list[str]:
    """Every error of a parsed frontmatter mapping belonging to the skill in ``folder``."""
    errors = spec.check_unknown_keys(data)
    errors += spec.check_name(data.get("name"), folder)
    errors += spec.check_description(data.get("description"))
    plain_checks = {
        "license": spec.check_license,
        "compatibility": spec.check_compatibility,
        "metadata": spec.check_metadata,
        "allowed-tools": spec.check_allowed_tools,
    }
    for key, check in plain_checks.items():
        if key in data:
            errors += check(data[key])
    if "script" in data:
        errors += spec.check_script(data["script"], folder)
    if "hooks" in data:
        errors += spec.check_hooks(data["hooks"], folder)
    return errors


def expand_skill_folders(paths: Iterable[str | os.PathLike[str]]) -> list[Path]:
    """Skill folders named by ``paths``: a skill folder, a SKILL.md, or a folder of skills (nested ones too).

    In a folder of skills, a visible subfolder that holds neither a SKILL.md
    nor skills further down counts as a skill folder, so one that lacks its
    SKILL.md is reported rather than passed over. Raises
    :class:`SkillsPathNotFound` for a path that does not exist or holds no skill.
    """
    folders: list[Path] = []
    for raw in paths:
        path = Path(raw)
        if not path.exists():
            raise SkillsPathNotFound(f"{path}: no such file or directory")
        if path.is_file():
            if path.name not in SKILL_MD_NAMES:
                raise SkillsPathNotFound(f"{path}: not a skill folder or SKILL.md")
            folders.append(path.parent)
        elif find_skill_md(path) is not None:
            folders.append(path)
        else:
            nested = skill_folders_in(path)
            if not nested:
                raise SkillsPathNotFound(f"{path}: no SKILL.md in it or in its subfolders")
            holders = {path / Path(relative).parts[0] for relative, _ in find_skill_folders(path)}
            empty = [child for child in _subfolders(path) if child not in holders]
            folders.extend(sorted([*nested, *empty]))
    return folders


def _subfolders(root: Path) -> list[Path]:
    try:
        entries = sorted(os.scandir(root), key=lambda entry: entry.name)
    except OSError:
        return []
    return [
        Path(entry.path)
        for entry in entries
        if not entry.name.startswith((".", "_")) and entry.is_dir(follow_symlinks=False)
    ]


def skill_folders_in(root: Path) -> list[Path]:
    """The skill folders under ``root`` (nested collections too, see :func:`~.loader.find_skill_folders`)."""
    return [folder for _, folder in find_skill_folders(root)]


def validate_paths(paths: Iterable[str | os.PathLike[str]]) -> list[ValidationReport]:
    """Validate every skill named by ``paths`` (see :func:`expand_skill_folders`)."""
    return [validate_skill(folder) for folder in expand_skill_folders(paths)]
