"""``semif init``: make a workspace; and opening the workspace and tree every command uses."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Any

import click

from ..workspace import Workspace, default_workspace_dir, find_workspace
from ._common import StageBars

if TYPE_CHECKING:
    from ..tree.tree import SkillTree


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


def load_tree(workspace: Workspace, *, engine: Any = None, full: bool = False) -> SkillTree:
    """The workspace's whole tree (code and SKILL.md skills); what loading skipped is reported on stderr.

    Placing new SKILL.md skills in the stored tree can take a while: it shows
    a progress bar on a terminal. ``engine``'s embedder is used when it has one.
    """
    from ..tree.tree import SkillTree

    with StageBars(min_total=50, only_on_terminal=True) as progress:
        tree = SkillTree.for_workspace(workspace, embed=getattr(getattr(engine, "embedder", None), "embed", None),
                                       progress=progress, full=full)
    for problem in tree.problems:
        click.echo(f"warning: {problem}", err=True)
    return tree


@click.command()
@click.argument("directory", type=click.Path(file_okay=False, path_type=Path))
@click.option("--force", is_flag=True, help="Write the starter files even if DIRECTORY is already a workspace.")
def init(directory: Path, force: bool) -> None:
    """Make a starter workspace in DIRECTORY: settings, a tree of skills, sample data."""
    from ..starter import create_workspace
    from ..tree.tree import SkillTree

    root = create_workspace(directory, force=force)
    made = Workspace.load(root)
    skill_tree = SkillTree.load(made.categories_path, made.bodies_dir)
    click.echo(f"Made a workspace at {root} ({len(skill_tree.categories)} categories, {len(skill_tree.skills)} skills).")
    click.echo(f'Try: semif run "Email Alice that the quarterly report is ready" -w {directory}')


COMMANDS = [init]
