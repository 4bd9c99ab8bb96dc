"""Split a SKILL.md into its YAML frontmatter and Markdown body, and parse the YAML.

The frontmatter opens with a line that is exactly ``---`` on the first line and
closes at the next line that is exactly ``---`` (trailing blanks allowed). A
``---`` inside a value (``a---b``) or in an indented block scalar is not a
delimiter. A UTF-8 byte-order mark and CRLF or CR line ends are accepted.

The YAML is parsed with PyYAML's safe loader (the C one when available).
Duplicate keys are an error, as the YAML specification says.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any

import yaml

from .errors import SkillParseError

_BOM = "\ufeff"
_DELIMITER = "---"

try:
    from yaml import CSafeLoader as _SafeBase
except ImportError:  # PyYAML built without libyaml
    from yaml import SafeLoader as _SafeBase  # type: ignore[assignment]  # the same safe loader, in Python


class _SkillLoader(_SafeBase):
    """The safe loader, refusing duplicate mapping keys."""

    def construct_mapping(self, node: yaml.MappingNode, deep: bool = False) -> dict[Any, Any]:
        seen: set[tuple[str, str]] = set()
        for key_node, _value_node in node.value:
            if isinstance(key_node, yaml.ScalarNode):
                key = (key_node.tag, key_node.value)
                if key in seen:
                    raise yaml.constructor.ConstructorError(
                        "while constructing a mapping",
                        node.start_mark,
                        f"found duplicate key {key_node.value!r}",
                        key_node.start_mark,
                    )
                seen.add(key)
        return super().construct_mapping(node, deep=deep)


@dataclass(frozen=True)
class SkillDocument:
    """A SKILL.md split in two: the raw YAML text, the body, and where the body starts."""

    frontmatter: str
    body: str
    body_line: int

    def data(self, *, path: str = "") -> dict[str, Any]:
        """The frontmatter parsed into a mapping (raises :class:`SkillParseError`)."""
        return load_mapping(self.frontmatter, path=path)


def normalize_text(text: str) -> str:
    """``text`` without a leading byte-order mark and with ``\\n`` line ends."""
    if text.startswith(_BOM):
        text = text[1:]
    if "\r" in text:
        text = text.replace("\r\n", "\n").replace("\r", "\n")
    return text


def split_document(text: str, *, path: str = "") -> SkillDocument:
    """Split SKILL.md ``text`` at its ``---`` delimiter lines (raises :class:`SkillParseError`)."""
    text = normalize_text(text)
    first_end = text.find("\n")
    first_line = text if first_end < 0 else text[:first_end]
    if first_line.rstrip(" \t") != _DELIMITER:
        raise SkillParseError("no frontmatter: the file must start with a '---' line", path=path, line=1)
    start = first_end + 1
    search_from = first_end
    while True:
        newline = text.find("\n" + _DELIMITER, search_from)
        if newline < 0:
            break
        line_start = newline + 1
        line_end = text.find("\n", line_start)
        line = text[line_start:] if line_end < 0 else text[line_start:line_end]
        if line.rstrip(" \t") == _DELIMITER:
            body = "" if line_end < 0 else text[line_end + 1 :]
            frontmatter = text[start:line_start]
            return SkillDocument(frontmatter, body, frontmatter.count("\n") + 3)
        search_from = line_start
    raise SkillParseError("frontmatter is not closed: no '---' line after it", path=path, line=1)


def load_mapping(yaml_text: str, *, path: str = "") -> dict[str, Any]:
    """Parse frontmatter YAML that must be a mapping (raises :class:`SkillParseError`)."""
    try:
        data = yaml.load(yaml_text, Loader=_SkillLoader)  # a safe loader
    except yaml.YAMLError as exc:
        mark = getattr(exc, "problem_mark", None)
        line = mark.line + 2 if mark is not None else 0
        problem = getattr(exc, "problem", None) or str(exc).splitlines()[0]
        raise SkillParseError(f"invalid YAML in frontmatter: {problem}", path=path, line=line) from exc
    if data is None:
        data = {}
    if not isinstance(data, dict):
        raise SkillParseError("frontmatter must be a YAML mapping of keys to values", path=path, line=2)
    return data


def parse_document(text: str, *, path: str = "") -> tuple[dict[str, Any], str]:
    """``(frontmatter mapping, body)`` of SKILL.md ``text`` (raises :class:`SkillParseError`)."""
    document = split_document(text, path=path)
    return document.data(path=path), document.body


def read_document(skill_md: Path) -> SkillDocument:
    """Read and split one SKILL.md file (raises :class:`SkillParseError`, also when unreadable)."""
    try:
        text = skill_md.read_text(encoding="utf-8")
    except UnicodeDecodeError as exc:
        raise SkillParseError("not UTF-8 text", path=str(skill_md)) from exc
    except OSError as exc:
        raise SkillParseError(f"cannot read ({exc.strerror})", path=str(skill_md)) from exc
    return split_document(text, path=str(skill_md))
