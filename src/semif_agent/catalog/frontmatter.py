"""Split a SKILL.md into its YAML frontmatter and Markdown body, and parse the YAML.

The frontmatter opens with a line that is exactly ``---`` on the first line and
closes at the next line that is exactly ``---`` (trailing blanks allowed). A
``---`` inside a value (``a---b``) or in an indented block scalar is not a
delimiter. A UTF-8 byte-order mark and CRLF or CR line ends are accepted.

The YAML is parsed with PyYAML's safe loader (the C one when available).
Duplicate keys are an error, as the YAML specification says.

SKILL.md text is untrusted, so its size is bounded before anything is built
from it: a file over :data:`MAX_SKILL_MD_BYTES` is not read, frontmatter over
:data:`MAX_FRONTMATTER_BYTES` is not parsed, and parsed YAML whose aliases
would expand it past :data:`MAX_EXPANDED_SIZE` (nodes plus characters, each
alias counted as often as it is used), or nest it deeper than
:data:`MAX_NESTING`, is refused before it is turned into Python values. A
"billion laughs" of a few hundred bytes is one clear error, not hundreds of
megabytes in every later copy of the frontmatter.
"""

from __future__ import annotations

import errno
import json
import os
import re
import stat
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import yaml

from .errors import SkillParseError

_BOM = "\ufeff"
_DELIMITER = "---"

MAX_SKILL_MD_BYTES = 1024 * 1024
"""The largest SKILL.md read (real ones are a few kilobytes; the standard asks for under 500 lines)."""
MAX_FRONTMATTER_BYTES = 64 * 1024
"""The largest frontmatter parsed, in UTF-8 bytes (real ones are under a kilobyte)."""
MAX_EXPANDED_SIZE = MAX_FRONTMATTER_BYTES
"""The most the parsed frontmatter may hold with every alias expanded: one per node plus its characters."""
MAX_NESTING = 64
"""The deepest the parsed frontmatter may nest lists and mappings."""

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
    """A SKILL.md split in two: the raw YAML text, the body, and where the body starts; ``read_leniently`` says
    what a lenient parse read as plain text (:meth:`lenient_data`), when the document was parsed so."""

    frontmatter: str
    body: str
    body_line: int
    read_leniently: str = ""

    def data(self, *, path: str = "") -> dict[str, Any]:
        """The frontmatter parsed into a mapping, strictly (raises :class:`SkillParseError`)."""
        return load_mapping(self.frontmatter, path=path)

    def lenient_data(self, *, path: str = "") -> tuple[dict[str, Any], str]:
        """The frontmatter parsed as clients read it: ``(mapping, "")`` when it is valid YAML, else
        ``(mapping, what was read as plain text and why)`` when reading its unquoted one-line values as text
        makes it parse (see the module's docstring); raises the YAML's own :class:`SkillParseError` otherwise."""
        try:
            return load_mapping(self.frontmatter, path=path), ""
        except SkillParseError as exc:
            if not isinstance(exc.__cause__, yaml.YAMLError):
                raise  # past a size cap or a value that cannot be built: no reading of a line changes that
            quoted, keys = _values_as_text(self.frontmatter)
            if not keys:
                raise
            try:
                data = load_mapping(quoted, path=path)
            except SkillParseError:
                raise exc from None
            where = f"line {exc.line}: " if exc.line else ""
            said = ", ".join(repr(key) for key in keys)
            return (
                data,
                f"frontmatter is not valid YAML ({where}{exc.reason.removeprefix(_INVALID)}); read {said} as plain text to the end of the line",
            )


_INVALID = "invalid YAML in frontmatter: "
_TOP_LEVEL_VALUE = re.compile(r"([A-Za-z0-9_][A-Za-z0-9_.-]*):[ \t]+(\S.*?)[ \t]*")
"""A top-level ``key: value`` line: the key, and its value without surrounding blanks."""
_YAML_STARTS = tuple("'\"[{|>&*!#%")
"""How a value YAML reads as its own starts (quoted, a flow collection, a block scalar, an anchor, an alias, a tag,
a comment, a directive): such a line is left to YAML."""
_RESERVED_STARTS = ("@", "`")
"""Characters YAML reserves that cannot start a plain value; a value starting so is text."""


def _values_as_text(yaml_text: str) -> tuple[str, list[str]]:
    """``yaml_text`` with each top-level one-line value that YAML refuses as plain text (it holds ``": "``, ends
    with a colon, or starts with a reserved character) written as a quoted string, and the keys of those lines."""
    lines = yaml_text.split("\n")
    keys: list[str] = []
    for number, line in enumerate(lines):
        found = _TOP_LEVEL_VALUE.fullmatch(line)
        if found is None:
            continue
        key, value = found.groups()
        if value.startswith(_YAML_STARTS):
            continue
        if ": " in value or value.endswith(":") or value.startswith(_RESERVED_STARTS):
            lines[number] = f"{key}: {json.dumps(value, ensure_ascii=False)}"  # JSON strings are YAML strings
            keys.append(key)
    return "\n".join(lines), keys


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


def _construct(loader: _SkillLoader, node: yaml.Node, path: str) -> object:
    """The values of the composed ``node``. PyYAML's constructors raise more than :class:`yaml.YAMLError` on values
    they cannot build (a date of month 13 or an integer of thousands of digits: ``ValueError``; an unknown tagged
    value: ``KeyError``, ``AttributeError``...): each is this skill's parse error, never a failure of the whole load."""
    try:
        return loader.construct_document(node)
    except yaml.YAMLError:
        raise
    except (ValueError, TypeError, KeyError, AttributeError, IndexError, OverflowError, RecursionError) as exc:
        where = getattr(node, "start_mark", None)
        found = str(exc).splitlines()[0] if str(exc) else type(exc).__name__
        raise SkillParseError(
            f"invalid value in frontmatter: {found[:120]}", path=path, line=where.line + 2 if where else 0
        ) from None


def load_mapping(yaml_text: str, *, path: str = "") -> dict[str, Any]:
    """Parse frontmatter YAML that must be a mapping (raises :class:`SkillParseError`, also past the size caps)."""
    size = len(yaml_text.encode("utf-8", "surrogatepass"))
    if size > MAX_FRONTMATTER_BYTES:
        raise SkillParseError(
            f"frontmatter is {size} bytes; at most {MAX_FRONTMATTER_BYTES} are read", path=path, line=2
        )
    loader = _SkillLoader(yaml_text)  # a safe loader
    try:
        node = loader.get_single_node()
        if node is not None:
            _check_expansion(node, path)
        data = _construct(loader, node, path) if node is not None else None
    except yaml.YAMLError as exc:
        mark = getattr(exc, "problem_mark", None)
        line = mark.line + 2 if mark is not None else 0
        problem = getattr(exc, "problem", None) or str(exc).splitlines()[0]
        raise SkillParseError(f"invalid YAML in frontmatter: {problem}", path=path, line=line) from exc
    finally:
        loader.dispose()
    if data is None:
        data = {}
    if not isinstance(data, dict):
        raise SkillParseError("frontmatter must be a YAML mapping of keys to values", path=path, line=2)
    return data


def _check_expansion(root: yaml.Node, path: str) -> None:
    """Refuse a node graph that, with every alias expanded, holds more than :data:`MAX_EXPANDED_SIZE` or nests
    deeper than :data:`MAX_NESTING` (raises :class:`SkillParseError`).

    An alias is the same node object met again, so each node's expanded size
    and height are worked out once, children first, and counted wherever the
    node is used: the measure is exact, and its cost the number of distinct
    nodes. A node that holds itself (a recursive alias) never expands to a
    finite document.
    """
    measured: dict[int, tuple[int, int]] = {}  # id(node) -> (expanded size, height)
    open_nodes: set[int] = set()  # the nodes whose children are being measured: the current one's ancestors
    stack: list[tuple[yaml.Node, bool]] = [(root, False)]
    while stack:
        node, children_done = stack.pop()
        key = id(node)
        if isinstance(node, yaml.ScalarNode):
            measured[key] = (1 + len(node.value), 1)
            continue
        if children_done:
            open_nodes.discard(key)
            children = [measured[id(child)] for child in _children(node)]
            size = 1 + sum(child[0] for child in children)
            height = 1 + max((child[1] for child in children), default=0)
            line = node.start_mark.line + 2
            if size > MAX_EXPANDED_SIZE:
                reason = f"frontmatter expands past {MAX_EXPANDED_SIZE} characters (YAML aliases); refused"
                raise SkillParseError(reason, path=path, line=line)
            if height > MAX_NESTING:
                raise SkillParseError(
                    f"frontmatter nests deeper than {MAX_NESTING} levels; refused", path=path, line=line
                )
            measured[key] = (size, height)
            continue
        if key in measured:
            continue
        if key in open_nodes:
            raise SkillParseError("frontmatter holds itself (a recursive YAML alias); refused", path=path, line=2)
        open_nodes.add(key)
        stack.append((node, True))
        stack.extend((child, False) for child in _children(node) if id(child) not in measured)


def _children(node: yaml.Node) -> list[yaml.Node]:
    if isinstance(node, yaml.MappingNode):
        return [part for pair in node.value for part in pair]
    return list(node.value) if isinstance(node, yaml.SequenceNode) else []


def parse_document(text: str, *, path: str = "") -> tuple[dict[str, Any], str]:
    """``(frontmatter mapping, body)`` of SKILL.md ``text`` (raises :class:`SkillParseError`)."""
    document = split_document(text, path=path)
    return document.data(path=path), document.body


def read_skill_md_text(skill_md: Path) -> str:
    """The text of one SKILL.md file (raises :class:`SkillParseError` when unreadable, over
    :data:`MAX_SKILL_MD_BYTES`, a link or not a regular file: a device or a pipe is never read, and a file
    swapped for a link since it was found is not followed)."""
    try:
        fd = os.open(skill_md, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK | getattr(os, "O_CLOEXEC", 0))
    except OSError as exc:
        reason = "a link, not read" if exc.errno == errno.ELOOP else f"cannot read ({exc.strerror})"
        raise SkillParseError(reason, path=str(skill_md)) from exc
    return read_opened_skill_md(fd, str(skill_md))


def read_opened_skill_md(fd: int, path: str) -> str:
    """The text of the SKILL.md file open as ``fd`` (closed after), named ``path`` in errors, checked as
    :func:`read_skill_md_text` checks it: a regular file, at most :data:`MAX_SKILL_MD_BYTES`, UTF-8."""
    try:
        if not stat.S_ISREG(os.fstat(fd).st_mode):
            raise SkillParseError("not a regular file", path=path)
        with os.fdopen(fd, "rb") as file:
            fd = -1
            raw = file.read(MAX_SKILL_MD_BYTES + 1)
    except OSError as exc:
        raise SkillParseError(f"cannot read ({exc.strerror})", path=path) from exc
    finally:
        if fd >= 0:
            os.close(fd)
    if len(raw) > MAX_SKILL_MD_BYTES:
        raise SkillParseError(f"SKILL.md is over {MAX_SKILL_MD_BYTES} bytes; not read", path=path)
    try:
        return raw.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise SkillParseError("not UTF-8 text", path=path) from exc


def read_document(skill_md: Path) -> SkillDocument:
    """Read (:func:`read_skill_md_text`) and split one SKILL.md file (raises :class:`SkillParseError`)."""
    return split_document(read_skill_md_text(skill_md), path=str(skill_md))
