"""What building and updating a tree both check first, and the progress report of one stage."""

from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence

from ..catalog.names import code_skill_name, code_skill_name_problem, skill_md_leaf_problem
from ..errors import UserError
from ._shape import LeafSpec
from ._vectors import Progress
from .manifests import RESERVED_IDS


def check_limits(max_children: int, top_capacity: int | None) -> int:
    """``top_capacity`` made explicit; a clear error for limits no tree can meet."""
    if max_children < 2:
        raise UserError("a category must be allowed at least 2 children")
    top_capacity = max_children if top_capacity is None else top_capacity
    if top_capacity < 1:
        raise UserError("the top level must have room for at least 1 category")
    return top_capacity


def check_skills(skills: Sequence[LeafSpec]) -> None:
    """A clear error for no skills, a nameless one, one its manifest would refuse, or two sharing a name.

    A tree is built to be a workspace's ``categories.json``: every name in it
    is one the manifests accept (:mod:`semif_agent.catalog.names`).
    """
    if not skills:
        raise UserError("no skills to build a tree from")
    holders: dict[str, list[str]] = {}
    for number, skill in enumerate(skills, start=1):
        if not isinstance(skill.name, str) or not skill.name.strip() or not isinstance(skill.description, str):
            raise UserError(f"skill {number} needs a non-empty name and a description")
        where = skill.path or f"entry {number}"
        problem = skill_md_leaf_problem(skill.name) if skill.path else code_skill_name_problem(skill.name)
        if problem:
            valid = None if skill.path else code_skill_name(skill.name)
            hint = f" (as a valid one: {valid!r})" if valid else ""
            raise UserError(f"skill {number} ({where}): {problem}{hint}")
        holders.setdefault(skill.name, []).append(where)
    dupes = [(name, where) for name, where in holders.items() if len(where) > 1]
    if dupes:
        shown = "; ".join(f"{name!r} ({', '.join(where)})" for name, where in dupes[:5])
        more = f" and {len(dupes) - 5} more" if len(dupes) > 5 else ""
        raise UserError(f"duplicate skill names: {shown}{more}")


def taken_names(reserved: Iterable[str], leaves: Iterable[str]) -> set[str]:
    """Names no category may take: the reserved ones, every leaf id, and ``none``."""
    return set(reserved) | set(leaves) | set(RESERVED_IDS)


def stage(progress: Progress | None, name: str) -> Callable[[int, int], None] | None:
    """``progress`` bound to one stage: called with (done, total)."""
    if progress is None:
        return None
    return lambda done, total: progress(name, done, total)
