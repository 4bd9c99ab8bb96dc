"""``semif skills``: list the skills of a workspace and show one."""

from __future__ import annotations

import click

from ..workspace import find_workspace
from ._common import SemifGroup, json_option, print_json, workspace_option
from .workspace_cmds import load_tree


@click.group(cls=SemifGroup)
def skills() -> None:
    """List and inspect skills."""


@skills.command("list")
@workspace_option
@json_option
def list_skills(workspace: str | None, as_json: bool) -> None:
    """List the workspace's code skills."""
    skill_tree = load_tree(find_workspace(workspace))
    rows = [s.to_dict() for s in skill_tree.skills.values()]
    if as_json:
        print_json(rows)
        return
    width = max((len(r["name"]) for r in rows), default=0)
    for row in rows:
        stub = " (stub)" if row["stub"] else ""
        click.echo(f"{row['name']:<{width}}  {row['description']}{stub}")


@skills.command("show")
@click.argument("name")
@workspace_option
@json_option
def show_skill(name: str, workspace: str | None, as_json: bool) -> None:
    """Show one skill: its manifest and where its body is."""
    skill = load_tree(find_workspace(workspace)).get(name)
    data = skill.to_dict()
    if as_json:
        print_json(data)
        return
    for key, value in data.items():
        if isinstance(value, list):
            value = "; ".join(value) if value else "-"
        click.echo(f"{key:<17}{value}")


COMMANDS = [skills]
