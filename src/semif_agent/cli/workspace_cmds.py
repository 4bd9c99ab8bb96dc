"""``semif init`` and ``semif tree``: make a workspace, look at its skill tree."""

from __future__ import annotations

from pathlib import Path

import click

from ..tree.tree import SkillTree
from ..workspace import Workspace, default_workspace_dir, find_workspace
from ._common import SemifGroup, json_option, print_json, workspace_option


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


@tree.command("build")
@click.argument("source", type=click.Path(exists=True, path_type=Path))
@click.option("-o", "--output", type=click.Path(dir_okay=False, path_type=Path), help="Write the tree here (default: print it).")
@click.option("--max-children", default=15, show_default=True, type=click.IntRange(min=2),
              help="Children per category at most (15: with `none`, 16 options per decision).")
def build(source: Path, output: Path | None, max_children: int) -> None:
    """Group a flat set of skills into a tree of categories.

    SOURCE is a folder of SKILL.md skills, a tree file with a "skills" list, or
    JSON lines of {"name", "description"}. The result has the shape of
    data/categories.json, so `semif eval --tree` can route on it.
    """
    import json

    from ..tree.build import build_tree, load_flat_skills

    skills = load_flat_skills(source)
    click.echo(f"grouping {len(skills)} skills...", err=True)
    built = build_tree(skills, max_children=max_children)
    text = json.dumps(built, indent=2, ensure_ascii=False) + "\n"
    if output is None:
        click.echo(text, nl=False)
    else:
        output.write_text(text, encoding="utf-8")
        click.echo(f"wrote {len(built['categories'])} categories holding {len(built['skills'])} skills to {output}", err=True)


COMMANDS = [init, tree]
