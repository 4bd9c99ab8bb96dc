"""``semif init``: make a workspace; and opening the workspace and tree every command uses."""

from __future__ import annotations

import os
from pathlib import Path
from typing import TYPE_CHECKING

import click

from .._text import plural
from ..errors import UserError, WorkspaceError
from ..workspace import SETTINGS_FILE, Workspace, default_workspace_dir, find_workspace
from ._common import StageBars, say_once

if TYPE_CHECKING:
    from ..engine.base import Engine
    from ..tree.tree import SkillTree


WORKSPACE_ENV = "SEMIF_WORKSPACE"
"""The variable that names the workspace to use when ``-w`` is not given."""


def open_workspace(explicit: str | None, *, create_default: bool = False) -> Workspace:
    """The workspace a command works on; see :func:`find_cli_workspace`. None found is one line naming what to do."""
    workspace = find_cli_workspace(explicit, create_default=create_default)
    if workspace is None:
        raise WorkspaceError(
            f"no workspace: run semif init DIR (then pass -w DIR), or semif run TEXT to make your own "
            f"({Path.cwd()} has no {SETTINGS_FILE}; -w DIR or ${WORKSPACE_ENV} names one)"
        )
    return workspace


def find_cli_workspace(explicit: str | None, *, create_default: bool = False) -> Workspace | None:
    """The workspace every command finds the same way, or None when there is none.

    ``-w DIR`` if given; else ``$SEMIF_WORKSPACE``; else the current directory
    if it has ``semif.toml``; else the per-user workspace
    (:func:`~semif_agent.workspace.default_workspace_dir`), made from the
    starter when ``create_default`` (``semif run``, ``semif chat``) and used
    by the others only if it exists. When the choice is not the obvious one
    (the variable, or the per-user workspace), one line on stderr says which.
    """
    if explicit is not None:
        return Workspace.load(explicit)
    named = os.environ.get(WORKSPACE_ENV, "").strip()
    if named:
        try:
            workspace = Workspace.load(named)
        except WorkspaceError as exc:
            raise WorkspaceError(f"${WORKSPACE_ENV}: {exc}") from None
        say_once(f"semif: workspace {workspace.root} (from ${WORKSPACE_ENV})")
        return workspace
    if (Path.cwd() / SETTINGS_FILE).is_file():
        return find_workspace(None)
    home = default_workspace_dir()
    if not (home / SETTINGS_FILE).is_file():
        if not create_default:
            return None
        from ..starter import create_workspace

        create_workspace(home)
        say_once(f"semif: made your workspace at {home}")
        return Workspace.load(home)
    say_once(f"semif: workspace {home} (your own; -w DIR for another)")
    return Workspace.load(home)


def load_tree(workspace: Workspace, *, engine: Engine | None = None, full: bool = False) -> SkillTree:
    """The workspace's whole tree (code and SKILL.md skills); what loading skipped is reported on stderr.

    Problems of the code skills' manifests are reported each time; the SKILL.md
    skills' report (renamed, skipped) is summed up in one line, only when it
    changed (`semif skills validate` lists it). Placing new SKILL.md skills in
    the stored tree can take a while: it shows a progress bar on a terminal.
    ``engine``'s embedder is used when it has one.
    """
    from ..engine.base import embedding_function
    from ..tree.tree import SkillTree

    with StageBars(min_total=50, only_on_terminal=True) as progress:
        tree = SkillTree.for_workspace(workspace, embed=embedding_function(engine), progress=progress, full=full)
    for problem in tree.problems:
        click.echo(f"warning: {problem}", err=True)
    if tree.skill_md_report.changed and tree.skill_md_report:
        click.echo(tree.skill_md_report.summary(), err=True)
    return tree


@click.command()
@click.argument("directory", type=click.Path(file_okay=False, path_type=Path))
@click.option("--force", is_flag=True, help="Write the starter files even if DIRECTORY is already a workspace.")
@click.option(
    "--empty", is_flag=True, help="Settings only: no starter code skills or sample data (for your own SKILL.md skills)."
)
def init(directory: Path, force: bool, empty: bool) -> None:
    """Make a starter workspace in DIRECTORY: settings, a tree of skills, sample data (--empty: settings only),
    and an empty skills/ folder for SKILL.md skills."""
    from ..starter import create_workspace, skills_folder
    from ..tree.tree import SkillTree

    if (directory / SETTINGS_FILE).exists() and not force:
        raise UserError(
            f"{directory.expanduser().resolve()}: already a workspace ({SETTINGS_FILE} exists); "
            "use --force to add the missing starter files (nothing is overwritten)"
        )
    root = create_workspace(directory, force=force, empty=empty)
    made = Workspace.load(root)
    skill_tree = SkillTree.load(made.categories_path, made.bodies_dir)
    click.echo(
        f"Made a workspace at {root} ({plural(len(skill_tree.categories), 'category', 'categories')}, {plural(len(skill_tree.skills), 'skill')})."
    )
    click.echo(f"Add skills: copy SKILL.md folders or collections of them into {skills_folder(root)}")
    if not empty:
        click.echo(f'Try: semif run "Email Alice that the quarterly report is ready" -w {directory}')


COMMANDS = [init]
