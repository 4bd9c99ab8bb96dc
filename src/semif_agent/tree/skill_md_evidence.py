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
process, when a tree is indexed for scoring, never per request; the stored tree
keeps what each body said with that version (:func:`evidence_to_json`), so a
new process reads only the bodies edited since (:func:`remember_evidence`).
"""

from __future__ import annotations

import functools
import re
from collections.abc import Mapping
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


Signature = tuple[int, int]
"""A file version: its size and modification time (ns)."""

_told: dict[str, tuple[Signature, BodyEvidence]] = {}


def skill_md_evidence(skill_md: Path) -> BodyEvidence:
    """:func:`body_evidence` of the SKILL.md file ``skill_md`` (nothing when it cannot be read)."""
    return signed_evidence(skill_md)[1]


def signed_evidence(skill_md: Path) -> tuple[Signature | None, BodyEvidence]:
    """The version of ``skill_md`` read and :func:`body_evidence` of it (None and nothing when it cannot be read):
    what :func:`remember_evidence` was told of that version, else read from the file."""
    try:
        info = skill_md.stat()
    except OSError:
        return None, BodyEvidence()
    signature = (info.st_size, info.st_mtime_ns)
    told = _told.get(str(skill_md))
    if told is not None and told[0] == signature:
        return signature, told[1]
    return signature, _evidence(str(skill_md), *signature)


def remember_evidence(skill_md: Path, signature: Signature, evidence: BodyEvidence) -> None:
    """Take ``evidence`` as what ``skill_md`` says while it is at the version ``signature`` (as a stored tree
    says): served without reading the file, and only while the file is at that version."""
    _told[str(skill_md)] = (signature, evidence)


def evidence_to_json(signature: Signature, evidence: BodyEvidence) -> dict[str, object]:
    return {"signature": list(signature), "uses": list(evidence.uses), "headings": list(evidence.headings)}


def evidence_from_json(data: object) -> tuple[Signature, BodyEvidence] | None:
    """What :func:`evidence_to_json` wrote, or None when ``data`` is not of that shape or over the bounds."""
    if not isinstance(data, Mapping):
        return None
    signature, uses, headings = data.get("signature"), data.get("uses"), data.get("headings")
    if not (
        isinstance(signature, list)
        and len(signature) == 2
        and all(isinstance(n, int) and not isinstance(n, bool) for n in signature)
        and _texts(uses, MAX_USES)
        and _texts(headings, MAX_HEADINGS)
    ):
        return None
    assert isinstance(uses, list) and isinstance(headings, list)
    return (signature[0], signature[1]), BodyEvidence(tuple(uses), tuple(headings))


def _texts(items: object, most: int) -> bool:
    return (
        isinstance(items, list)
        and len(items) <= most
        and all(isinstance(text, str) and len(text) <= MAX_ITEM_CHARS for text in items)
    )


@functools.lru_cache(maxsize=16_384)
def _evidence(path: str, size: int, mtime_ns: int) -> BodyEvidence:
    """One version of a file's evidence (``size`` and ``mtime_ns`` key the cache: an edited file is read again)."""
    try:
        return body_evidence(read_document(Path(path)).body)
    except (SkillParseError, OSError, UnicodeDecodeError):
        return BodyEvidence()
