"""``semif skills``: list the skills of a workspace (code skills and SKILL.md skills) and show one."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import click

from ..errors import UnknownSkillError, UserError
from ..workspace import Workspace, find_workspace
from ._common import SemifGroup, json_option, print_json, workspace_option
from .workspace_cmds import load_tree


@click.group(cls=SemifGroup)
def skills() -> None:
    """List and inspect skills."""


def _open(workspace: str | None, folders: tuple[Path, ...]) -> Workspace | None:
    """The workspace to list: ``-w``, else the current one; none is needed when folders are given."""
    if folders and workspace is None:
        return None
    return find_workspace(workspace)


@skills.command("list")
@click.argument("folders", nargs=-1, type=click.Path(exists=True, file_okay=False, path_type=Path))
@workspace_option
@json_option
def list_skills(folders: tuple[Path, ...], workspace: str | None, as_json: bool) -> None:
    """List skills: the workspace's code skills and SKILL.md skills, or the SKILL.md skills in FOLDERS."""
    from ..catalog import list_skill_rows

    ws = _open(workspace, folders)
    rows: list[dict[str, Any]] = []
    if ws is not None:
        rows += [{"kind": "code", **s.to_dict()} for s in load_tree(ws).skills.values() if not s.is_skill_md]
    rows += [{"kind": "skill.md", **r} for r in list_skill_rows(workspace=ws, folders=folders, include_user=ws is not None)]
    if as_json:
        print_json(rows)
        return
    width = max((len(r.get("id") or r["name"]) for r in rows), default=0)
    for row in rows:
        label = row.get("id") or row["name"] if row["kind"] == "skill.md" else row["name"]
        notes = " (stub)" if row.get("stub") else ""
        notes += "".join(f"  [{w}]" for w in row.get("warnings", []))
        click.echo(f"{label:<{width}}  {row['description']}{notes}")


@skills.command("show")
@click.argument("name")
@click.option("--folder", "folders", multiple=True, type=click.Path(exists=True, file_okay=False, path_type=Path),
              help="Also look for SKILL.md skills in this folder of skills (repeatable).")
@workspace_option
@json_option
def show_skill(name: str, folders: tuple[Path, ...], workspace: str | None, as_json: bool) -> None:
    """Show one skill: a code skill's manifest and body path, or a SKILL.md skill's details."""
    from ..catalog import show_skill as show_skill_md

    ws = _open(workspace, folders)
    try:
        if ws is None:
            raise UnknownSkillError(name)
        data = {"kind": "code", **load_tree(ws).get(name).to_dict()}
    except UnknownSkillError:
        try:
            data = {"kind": "skill.md", **show_skill_md(name, workspace=ws, folders=folders, include_user=ws is not None)}
        except UserError:
            raise UnknownSkillError(f"no code skill or SKILL.md skill named {name!r}") from None
    if as_json:
        print_json(data)
        return
    for key, value in data.items():
        if isinstance(value, (list, tuple)):
            value = "; ".join(map(str, value)) if value else "-"
        elif isinstance(value, dict):
            value = ", ".join(f"{k}={v}" for k, v in value.items()) or "-"
        click.echo(f"{key:<17}{value}")


COMMANDS = [skills]
