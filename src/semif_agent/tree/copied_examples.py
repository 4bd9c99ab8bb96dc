"""A skill's examples that copy another skill's are left out: the skill loaded first keeps them.

Anyone can write a SKILL.md, and its ``examples`` steer the routing: a skill dropped into ``skills/`` that lists
the example requests another skill is known by (the same text, case and spacing aside) would take that skill's
requests. So when the tree is loaded, an example a skill gives that an earlier skill gives already is left out of
the later one, with a warning naming both. Earlier is in the order skills load: the code skills
(``categories.json``) first, then the SKILL.md skills in the precedence of their locations and folders. Copies of one skill shipped in several folders (one name, told apart with ``~``) are one skill,
and keep their examples; so do a skill's learned examples, which come from a person's labels.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import replace

from .._text import plural, text_key
from ..errors import ManifestError
from .leaf_ids import SEPARATOR
from .manifests import SkillManifest


def without_copied_examples(
    skills: Mapping[str, SkillManifest], problems: list[ManifestError]
) -> dict[str, SkillManifest]:
    """``skills`` (in the order they load) with each example that an earlier skill gives already left out of the
    later skill; a warning for each skill that lost some is appended to ``problems``."""
    owner: dict[str, str] = {}
    kept = dict(skills)
    for name in skills:
        skill = skills[name]
        learned = set(skill.learned_examples)
        examples: list[str] = []
        copied: dict[str, list[str]] = {}
        for text in skill.examples:
            key = text_key(text)
            holder = owner.setdefault(key, name)
            if holder != name and text not in learned and _base(holder) != _base(name):
                copied.setdefault(holder, []).append(text)
            else:
                examples.append(text)
        if not copied:
            continue
        kept[name] = replace(skill, examples=tuple(examples))
        for holder, texts in copied.items():
            problems.append(
                ManifestError(
                    f"skill {name!r} copies {plural(len(texts), 'example')} of skill {holder!r} "
                    f"(first {texts[0]!r}): left out of {name!r}, {holder!r} keeps them",
                    file=str(skill.source or ""),
                )
            )
    return kept


def _base(name: str) -> str:
    """The skill a leaf id is a copy of (its name before ``~``)."""
    return name.split(SEPARATOR, 1)[0]
