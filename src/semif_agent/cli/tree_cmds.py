"""``semif tree``: the skill tree of a workspace (code skills and SKILL.md skills), and keeping it up to date."""

from __future__ import annotations

import shutil
from typing import TYPE_CHECKING

import click

from .._text import plural
from ..errors import UserError
from ._common import SemifGroup, json_option, one_line, print_json, workspace_option
from .workspace_cmds import load_tree, open_workspace

if TYPE_CHECKING:
    from ..tree.tree import SkillTree

SKILL_MD_MARK = "[SKILL.md]"
STUB_MARK = "(stub)"


@click.group(cls=SemifGroup, invoke_without_command=True)
@click.option("-c", "--category", metavar="NAME", help="Show only this category and what it holds.")
@workspace_option
@click.option("--depth", type=click.IntRange(min=1), help="Show this many levels below CATEGORY (default: all).")
@click.option("--limit", type=click.IntRange(min=1), help="Show at most this many children per category.")
@json_option
@click.pass_context
def tree(
    ctx: click.Context, category: str | None, workspace: str | None, depth: int | None, limit: int | None, as_json: bool
) -> None:
    """Show the skill tree: categories and their skills, code skills and SKILL.md skills alike.

    --category shows only that part of the tree. Descriptions are cut to one
    line; --json prints everything, including each leaf's kind and path.
    The SKILL.md skills' categories are built and stored in data/tree.json
    (see `semif tree refresh`); `semif tree build` groups any flat catalog.
    """
    if ctx.invoked_subcommand is not None:
        return
    ws = open_workspace(workspace)
    skill_tree = load_tree(ws)
    if category is not None and category not in skill_tree.categories:
        top = ", ".join(c.name for c in skill_tree.subcategories("")) or "none"
        raise UserError(f"no category {category!r} (the top-level categories: {top})")
    if as_json:
        print_json(tree_json(skill_tree, category or ""))
        return
    width = shutil.get_terminal_size((100, 20)).columns
    if category:
        node = skill_tree.categories[category]
        click.echo(
            f"{click.style(category, bold=True)}  {click.style(one_line(node.description, width - len(category) - 2), dim=True)}"
        )
    _print_level(skill_tree, category or "", "" if not category else "", depth, limit, width, top=not category)
    leaves = skill_tree.leaves_under(category) if category else list(skill_tree.skills.values())
    kinds = sum(1 for s in leaves if s.is_skill_md)
    click.echo(f"{plural(len(leaves), 'skill')} ({len(leaves) - kinds} code, {kinds} SKILL.md)", err=True)
    if skill_tree.skill_md_report and not skill_tree.skill_md_report.changed:  # load_tree said it when it changed
        click.echo(skill_tree.skill_md_report.summary(), err=True)


def tree_json(skill_tree: SkillTree, root: str = "") -> dict[str, object]:
    """The tree (or the part under ``root``) as nested JSON: each category with its subcategories and leaves, and
    the SKILL.md load report: what was renamed, each folder left out with why, and how many skills loaded and
    folders were left out (by reason)."""

    def node(name: str) -> dict[str, object]:
        category = skill_tree.categories[name]
        return {
            "name": name,
            "description": category.description,
            "parent": category.parent,
            "built": category.built,
            "categories": [node(c.name) for c in skill_tree.subcategories(name)],
            "skills": [s.to_dict() for s in skill_tree.children(name)],
        }

    problems = {"problems": [str(p) for p in skill_tree.problems], "report": load_report_json(skill_tree)}
    if root:
        return {**node(root), **problems}
    return {"categories": [node(c.name) for c in skill_tree.subcategories("")], **problems}


def load_report_json(skill_tree: SkillTree) -> dict[str, object]:
    """The SKILL.md load report as JSON: what was renamed, each folder left out with why, how many skills loaded
    and how many folders were left out (by reason)."""
    report = skill_tree.skill_md_report
    loaded = sum(skill.is_skill_md for skill in skill_tree.skills.values())
    counts = {"loaded": loaded, "left_out": report.left_out, "left_out_by_reason": report.left_out_counts()}
    return {**report.to_json(), **counts}


def _print_level(
    skill_tree: SkillTree,
    category: str,
    indent: str,
    depth: int | None,
    limit: int | None,
    width: int,
    *,
    top: bool = False,
) -> None:
    nodes: list[tuple[str, str, str, bool]] = []
    for sub in skill_tree.subcategories(category):
        count = len(skill_tree.leaves_under(sub.name))
        if count:
            nodes.append((sub.name, f"({count})", sub.description, True))
    for leaf in skill_tree.children(category):
        mark = SKILL_MD_MARK if leaf.is_skill_md else (STUB_MARK if leaf.is_stub else "")
        nodes.append((leaf.name, mark, leaf.description, False))
    shown = nodes[:limit] if limit else nodes
    for index, (name, mark, description, is_category) in enumerate(shown):
        last = index == len(shown) - 1 and len(shown) == len(nodes)
        branch = "" if top else ("└── " if last else "├── ")
        head = f"{indent}{branch}{name}{' ' + mark if mark else ''}"
        room = max(width - len(head) - 2, 20)
        click.echo(
            f"{indent}{branch}{click.style(name, bold=is_category)}{' ' + mark if mark else ''}  "
            f"{click.style(one_line(description, room), dim=True)}"
        )
        if is_category and (depth is None or depth > 1):
            deeper = indent + ("" if top else ("    " if last else "│   "))
            _print_level(skill_tree, name, deeper, depth - 1 if depth else None, limit, width)
    if len(shown) < len(nodes):
        click.echo(f"{indent}{'' if top else '└── '}… {len(nodes) - len(shown)} more (--limit)")


@click.command("refresh")
@workspace_option
@click.option("--full", is_flag=True, help="Rebuild the SKILL.md skills' categories from scratch.")
@json_option
def refresh(workspace: str | None, full: bool, as_json: bool) -> None:
    """Bring the stored tree (data/tree.json) up to date with the workspace's SKILL.md skills.

    Every command does this on its own when skills were added, removed or
    edited, placing only those; --full regroups every SKILL.md skill.
    """
    ws = open_workspace(workspace)
    skill_tree = load_tree(ws, full=full)
    built = sum(1 for c in skill_tree.categories.values() if c.built)
    placed = sum(1 for s in skill_tree.skills.values() if s.is_skill_md)
    depth = max((len(skill_tree.path_to(s.name)) for s in skill_tree.skills.values()), default=0)
    code = len(skill_tree.skills) - placed
    if as_json:
        print_json(
            {
                "categories": built,
                "skill_md": placed,
                "code": code,
                "depth": depth,
                "report": load_report_json(skill_tree),
            }
        )
    else:
        click.echo(
            f"{plural(placed, 'SKILL.md skill')} in {plural(built, 'category', 'categories')} beside "
            f"{plural(code, 'code skill')}; deepest leaf {plural(depth, 'category', 'categories')} down"
        )
        if skill_tree.skill_md_report and not skill_tree.skill_md_report.changed:
            click.echo(skill_tree.skill_md_report.summary(), err=True)


COMMANDS = [tree]
