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

The body is anyone's text, so the reading is bounded: a pattern's phrases are
capped while they are built (each part's ways times the ways so far never
grows past :data:`MAX_PHRASES`), and the work for one body, phrases built
across all its patterns (:data:`MAX_WORK`), patterns read
(:data:`MAX_PATTERNS`) and phrases kept (:data:`MAX_BODY_PHRASES`), is
bounded too. A body past any bound has no lead-ins at all: a skill loses
words it might have had, never a person's time.
"""

from __future__ import annotations

import ast
import importlib
import re
import sys
from functools import lru_cache
from pathlib import Path
from types import ModuleType
from typing import Any

# the parser of the re module (``sre_parse`` before Python 3.11)
sre_parse: ModuleType = importlib.import_module("re._parser" if sys.version_info >= (3, 11) else "sre_parse")
sre_constants: ModuleType = importlib.import_module("re._constants" if sys.version_info >= (3, 11) else "sre_constants")

MAX_BODY_BYTES = 256 * 1024  # a body larger than this is not read for lead-ins
MAX_PHRASES = 512  # phrases spelled out of one pattern, at most
MAX_PATTERN_CHARS = 2000
MAX_PATTERNS = 64  # lead-in patterns read from one body, at most
MAX_BODY_PHRASES = 2048  # phrases kept from one body, at most
MAX_WORK = 20_000  # phrases built (kept or not) while spelling out one body's patterns, at most
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


class TooMuchWork(Exception):
    """Spelling out a body's lead-ins went past a bound (see the module): the body has none."""


class Work:
    """The phrases built so far while spelling out one body, against :data:`MAX_WORK`."""

    def __init__(self, limit: int = MAX_WORK) -> None:
        self.limit = limit
        self.built = 0

    def build(self, count: int = 1) -> None:
        self.built += count
        if self.built > self.limit:
            raise TooMuchWork(f"more than {self.limit} phrases built")


@lru_cache(maxsize=512)
def _lead_ins(path: str, size: int, mtime: int) -> tuple[str, ...]:
    try:
        source = Path(path).read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError):
        return ()
    return source_lead_ins(source)


def source_lead_ins(source: str, work: Work | None = None) -> tuple[str, ...]:
    """The lead-in phrases of a body's ``source`` (see the module); none when it cannot be parsed or is past a bound."""
    if len(source.encode("utf-8", "replace")) > MAX_BODY_BYTES:
        return ()
    work = work if work is not None else Work()
    try:
        tree = ast.parse(source)
    except (SyntaxError, ValueError, RecursionError, MemoryError):
        return ()
    patterns = [
        constant.value
        for node in tree.body
        if isinstance(node, (ast.Assign, ast.AnnAssign)) and node.value is not None
        for targets in [node.targets if isinstance(node, ast.Assign) else [node.target]]
        if any(isinstance(t, ast.Name) and _NAME.search(t.id) for t in targets)
        for constant in ast.walk(node.value)
        if isinstance(constant, ast.Constant) and isinstance(constant.value, str)
    ]
    if len(patterns) > MAX_PATTERNS:
        return ()
    phrases: dict[str, None] = {}
    try:
        for pattern in patterns:
            phrases.update(dict.fromkeys(spelled_out(pattern, work)))
            if len(phrases) > MAX_BODY_PHRASES:
                return ()
    except TooMuchWork:
        return ()
    return tuple(phrases)


def spelled_out(pattern: str, work: Work | None = None) -> list[str]:
    """The phrases ``pattern`` matches from its start (see the module), lower case, of two words or more.

    Raises :class:`TooMuchWork` when ``work`` (a fresh :class:`Work` if not given) goes past its bound.
    """
    if len(pattern) > MAX_PATTERN_CHARS:
        return []
    try:
        parsed = sre_parse.parse(pattern, re.IGNORECASE)
    except (re.error, RecursionError, OverflowError, ValueError):
        return []
    found = []
    try:
        ways = _spell(list(parsed), work if work is not None else Work())
    except RecursionError:
        return []
    for text, _ in ways:
        words = " ".join(text.lower().split())
        if len(words.split()) >= 2:
            found.append(words)
    return list(dict.fromkeys(found))


def _spell(items: list[Any], work: Work) -> list[tuple[str, bool]]:
    """(text, ended) for each way through ``items``: ``ended`` once a part that stands for many texts was met.

    At most :data:`MAX_PHRASES` ways, cut while they are built: each way built counts against ``work``.
    """
    ways: list[tuple[str, bool]] = [("", False)]
    for op, value in items:
        parts = _part(op, value, work)
        joined: dict[tuple[str, bool], None] = {}
        for text, ended in ways:
            for part, part_ended in parts if not ended else [("", True)]:
                work.build()
                joined[(text if ended else text + part, ended or part_ended)] = None
                if len(joined) >= MAX_PHRASES:
                    break
            if len(joined) >= MAX_PHRASES:
                break
        ways = list(joined)
    return ways


def _part(op: object, value: Any, work: Work) -> list[tuple[str, bool]]:
    c = sre_constants
    if op is c.LITERAL:
        return [(chr(value), False)]
    if op is c.AT:
        return [("", False)]
    if op is c.SUBPATTERN:
        return _spell(list(value[-1]), work)
    if op is c.BRANCH:
        ways: list[tuple[str, bool]] = []
        for branch in value[1]:
            ways.extend(_spell(list(branch), work))
            if len(ways) >= MAX_PHRASES:
                break
        return ways[:MAX_PHRASES]
    if op is c.IN:
        if any(o is c.CATEGORY and v is c.CATEGORY_SPACE for o, v in value):
            return [(" ", False)]
        literals = [chr(v) for o, v in value if o is c.LITERAL]
        return [(literals[0], False)] if len(literals) == len(value) else [("", True)]
    if op in (c.MAX_REPEAT, c.MIN_REPEAT):
        low, high, inner = value
        once = _spell(list(inner), work)
        if low == 0:
            return [("", False), *once] if high == 1 else [("", False)]
        return once
    return [("", True)]
