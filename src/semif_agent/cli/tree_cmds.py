"""``semif tree``: the skill tree of a workspace, categories and their skills."""

from __future__ import annotations

from typing import TYPE_CHECKING

import click

from ..workspace import find_workspace
from ._common import SemifGroup, json_option, print_json, workspace_option
from .workspace_cmds import load_tree

if TYPE_CHECKING:
    from ..tree.tree import SkillTree


@click.group(cls=SemifGroup, invoke_without_command=True)
@workspace_option
@json_option
@click.pass_context
def tree(ctx: click.Context, workspace: str | None, as_json: bool) -> None:
    """Show the skill tree: categories and their skills (or build one: semif tree build)."""
    if ctx.invoked_subcommand is not None:
        return
    ws = find_workspace(workspace)
    skill_tree = load_tree(ws)
    if as_json:
        print_json({
            "categories": [
                {"name": c.name, "description": c.description,
                 "skills": [s.to_dict() for s in skill_tree.children(c.name)]}
                for c in skill_tree.categories.values()
            ],
            "problems": [str(p) for p in skill_tree.problems],
        })
        return
    _print_level(skill_tree, "", "")


def _print_level(skill_tree: SkillTree, category: str, indent: str) -> None:
    nodes = [(c.name, c.description, True) for c in skill_tree.subcategories(category)]
    nodes += [(s.name + (" (stub)" if s.is_stub else ""), s.description, False) for s in skill_tree.children(category)]
    for index, (name, description, is_category) in enumerate(nodes):
        last = index == len(nodes) - 1
        branch = "" if not category else ("└── " if last else "├── ")
        click.echo(f"{indent}{branch}{click.style(name, bold=is_category)}  {click.style(description, dim=True)}")
        if is_category:
            _print_level(skill_tree, name, indent + ("" if not category else ("    " if last else "│   ")))


COMMANDS = [tree]
