"""The rules of the Agent Skills format for each frontmatter field, as plain functions.

Each ``check_*`` returns the problems it finds as messages (an empty list when
the value is fine). Strict validation reports them all as errors; lenient
loading reports most as warnings and skips a skill only for the fatal ones.

Names follow the specification and its reference library: 1 to 64 characters
after NFKC normalisation, lowercase letters (Unicode allowed, as the reference
library allows), digits and single hyphens, neither first nor last, and equal
to the skill's folder name.
"""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Mapping
from pathlib import Path

from .errors import SkillPathError
from .paths import resolve_inside

MAX_NAME_LENGTH = 64
MAX_DESCRIPTION_LENGTH = 1024
MAX_COMPATIBILITY_LENGTH = 500

SPEC_FIELDS = frozenset({"name", "description", "license", "compatibility", "metadata", "allowed-tools"})
"""The frontmatter keys of the Agent Skills specification."""
SEMIF_FIELDS = frozenset({"script", "hooks"})
"""The keys semif adds: a default script and lifecycle hooks, each naming a file inside the skill."""
KNOWN_FIELDS = SPEC_FIELDS | SEMIF_FIELDS

_HOOK_TYPE = re.compile(r"^[A-Za-z_][A-Za-z0-9_.-]{0,63}$")


def normalize_name(name: str) -> str:
    """The name as compared and stored: stripped and NFKC-normalised."""
    return unicodedata.normalize("NFKC", name.strip())


def name_problems(name: str) -> list[str]:
    """Problems of a skill name's form (length, characters, hyphens); not the folder match."""
    problems: list[str] = []
    if not name:
        return ["'name' must not be empty"]
    if len(name) > MAX_NAME_LENGTH:
        problems.append(f"'name' is {len(name)} characters long; at most {MAX_NAME_LENGTH} are allowed")
    if name != name.lower():
        problems.append(f"'name' {name!r} must be lowercase")
    if not all(char == "-" or char.isalnum() for char in name):
        problems.append(f"'name' {name!r} may only contain letters, digits and hyphens")
    if name.startswith("-") or name.endswith("-"):
        problems.append(f"'name' {name!r} must not start or end with a hyphen")
    if "--" in name:
        problems.append(f"'name' {name!r} must not contain two hyphens in a row")
    return problems


def folder_problems(name: str, folder: Path) -> list[str]:
    """A problem when ``name`` differs from the skill's folder name."""
    folder_name = unicodedata.normalize("NFKC", folder.name)
    if folder_name != name:
        return [f"'name' {name!r} must equal the folder name {folder.name!r}"]
    return []


def check_name(value: object, folder: Path | None) -> list[str]:
    """All problems of a ``name`` value, including the folder match when ``folder`` is given."""
    if value is None:
        return ["missing required field 'name'"]
    if not isinstance(value, str):
        return [f"'name' must be a string, not {_kind(value)}"]
    name = normalize_name(value)
    problems = name_problems(name)
    if folder is not None and name:
        problems.extend(folder_problems(name, folder))
    return problems


def check_description(value: object) -> list[str]:
    """Problems of a ``description`` value (required, 1 to 1024 characters)."""
    if value is None:
        return ["missing required field 'description'"]
    return _check_text("description", value, MAX_DESCRIPTION_LENGTH)


def check_compatibility(value: object) -> list[str]:
    """Problems of a ``compatibility`` value (optional, 1 to 500 characters)."""
    return _check_text("compatibility", value, MAX_COMPATIBILITY_LENGTH)


def check_license(value: object) -> list[str]:
    """Problems of a ``license`` value (a non-empty string)."""
    return _check_text("license", value, None)


def check_metadata(value: object) -> list[str]:
    """Problems of a ``metadata`` value (a mapping of strings to strings)."""
    if not isinstance(value, Mapping):
        return [f"'metadata' must be a mapping of strings to strings, not {_kind(value)}"]
    problems: list[str] = []
    for key, item in value.items():
        if not isinstance(key, str):
            problems.append(f"'metadata' key {key!r} must be a string, not {_kind(key)}")
        if not isinstance(item, str):
            fix = "quote it" if isinstance(item, (bool, int, float)) else "write it as one string"
            problems.append(f"'metadata.{key}' must be a string, not {_kind(item)} ({fix})")
    return problems


def check_allowed_tools(value: object) -> list[str]:
    """Problems of an ``allowed-tools`` value (a space-separated string of tool patterns)."""
    if not isinstance(value, str):
        return [f"'allowed-tools' must be a space-separated string, not {_kind(value)}"]
    if not value.strip():
        return ["'allowed-tools' must not be empty"]
    if value.count("(") != value.count(")"):
        return ["'allowed-tools' has unbalanced parentheses"]
    return [
        f"'allowed-tools' pattern {pattern!r} is not Tool, Tool(prefix:*) or Tool(exact): it would allow nothing"
        for pattern in split_allowed_tools(value)
        if tool_pattern_parts(pattern.rstrip(",")) is None
    ]


def check_script(value: object, root: Path) -> list[str]:
    """Problems of a ``script`` value (a relative path to a file inside the skill)."""
    return _check_skill_file("script", value, root)


def check_hooks(value: object, root: Path) -> list[str]:
    """Problems of a ``hooks`` value (a mapping of hook types to files inside the skill)."""
    if not isinstance(value, Mapping):
        return [f"'hooks' must be a mapping of hook types to script paths, not {_kind(value)}"]
    problems: list[str] = []
    for hook_type, script in value.items():
        if not isinstance(hook_type, str) or not _HOOK_TYPE.match(hook_type):
            problems.append(f"'hooks' key {hook_type!r} is not a hook type (letters, digits, '_', '.', '-')")
            continue
        problems.extend(_check_skill_file(f"hooks.{hook_type}", script, root))
    return problems


def check_unknown_keys(data: Mapping[str, object]) -> list[str]:
    """One problem per frontmatter key that neither the specification nor semif defines."""
    return [
        f"unknown field {key!r} (allowed: {', '.join(sorted(KNOWN_FIELDS))})" for key in data if key not in KNOWN_FIELDS
    ]


def split_allowed_tools(value: str) -> tuple[str, ...]:
    """Split ``allowed-tools`` at spaces outside parentheses: ``Bash(git commit:*) Read``."""
    tools: list[str] = []
    depth = 0
    current: list[str] = []
    for char in value:
        if char == "(":
            depth += 1
        elif char == ")":
            depth = max(depth - 1, 0)
        if char.isspace() and depth == 0:
            if current:
                tools.append("".join(current))
                current = []
            continue
        current.append(char)
    if current:
        tools.append("".join(current))
    return tuple(tools)


def tool_pattern_parts(pattern: str) -> tuple[str, str | None] | None:
    """An ``allowed-tools`` pattern's tool name and the text in its parentheses (None when it has none):
    ``Bash(git:*)`` is ``("Bash", "git:*")``; None when the pattern cannot be read (``Bash(git``, ``Bash()``)."""
    pattern = pattern.strip()
    name, paren, rest = pattern.partition("(")
    name = name.strip()
    if not name or ")" in name:
        return None
    if not paren:
        return name, None
    if len(rest) < 2 or not rest.endswith(")") or rest[:-1].count("(") != rest[:-1].count(")"):
        return None
    return name, rest[:-1]


def _check_text(field: str, value: object, limit: int | None) -> list[str]:
    if not isinstance(value, str):
        return [f"'{field}' must be a string, not {_kind(value)}"]
    if not value.strip():
        return [f"'{field}' must not be empty"]
    if limit is not None and len(value) > limit:
        return [f"'{field}' is {len(value)} characters long; at most {limit} are allowed"]
    return []


def _check_skill_file(field: str, value: object, root: Path) -> list[str]:
    if not isinstance(value, str) or not value.strip():
        return [f"'{field}' must be a relative path to a file inside the skill"]
    try:
        target = resolve_inside(root, value.strip())
    except SkillPathError:
        return [f"'{field}' {value!r} is not inside the skill"]
    if not target.is_file():
        return [f"'{field}' {value!r} is not a file of the skill"]
    return []


def _kind(value: object) -> str:
    if value is None:
        return "empty"
    if isinstance(value, bool):
        return "a boolean"
    if isinstance(value, (int, float)):
        return "a number"
    if isinstance(value, Mapping):
        return "a mapping"
    if isinstance(value, list):
        return "a list"
    return type(value).__name__
