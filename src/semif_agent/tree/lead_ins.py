"""The lead-ins a code skill's body says it is asked with: the phrases it cuts from a request before its content.

A body that takes the content out of a request ("Don't let me forget to
call the plumber": the to-do is "call the plumber") names the phrases that
lead into it, usually as a module-level list of patterns (``LEAD_INS``,
``LEAD_IN_PATTERNS``...). They are the skill's own words for how it is asked,
as its examples are: the act gate counts them (:func:`..loop.evidence.skill_fits`).

The body is read as text, never run: its source is parsed, the string
constants assigned to a name with ``LEAD_IN`` in it are taken, and each, a
regular expression, is spelled out into the phrases it matches from its start
(alternatives and optional parts each way, a space class as a space), up to
:data:`MAX_PHRASES`; a part that stands for many texts (a class of letters, a
wildcard) ends the phrase there. A body that cannot be read or parsed has none.
"""

from __future__ import annotations

import ast
import importlib
import re
import sys
from functools import lru_cache
from pathlib import Path
from typing import Any

# the parser of the re module (``sre_parse`` before Python 3.11)
sre_parse: Any = importlib.import_module("re._parser" if sys.version_info >= (3, 11) else "sre_parse")
sre_constants: Any = importlib.import_module("re._constants" if sys.version_info >= (3, 11) else "sre_constants")

MAX_BODY_BYTES = 256 * 1024  # a body larger than this is not read for lead-ins
MAX_PHRASES = 512  # phrases spelled out of one pattern, at most
MAX_PATTERN_CHARS = 2000
_NAME = re.compile(r"LEAD_?INS?\b|LEAD_IN_", re.IGNORECASE)


def body_lead_ins(path: Path | None) -> tuple[str, ...]:
    """The lead-in phrases of the body at ``path`` (lower case, two words or more), kept while the file is unchanged."""
    if path is None:
        return ()
    try:
        stat = path.stat()
    except OSError:
        return ()
    if stat.st_size > MAX_BODY_BYTES:
        return ()
    return _lead_ins(str(path), stat.st_size, stat.st_mtime_ns)


@lru_cache(maxsize=512)
def _lead_ins(path: str, size: int, mtime: int) -> tuple[str, ...]:
    try:
        tree = ast.parse(Path(path).read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, SyntaxError, ValueError, RecursionError, MemoryError):
        return ()
    phrases: dict[str, None] = {}
    for node in tree.body:
        if not isinstance(node, (ast.Assign, ast.AnnAssign)) or node.value is None:
            continue
        targets = node.targets if isinstance(node, ast.Assign) else [node.target]
        if not any(isinstance(t, ast.Name) and _NAME.search(t.id) for t in targets):
            continue
        for constant in ast.walk(node.value):
            if isinstance(constant, ast.Constant) and isinstance(constant.value, str):
                phrases.update(dict.fromkeys(spelled_out(constant.value)))
    return tuple(phrases)


def spelled_out(pattern: str) -> list[str]:
    """The phrases ``pattern`` matches from its start (see the module), lower case, of two words or more."""
    if len(pattern) > MAX_PATTERN_CHARS:
        return []
    try:
        parsed = sre_parse.parse(pattern, re.IGNORECASE)
    except (re.error, RecursionError, OverflowError, ValueError):
        return []
    found = []
    for text, _ in _spell(list(parsed)):
        words = " ".join(text.lower().split())
        if len(words.split()) >= 2:
            found.append(words)
    return list(dict.fromkeys(found))


def _spell(items: list[Any]) -> list[tuple[str, bool]]:
    """(text, ended) for each way through ``items``: ``ended`` once a part that stands for many texts was met."""
    ways: list[tuple[str, bool]] = [("", False)]
    for op, value in items:
        parts = _part(op, value)
        ways = [
            (text if ended else text + part, ended or part_ended)
            for text, ended in ways
            for part, part_ended in (parts if not ended else [("", True)])
        ]
        ways = list(dict.fromkeys(ways))[:MAX_PHRASES]
    return ways


def _part(op: Any, value: Any) -> list[tuple[str, bool]]:
    c: Any = sre_constants
    if op is c.LITERAL:
        return [(chr(value), False)]
    if op is c.AT:
        return [("", False)]
    if op is c.SUBPATTERN:
        return _spell(list(value[-1]))
    if op is c.BRANCH:
        return [way for branch in value[1] for way in _spell(list(branch))][:MAX_PHRASES]
    if op is c.IN:
        if any(o is c.CATEGORY and v is c.CATEGORY_SPACE for o, v in value):
            return [(" ", False)]
        literals = [chr(v) for o, v in value if o is c.LITERAL]
        return [(literals[0], False)] if len(literals) == len(value) else [("", True)]
    if op in (c.MAX_REPEAT, c.MIN_REPEAT):
        low, high, inner = value
        once = _spell(list(inner))
        if low == 0:
            return [("", False), *once] if high == 1 else [("", False)]
        return once
    return [("", True)]
