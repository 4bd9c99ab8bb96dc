"""What a SKILL.md's body says about when to use it: more to find the skill by than its description.

People describe their task ("nobody has ever tried a restore of our Mongo
replica set"), and a skill's description often says what it is rather than
when it serves; its body usually says the rest, under headings such as
``## When to Use`` or ``## Triggers``, as a list of situations. Those items
(:attr:`BodyEvidence.uses`) are scored as another text of the skill, the skill
taking the better of its description and them; the body's headings
(:attr:`BodyEvidence.headings`, the generic ones left out) add words to its BM25
text. Both are bounded, so a long body weighs no more than a short one.

A body is read once per file version (its size and modification time) per
process, when a tree is indexed for scoring, never per request.
"""

from __future__ import annotations

import functools
import re
from dataclasses import dataclass
from pathlib import Path

from ..catalog.errors import SkillParseError
from ..catalog.frontmatter import read_document

MAX_USES = 12
"""The most "when to use" items kept of one skill."""
MAX_HEADINGS = 20
"""The most headings kept of one skill."""
MAX_ITEM_CHARS = 200
"""The longest item or heading kept (a longer one is cut)."""
MAX_LINE_CHARS = 1_000
"""The most of one body line read: no heading or item needs more, and every line costs bounded work."""
USE_HEADING = re.compile(
    r"when to (use|apply|invoke)|use (this|it) when|use when|triggers?|activat|use cases?|examples?", re.I
)
GENERIC_HEADING = re.compile(
    r"^(overview|introduction|usage|summary|contents|table of contents|references?|notes?|instructions|purpose|"
    r"output|quick start|resources|related( skills)?)$",
    re.IGNORECASE,
)
ITEM = re.compile(r"\s*(?:[-*+]|\d+[.)])\s+(\S.*)")
MARKUP = re.compile(r"[*_`]+")


@dataclass(frozen=True)
class BodyEvidence:
    """A SKILL.md body's "when to use" items and its headings (generic ones left out), each bounded."""

    uses: tuple[str, ...] = ()
    headings: tuple[str, ...] = ()


def body_evidence(body: str) -> BodyEvidence:
    """The items listed under a "when to use" heading of ``body``, and its other headings (code blocks skipped)."""
    uses: list[str] = []
    headings: list[str] = []
    under_use = in_code = False
    for whole_line in body.splitlines():
        line = whole_line[:MAX_LINE_CHARS]
        if line.lstrip().startswith("```"):
            in_code = not in_code
            continue
        if in_code:
            continue
        heading = heading_text(line)
        if heading is not None:
            text = MARKUP.sub("", heading).strip()
            under_use = bool(USE_HEADING.search(text))
            if not under_use and not GENERIC_HEADING.match(text) and len(headings) < MAX_HEADINGS:
                headings.append(text[:MAX_ITEM_CHARS])
            continue
        item = ITEM.match(line) if under_use else None
        if item and len(uses) < MAX_USES:
            text = MARKUP.sub("", item.group(1)).strip().strip("\"“”'")
            if text:
                uses.append(text[:MAX_ITEM_CHARS])
    return BodyEvidence(tuple(dict.fromkeys(uses)), tuple(dict.fromkeys(headings)))


def heading_text(line: str) -> str | None:
    """The text of ``line`` when it is a Markdown heading of level 1 to 4 (its closing ``#`` left out), else None.

    String operations only, so a hostile line (a heading of thousands of
    spaces) costs time in proportion to its length, never more.
    """
    rest = line.lstrip("#")
    level = len(line) - len(rest)
    if not 1 <= level <= 4 or not rest[:1].isspace():
        return None
    text = rest.strip()
    closed = text.rstrip("#").rstrip()
    return closed or text[:1]


def skill_md_evidence(skill_md: Path) -> BodyEvidence:
    """:func:`body_evidence` of the SKILL.md file ``skill_md`` (nothing when it cannot be read)."""
    try:
        info = skill_md.stat()
    except OSError:
        return BodyEvidence()
    return _evidence(str(skill_md), info.st_size, info.st_mtime_ns)


@functools.lru_cache(maxsize=16_384)
def _evidence(path: str, size: int, mtime_ns: int) -> BodyEvidence:
    """One version of a file's evidence (``size`` and ``mtime_ns`` key the cache: an edited file is read again)."""
    try:
        return body_evidence(read_document(Path(path)).body)
    except (SkillParseError, OSError, UnicodeDecodeError):
        return BodyEvidence()
