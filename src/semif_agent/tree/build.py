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

from ..catalog.names import code_skill_name
from ..errors import UserError
from ._shape import MAX_CHILDREN, LeafSpec
from ._whole import build_tree
from .incremental import TreeUpdate, update_tree
from .sources import load_flat_skills

__all__ = [
    "MAX_CHILDREN",
    "LeafSpec",
    "TreeUpdate",
    "build_tree",
    "update_tree",
    "load_flat_skills",
    "manifest_name",
]


def manifest_name(name: str) -> str:
    """A name made valid for a code-skill manifest: lowercase, ``-``/spaces to ``_``."""
    cleaned = code_skill_name(name)
    if cleaned is None:
        raise UserError(f"cannot make a skill name out of {name!r}")
    return cleaned
