"""What a skill's name may be: one rule for the manifests, the tree builder and the SKILL.md catalog.

- A *name word* is lowercase ASCII letters, digits and ``_``, in parts
  joined by single hyphens: ``word-counter``, ``pull_requests``. Every ASCII
  name the Agent Skills specification allows (:func:`.spec.name_problems`)
  is one, so a SKILL.md skill's name is a valid name as written.
- A category's name is one name word. A code skill's name is name words
  joined by ``.`` (``email.compose``, ``docs.word-counter``): a dot only ever
  separates a category from what it holds, so ``category.leaf`` stays
  unambiguous.
- A SKILL.md skill's leaf id is its name as written (its author's name, which
  the tree must reach even when the specification frowns on it): 1 to 200
  characters, no whitespace and no slashes.
"""

from __future__ import annotations

import re

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


def skill_md_leaf_id(name: str, folder_name: str) -> str:
    """A SKILL.md skill's leaf id: its name as written when it can be one, else its folder's name."""
    for candidate in (name, folder_name, "-".join(name.replace("/", " ").replace("\\", " ").split())):
        if skill_md_leaf_problem(candidate) is None:
            return candidate
    return "skill"


def code_skill_name(name: str) -> str | None:
    """``name`` made a valid code-skill name (lowercase, other characters to ``_``), or None when nothing is left."""
    cleaned = re.sub(r"[^a-z0-9_.]+", "_", name.strip().lower()).strip("._")
    cleaned = re.sub(r"\.{2,}", ".", cleaned)
    return cleaned if cleaned and code_skill_name_problem(cleaned) is None else None
