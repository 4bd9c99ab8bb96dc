"""``semif init`` and ``semif tree``: make a workspace, look at its skill tree."""

from __future__ import annotations

from pathlib import Path

import click

from ..tree.tree import SkillTree
from ..workspace import Workspace, default_workspace_dir, find_workspace
from ._common import json_option, print_json, workspace_option


def open_workspace(explicit: str | None, *, create_default: bool = False) -> Workspace:
    """``-w`` if given, else the current directory if it is a workspace, else the per-user one.

    The per-user workspace is made from the starter on first use (its path is printed).
    """
    if explicit is not None or not create_default or (Path.cwd() / "semif.toml").is_file():
        return find_workspace(explicit)
    home = default_workspace_dir()
    if not (home / "semif.toml").is_file():
        from ..starter import create_workspace

        create_workspace(home)
        click.echo(f"semif: made your workspace at {home}", err=True)
    return Workspace.load(home)


def load_tree(workspace: Workspace) -> SkillTree:
    """The workspace's tree; skipped manifest entries are reported on stderr."""
    tree = SkillTree.load(workspace.categories_path, workspace.bodies_dir)
    for problem in tree.problems:
        click.echo(f"warning: {problem}", err=True)
    return tree


@click.command()
@click.argument("directory", type=click.Path(file_okay=False, path_type=Path))
@click.option("--force", is_flag=True, help="Write the starter files even if DIRECTORY is already a workspace.")
def init(directory: Path, force: bool) -> None:
    """Make a starter workspace in DIRECTORY: settings, a tree of skills, sample data."""
    from ..starter import create_workspace

    root = create_workspace(directory, force=force)
    made = Workspace.load(root)
    skill_tree = SkillTree.load(made.categories_path, made.bodies_dir)
    click.echo(f"Made a workspace at {root} ({len(skill_tree.categories)} categories, {len(skill_tree.skills)} skills).")
    click.echo(f'Try: semif run "Email Alice that the quarterly report is ready" -w {directory}')


@click.command()
@workspace_option
@json_option
def tree(workspace: str | None, as_json: bool) -> None:
    """Show the skill tree: categories and their skills."""
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
    for category in skill_tree.categories.values():
        click.echo(f"{category.name}  {click.style(category.description, dim=True)}")
        leaves = skill_tree.children(category.name)
        for index, skill in enumerate(leaves):
            branch = "└──" if index == len(leaves) - 1 else "├──"
            stub = click.style(" (stub)", fg="yellow") if skill.is_stub else ""
            click.echo(f"  {branch} {skill.name}{stub}  {click.style(skill.description, dim=True)}")


COMMANDS = [init, tree]
