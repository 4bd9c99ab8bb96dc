"""A whole tree built from scratch (see :func:`semif_agent.tree.build.build_tree`, where it is documented and exported)."""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from ._checks import check_limits, check_skills, stage, taken_names
from ._clusters import group
from ._shape import MAX_CHILDREN, LeafSpec, to_dict
from ._vectors import Centres, Embed, Progress, default_embed, embed_skills
from .naming import Namer


def build_tree(
    skills: Iterable[LeafSpec],
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
    root = group(
        names, vectors, max_children=max_children, top_capacity=top_capacity, progress=stage(progress, "grouping")
    )
    by_name = {s.name: s for s in skills}
    namer = Namer(by_name, Centres(names, vectors), taken_names(reserved, names), embed=embed)
    namer.name_all(root, stage(progress, "naming"))
    return to_dict(root, by_name)
