"""What a skill's name may be: one rule for the manifests, the tree builder and the SKILL.md catalog.

- A *name word* is lowercase ASCII letters, digits and ``_``, in parts
  joined by single hyphens: ``word-counter``, ``pull_requests``. Every ASCII
  name the Agent Skills specification allows (:func:`.spec.name_problems`)
  is one, so a SKILL.md skill's name is a valid name as written.
- A category's name is one name word. A code skill's name is name words
  joined by ``.`` (``email.compose``, ``docs.word-counter``): a dot only ever
  separates a category from what it holds, so ``category.leaf`` stays
  unambiguous.
- A SKILL.md skill's leaf id is its name normalised as Claude Code does
  (:func:`normalized_skill_name`: lowercase, spaces and ``_`` to hyphens,
  other characters dropped), so ``PDF Tools`` and ``pdf_tools`` load as
  ``pdf-tools``; the name as written stays its display name. An id is 1 to
  200 characters, no whitespace and no slashes.
"""

from __future__ import annotations

import re
import unicodedata

NAME_WORD = r"[a-z0-9_]+(?:-[a-z0-9_]+)*"
CATEGORY_RE = re.compile(NAME_WORD)
NAME_RE = re.compile(rf"{NAME_WORD}(?:\.{NAME_WORD})*")
LEAF_ID_RE = re.compile(r"[^\s/\\]{1,200}")
RESERVED_IDS = frozenset({"none"})
"""Names no skill or category may take: the ``none`` option of every decision."""

_WORD_RULE = "only lowercase letters, digits and '_', with single '-' inside"


def category_name_problem(name: str) -> str | None:
    """Why ``name`` cannot name a category, or None when it can."""
    if not CATEGORY_RE.fullmatch(name):
        return f"category name {name!r} may hold {_WORD_RULE}"
    if name in RESERVED_IDS:
        return f"{name!r} is reserved (every decision's `none` option)"
    return None


def code_skill_name_problem(name: str) -> str | None:
    """Why ``name`` cannot name a code skill, or None when it can."""
    if not NAME_RE.fullmatch(name):
        return f"name {name!r} may hold {_WORD_RULE} and '.' between category and leaf"
    return None


def skill_md_leaf_problem(name: str) -> str | None:
    """Why ``name`` cannot be a SKILL.md skill's leaf id, or None when it can."""
    if not LEAF_ID_RE.fullmatch(name):
        return f"name {name!r} must be 1-200 characters without spaces or slashes"
    return None


MAX_SKILL_NAME = 64
"""The longest name the Agent Skills specification allows; a longer one is cut."""


def normalized_skill_name(name: str) -> str:
    """``name`` as the standard wants it: lowercase letters and digits in parts joined by single hyphens.

    Spaces, ``_`` and other separators become hyphens, any other character
    is dropped, and the result is cut to :data:`MAX_SKILL_NAME` characters
    (``"PDF Tools (beta)"`` -> ``"pdf-tools-beta"``). Empty when nothing is left.
    """
    text = unicodedata.normalize("NFKC", name).lower()
    kept = "".join(char if char.isalnum() else "-" if char in _SEPARATORS or char.isspace() else "" for char in text)
    parts = [part for part in kept.split("-") if part]
    return "-".join(parts)[:MAX_SKILL_NAME].strip("-")


_SEPARATORS = frozenset("-_./\\:+")


def skill_md_leaf_id(name: str, folder_name: str) -> str:
    """A SKILL.md skill's leaf id: its name normalised, else its folder's name normalised, else ``skill``."""
    for candidate in (name, folder_name):
        normalized = normalized_skill_name(candidate)
        if normalized and skill_md_leaf_problem(normalized) is None:
            return normalized
    return "skill"


def code_skill_name(name: str) -> str | None:
    """``name`` made a valid code-skill name (lowercase, other characters to ``_``), or None when nothing is left."""
    cleaned = re.sub(r"[^a-z0-9_.]+", "_", name.strip().lower()).strip("._")
    cleaned = re.sub(r"\.{2,}", ".", cleaned)
    return cleaned if cleaned and code_skill_name_problem(cleaned) is None else None
