"""What a skill does to the workspace: ``"read"`` (looks things up, changes nothing) or ``"write"`` (changes files).

A code skill declares it in its manifest (``"effects": "read"``), a SKILL.md
skill in its frontmatter (``metadata: {effects: read}``). When a skill says
nothing, it is read from its own words, conservatively: ``"read"`` only when
what it does (its actions, else its description) names a way of reading and
no way of changing anything; otherwise ``"write"``. A skill wrongly taken to
write is at worst handed back for a question; one wrongly taken to read could
change files for a question, so doubt counts as writing.

A word is read as a verb with its inflections ("writes", "listed"), except
where the skill's words say what it does in the bare form ("Get live scores,
schedules, and standings"): there a word in "-s" is a noun and one in "-ed" a
participle of what it reads or writes, not a second verb: "schedules" and
"(live/final/scheduled)" say nothing of scheduling.
"""

from __future__ import annotations

import functools
import re
from collections.abc import Iterable

READ = "read"
WRITE = "write"
EFFECTS = (READ, WRITE)

READ_WORDS = frozenset(
    "read list show find search look locate get display view count answer print return report fetch query".split()
)
WRITE_WORDS = frozenset(
    """write wrote written add append insert create make save store send sent mark update edit change delete remove
erase move rename schedule cancel complete tick post upload run execute install modify replace""".split()
)
_VERBS = READ_WORDS | WRITE_WORDS
_OPENINGS = frozenset(verb[:3] for verb in _VERBS)
"""How a word that is a verb, inflected or not, starts (every inflection :func:`_base` knows keeps three letters)."""
_WORD = re.compile(r"[a-z]+")


def effects_problem(value: object) -> str | None:
    """Why ``value`` is not a valid ``effects`` (None: it is)."""
    if value in EFFECTS:
        return None
    return f"effects must be {' or '.join(repr(e) for e in EFFECTS)}, not {value!r}"


def infer_effects(description: str, actions: Iterable[str] = ()) -> str:
    """``"read"`` when the skill's words name only ways of reading, else ``"write"`` (see the module)."""
    texts = list(actions) or [description]
    words: set[str] = set()
    for text in texts:
        bare = _bare(text)
        words.update(_base(w, bare) for w in set(_WORD.findall(text.lower())) if w[:3] in _OPENINGS)
    if words & WRITE_WORDS or not words & READ_WORDS:
        return WRITE
    return READ


def _bare(text: str) -> bool:
    """Whether ``text`` says what the skill does in the bare form: its first word is a known verb as it stands
    ("Get live scores...", "List, add, edit..."), not inflected ("Gets", "Creates")."""
    first = _WORD.match(text.strip().lower())
    return first is not None and first.group() in _VERBS


@functools.lru_cache(maxsize=65_536)
def _base(word: str, bare: bool = False) -> str:
    """The word without an inflection its base is known by ("writes", "listed", "creating" -> write, list, create);
    ``bare``: the text's verbs are in the bare form, so a word in "-s" or "-ed" is a noun or a participle and keeps
    its ending."""
    for suffix, back in (("ing", ""), ("ing", "e"), ("ed", ""), ("ed", "e"), ("es", ""), ("s", "")):
        if bare and suffix != "ing":
            continue
        if word.endswith(suffix) and (base := word[: -len(suffix)] + back) in _VERBS:
            return base
    return word
