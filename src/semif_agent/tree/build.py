"""Trees for flat catalogs: group skills into categories of at most 15 children, as shallow as that allows.

Fifteen, so that a decision at any node, with its ``none`` option, shows a
model at most 16 options (what the LLM engine accepts).

- :func:`build_tree` embeds the skills on the local model (word vectors, with
  one warning, when it is not installed), groups them by balanced,
  capacity-constrained k-means into a tree of the least depth the limit allows
  (:mod:`._clusters`), and names every category from what its skills share
  and its siblings do not (:mod:`.naming`). Seeds are fixed: the same skills
  give the same tree.
- :func:`update_tree` places added and changed skills into an existing tree
  and drops removed ones, leaving every other category as it was
  (:mod:`.incremental`).
- :func:`load_flat_skills` reads a folder of SKILL.md skills, a tree file or
  JSON lines (:mod:`.sources`).

The result has the shape of ``data/categories.json`` (:mod:`.manifests`).
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from typing import Any

from ..errors import UserError
from ._checks import check_limits, check_skills, stage, taken_names
from ._clusters import group
from ._shape import MAX_CHILDREN, FlatSkill, to_dict
from ._vectors import Centres, Embed, Progress, default_embed, embed_skills
from .incremental import TreeUpdate, update_tree
from .manifests import NAME_RE
from .naming import Namer
from .sources import load_flat_skills

__all__ = [
    "MAX_CHILDREN",
    "FlatSkill",
    "TreeUpdate",
    "build_tree",
    "update_tree",
    "load_flat_skills",
    "manifest_name",
]


def build_tree(
    skills: Iterable[FlatSkill],
    *,
    max_children: int = MAX_CHILDREN,
    top_capacity: int | None = None,
    reserved: Iterable[str] = (),
    embed: Embed | None = None,
    progress: Progress | None = None,
) -> dict[str, Any]:
    """A ``categories.json``-shaped tree holding every skill exactly once.

    No category has more than ``max_children`` children (subcategories and
    skills), the top level at most ``top_capacity`` categories (default:
    ``max_children``), and no category is named as anything in ``reserved``,
    a skill, or ``none``. ``embed(texts)`` returns unit vectors (default: the
    local model); ``progress(stage, done, total)`` is told how the stages
    ``embedding``, ``grouping`` and ``naming`` advance.
    """
    skills = list(skills)
    top_capacity = check_limits(max_children, top_capacity)
    check_skills(skills)
    embed = embed or default_embed()
    vectors = embed_skills(skills, embed, progress)
    names = [s.name for s in skills]
    root = group(names, vectors, max_children=max_children, top_capacity=top_capacity, progress=stage(progress, "grouping"))
    by_name = {s.name: s for s in skills}
    namer = Namer(by_name, Centres(names, vectors), taken_names(reserved, names), embed=embed)
    namer.name_all(root, stage(progress, "naming"))
    return to_dict(root, by_name)


def manifest_name(name: str) -> str:
    """A name made valid for a code-skill manifest: lowercase, ``-``/spaces to ``_``."""
    cleaned = re.sub(r"[^a-z0-9_.]+", "_", name.strip().lower()).strip("._")
    cleaned = re.sub(r"\.{2,}", ".", cleaned)
    if not NAME_RE.fullmatch(cleaned or "-"):
        raise UserError(f"cannot make a skill name out of {name!r}")
    return cleaned

