"""Strict validation of SKILL.md skills against the Agent Skills specification.

Every problem of a skill is reported, not just the first: the YAML, each
field's rules (see :mod:`.spec`), unknown keys, and semif's ``script`` and
``hooks``, which must name files inside the skill.

Each verdict also says whether the skill loads (:attr:`ValidationReport.loads`):
loading is lenient (:mod:`.loader`), so most skills that break the
specification (an unknown key, a name in capitals) load all the same, and
only what stops a skill from loading (no SKILL.md, frontmatter that cannot be
read, no description) leaves it out.
"""

from __future__ import annotations

import os
from collections import Counter
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from . import spec
from .errors import SkillParseError, SkillsPathNotFound
from .frontmatter import read_document
from .loader import LINK_NOT_FOLLOWED, SKILL_MD_NAMES, find_skill_md, load_skill, search_skill_folders


@dataclass(frozen=True)
class ValidationReport:
    """The verdict on one skill folder: its name (when readable), every error found, and why loading leaves it out
    (``left_out``; empty when it loads)."""

    path: Path
    name: str | None = None
    errors: tuple[str, ...] = field(default_factory=tuple)
    left_out: tuple[str, ...] = field(default_factory=tuple)

    @property
    def ok(self) -> bool:
        """True when the skill has no error: it meets the specification."""
        return not self.errors

    @property
    def loads(self) -> bool:
        """True when the skill loads (leniently, as every command loads it), whether or not it meets the
        specification."""
        return not self.left_out

    def to_dict(self) -> dict[str, object]:
        """A JSON-ready view: path, name, ok, loads, errors."""
        return {
            "path": str(self.path),
            "name": self.name,
            "ok": self.ok,
            "loads": self.loads,
            "errors": list(self.errors),
        }


def validate_skill(path: str | os.PathLike[str]) -> ValidationReport:
    """Validate one skill folder (or its SKILL.md file) strictly."""
    folder = Path(path)
    if folder.is_file() and folder.name in SKILL_MD_NAMES:
        folder = folder.parent
    if folder.is_symlink():
        return _not_loaded(folder, LINK_NOT_FOLLOWED)
    if not folder.exists():
        return _not_loaded(folder, "path does not exist")
    if not folder.is_dir():
        return _not_loaded(folder, "not a directory")
    skill_md = find_skill_md(folder)
    if skill_md is None:
        linked = next((name for name in SKILL_MD_NAMES if (folder / name).is_symlink()), None)
        return _not_loaded(folder, f"{linked} is a link; not read" if linked else "missing required file SKILL.md")
    loaded = load_skill(folder, namespace="", source="", source_label="", skill_md=skill_md)
    left_out = (loaded.skipped,) if loaded.skipped else ()
    try:
        data = read_document(skill_md).data()
    except SkillParseError as exc:
        where = f"line {exc.line}: " if exc.line else ""
        name = loaded.descriptor.name if loaded.descriptor else None
        return ValidationReport(folder, name, (where + exc.reason,), left_out)
    errors = validate_frontmatter(data, folder)
    name = data.get("name") if isinstance(data.get("name"), str) else None
    return ValidationReport(folder, name, tuple(errors), left_out)


def _not_loaded(folder: Path, why: str) -> ValidationReport:
    return ValidationReport(folder, None, (why,), (why,))


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
    return search_paths(paths).folders


@dataclass(frozen=True)
class PathSearch:
    """The skill folders named by some paths (:func:`expand_skill_folders`), and the folders their searches left
    out, each with why (:func:`~.loader.search_skill_folders`), and how many more they left out without naming
    them, by reason."""

    folders: list[Path]
    left_out: dict[Path, list[str]]
    more_left_out: dict[str, int] = field(default_factory=dict)


def search_paths(paths: Iterable[str | os.PathLike[str]]) -> PathSearch:
    """:func:`expand_skill_folders`, with what each search left out."""
    folders: list[Path] = []
    left_out: dict[Path, list[str]] = {}
    more: Counter[str] = Counter()
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
            search = search_skill_folders(path)
            for folder, why in search.skipped:
                left_out.setdefault(folder, []).append(why)
            more.update(search.more_skipped)
            if not search.found and not search.skipped:
                raise SkillsPathNotFound(f"{path}: no SKILL.md in it or in its subfolders")
            holders = {path / Path(relative).parts[0] for relative, _ in search.found}
            base = os.path.abspath(path)
            below = [Path(os.path.relpath(folder, base)) for folder, _ in search.skipped]
            holders |= {path / relative.parts[0] for relative in below if relative.parts and relative.parts[0] != ".."}
            empty = [child for child in _subfolders(path) if child not in holders]
            folders.extend(sorted([*(folder for _, folder in search.found), *empty]))
    return PathSearch(folders, left_out, dict(more))


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


def validate_left_out(folder: Path, reasons: Iterable[str]) -> ValidationReport:
    """The verdict on a folder that a search or a load left out: why, then what strict validation finds in its
    SKILL.md (when it has one that is a regular file), each problem once."""
    reasons = tuple(dict.fromkeys(reasons))
    strict = validate_skill(folder) if find_skill_md(folder) is not None else ValidationReport(folder)
    return ValidationReport(folder, strict.name, tuple(dict.fromkeys([*reasons, *strict.errors])), reasons)


def validate_folders(folders: Iterable[Path], left_out: Mapping[Path, Sequence[str]]) -> list[ValidationReport]:
    """Validate each of ``folders`` strictly (one left out, with why first: :func:`validate_left_out`), then report
    each other folder of ``left_out``."""
    folders = list(folders)
    listed = set(folders)
    reports = [validate_left_out(f, left_out[f]) if f in left_out else validate_skill(f) for f in folders]
    return reports + [validate_left_out(folder, why) for folder, why in left_out.items() if folder not in listed]


def validate_paths(paths: Iterable[str | os.PathLike[str]]) -> list[ValidationReport]:
    """Validate every skill named by ``paths`` (see :func:`expand_skill_folders`), and report each folder their
    searches left out, with why."""
    search = search_paths(paths)
    return validate_folders(search.folders, search.left_out)
