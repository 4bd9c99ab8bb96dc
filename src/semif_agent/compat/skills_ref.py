"""The API of the Agent Skills reference library, ``skills-ref`` 0.1.1, behaving as it does.

For code written against ``skills_ref`` (its ``parser``, ``validator``,
``prompt`` and ``models`` modules all re-export from here)::

    validate(skill_dir) -> list[str]            every problem, [] when valid
    read_properties(skill_dir) -> SkillProperties
    to_prompt(skill_dirs) -> str                the <available_skills> block
    find_skill_md(skill_dir) -> Path | None
    parse_frontmatter(content) -> (dict, str)

Behaviour matches the reference, including its quirks, which semif's own
parser (:mod:`semif_agent.catalog.frontmatter`) does not share: the
frontmatter ends at the first ``---`` anywhere (``split('---', 2)``), a
byte-order mark is not accepted, every YAML scalar is a string (StrictYAML has
no implicit types), flow collections, anchors, tags and duplicate keys are
refused, and an empty ``compatibility`` passes. The only difference is the
text after ``Invalid YAML in frontmatter:``, which comes from PyYAML here.
The error classes also derive from :class:`semif_agent.errors.UserError`;
their base, the reference's ``SkillError``, is :class:`SkillsRefError` here
(one class, both names), apart from semif's own
:class:`semif_agent.errors.SkillError` (a code skill misbehaved).
"""

from __future__ import annotations

import html
import unicodedata
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Optional

import yaml

from ..errors import UserError
from ._untyped_yaml import load_untyped

MAX_SKILL_NAME_LENGTH = 64
MAX_DESCRIPTION_LENGTH = 1024
MAX_COMPATIBILITY_LENGTH = 500
ALLOWED_FIELDS = {"name", "description", "license", "allowed-tools", "metadata", "compatibility"}

__all__ = [
    "SkillError",
    "SkillsRefError",
    "ParseError",
    "ValidationError",
    "SkillProperties",
    "find_skill_md",
    "parse_frontmatter",
    "read_properties",
    "validate",
    "validate_metadata",
    "to_prompt",
    "MAX_SKILL_NAME_LENGTH",
    "MAX_DESCRIPTION_LENGTH",
    "MAX_COMPATIBILITY_LENGTH",
    "ALLOWED_FIELDS",
]


class SkillsRefError(UserError):
    """Base of the reference library's errors; exported as ``SkillError``, the name the reference gives it."""


SkillError = SkillsRefError
"""The reference library's name for :class:`SkillsRefError` (semif's own ``SkillError`` is a code skill's)."""


class ParseError(SkillsRefError):
    """A SKILL.md is missing or its frontmatter cannot be parsed."""


class ValidationError(SkillsRefError):
    """Skill properties are invalid; ``errors`` lists every message (at least one)."""

    def __init__(self, message: str, errors: list[str] | None = None) -> None:
        super().__init__(message)
        self.errors = errors if errors is not None else [message]


@dataclass
class SkillProperties:
    """The frontmatter fields of one skill, as the reference library returns them."""

    name: str
    description: str
    license: Optional[str] = None  # noqa: UP045 - the reference's annotations
    compatibility: Optional[str] = None  # noqa: UP045 - spelled as the reference library spells it
    allowed_tools: Optional[str] = None  # noqa: UP045 - spelled as the reference library spells it
    # None when the frontmatter has no metadata: the reference library passes it on as it is
    metadata: Optional[dict[str, str]] = field(default_factory=dict)  # noqa: UP045 - spelled as the reference library spells it

    def to_dict(self) -> dict[str, object]:
        """The fields set, with ``allowed-tools`` spelled as in the frontmatter; empty metadata left out."""
        result: dict[str, Any] = {"name": self.name, "description": self.description}
        optional = (
            ("license", self.license),
            ("compatibility", self.compatibility),
            ("allowed-tools", self.allowed_tools),
        )
        result.update({key: value for key, value in optional if value is not None})
        if self.metadata:
            result["metadata"] = self.metadata
        return result


def find_skill_md(skill_dir: Path) -> Optional[Path]:  # noqa: UP045 - spelled as the reference library spells it
    """``skill_dir / 'SKILL.md'``, else ``skill_dir / 'skill.md'``, else None."""
    for candidate in (skill_dir / "SKILL.md", skill_dir / "skill.md"):
        if candidate.exists():
            return candidate
    return None


def parse_frontmatter(content: str) -> tuple[dict, str]:
    """``(frontmatter, body)`` of SKILL.md text; raises :class:`ParseError`."""
    if not content.startswith("---"):
        raise ParseError("SKILL.md must start with YAML frontmatter (---)")
    pieces = content.split("---", 2)
    if len(pieces) != 3:
        raise ParseError("SKILL.md frontmatter not properly closed with ---")
    _, frontmatter, rest = pieces
    try:
        data = load_untyped(frontmatter)
    except yaml.YAMLError as exc:
        raise ParseError(f"Invalid YAML in frontmatter: {exc}") from None
    if not isinstance(data, dict):
        raise ParseError("SKILL.md frontmatter must be a YAML mapping")
    if isinstance(data.get("metadata"), dict):
        data["metadata"] = {str(key): str(value) for key, value in data["metadata"].items()}
    return data, rest.strip()


def read_properties(skill_dir: Path) -> SkillProperties:
    """The properties of the skill in ``skill_dir`` (parsed, not validated).

    Raises :class:`ParseError` without a SKILL.md or with broken frontmatter,
    :class:`ValidationError` when ``name`` or ``description`` is missing or blank.
    """
    skill_dir = Path(skill_dir)
    skill_md = find_skill_md(skill_dir)
    if skill_md is None:
        raise ParseError(f"SKILL.md not found in {skill_dir}")
    data, _ = parse_frontmatter(skill_md.read_text(encoding="utf-8"))
    for required in ("name", "description"):
        if required not in data:
            raise ValidationError(f"Missing required field in frontmatter: {required}")
    for required in ("name", "description"):
        value = data[required]
        if not isinstance(value, str) or not value.strip():
            raise ValidationError(f"Field '{required}' must be a non-empty string")
    return SkillProperties(
        name=data["name"].strip(),
        description=data["description"].strip(),
        license=data.get("license"),
        compatibility=data.get("compatibility"),
        allowed_tools=data.get("allowed-tools"),
        metadata=data.get("metadata"),
    )


def _name_errors(name: Any, skill_dir: Optional[Path]) -> list[str]:  # noqa: UP045 - spelled as the reference library spells it
    if not isinstance(name, str) or not name.strip():
        return ["Field 'name' must be a non-empty string"]
    name = unicodedata.normalize("NFKC", name.strip())
    errors: list[str] = []
    if len(name) > MAX_SKILL_NAME_LENGTH:
        errors.append(f"Skill name '{name}' exceeds {MAX_SKILL_NAME_LENGTH} character limit ({len(name)} chars)")
    if name.lower() != name:
        errors.append(f"Skill name '{name}' must be lowercase")
    if name[0] == "-" or name[-1] == "-":
        errors.append("Skill name cannot start or end with a hyphen")
    if "--" in name:
        errors.append("Skill name cannot contain consecutive hyphens")
    if any(not (char.isalnum() or char == "-") for char in name):
        errors.append(
            f"Skill name '{name}' contains invalid characters. Only letters, digits, and hyphens are allowed."
        )
    if skill_dir and unicodedata.normalize("NFKC", skill_dir.name) != name:
        errors.append(f"Directory name '{skill_dir.name}' must match skill name '{name}'")
    return errors


def _text_errors(label: str, value: object, limit: int, *, required: bool) -> list[str]:
    if required and (not isinstance(value, str) or not value.strip()):
        return [f"Field '{label.lower()}' must be a non-empty string"]
    if not isinstance(value, str):
        return [f"Field '{label.lower()}' must be a string"]
    if len(value) > limit:
        return [f"{label} exceeds {limit} character limit ({len(value)} chars)"]
    return []


def validate_metadata(metadata: dict, skill_dir: Optional[Path] = None) -> list[str]:  # noqa: UP045 - spelled as the reference library spells it
    """Every problem of parsed frontmatter ``metadata`` (the folder match needs ``skill_dir``)."""
    errors: list[str] = []
    unexpected = set(metadata) - ALLOWED_FIELDS
    if unexpected:
        errors.append(
            f"Unexpected fields in frontmatter: {', '.join(sorted(unexpected))}. Only {sorted(ALLOWED_FIELDS)} are allowed."
        )
    if "name" in metadata:
        errors += _name_errors(metadata["name"], skill_dir)
    else:
        errors.append("Missing required field in frontmatter: name")
    if "description" in metadata:
        errors += _text_errors("Description", metadata["description"], MAX_DESCRIPTION_LENGTH, required=True)
    else:
        errors.append("Missing required field in frontmatter: description")
    if "compatibility" in metadata:
        errors += _text_errors("Compatibility", metadata["compatibility"], MAX_COMPATIBILITY_LENGTH, required=False)
    return errors


def validate(skill_dir: Path) -> list[str]:
    """Every problem of the skill in ``skill_dir``; an empty list when it is valid."""
    skill_dir = Path(skill_dir)
    if not skill_dir.exists():
        return [f"Path does not exist: {skill_dir}"]
    if not skill_dir.is_dir():
        return [f"Not a directory: {skill_dir}"]
    skill_md = find_skill_md(skill_dir)
    if skill_md is None:
        return ["Missing required file: SKILL.md"]
    try:
        data, _ = parse_frontmatter(skill_md.read_text(encoding="utf-8"))
    except ParseError as exc:
        return [str(exc)]
    return validate_metadata(data, skill_dir)


def to_prompt(skill_dirs: list[Path]) -> str:
    """The ``<available_skills>`` block for a system prompt: name, description, location of each skill."""
    lines = ["<available_skills>"]
    for skill_dir in skill_dirs:
        folder = Path(skill_dir).resolve()
        props = read_properties(folder)
        lines += ["<skill>", "<name>", html.escape(props.name), "</name>"]
        lines += ["<description>", html.escape(props.description), "</description>"]
        lines += ["<location>", str(find_skill_md(folder)), "</location>", "</skill>"]
    lines.append("</available_skills>")
    return "\n".join(lines)
