"""``semif skills``: list the skills of a workspace (code skills and SKILL.md skills) and show one."""

from __future__ import annotations

import shutil
from collections import Counter
from pathlib import Path
from typing import TYPE_CHECKING, Any

import click

from .._text import plural
from ..errors import UnknownSkillError, UserError
from ..workspace import Workspace
from ._common import SemifGroup, inert_line, json_option, one_line, print_json, workspace_option
from .workspace_cmds import load_tree, open_workspace

if TYPE_CHECKING:
    from ..tree.manifests import SkillManifest


@click.group(cls=SemifGroup)
def skills() -> None:
    """List and inspect skills."""


def _open(workspace: str | None, folders: tuple[Path, ...]) -> Workspace | None:
    """The workspace to list: ``-w``, else the current one; none is needed when folders are given."""
    if folders and workspace is None:
        return None
    return open_workspace(workspace)


FALLBACK_COLUMNS = 100
"""The width a listing is cut to when the terminal's cannot be read (output to a pipe or a file)."""


@skills.command("list")
@click.argument("query", nargs=-1)
@click.option(
    "--folder",
    "folders",
    multiple=True,
    type=click.Path(exists=True, file_okay=False, path_type=Path),
    help="List the SKILL.md skills in this folder (a skill folder or a folder of skills; repeatable).",
)
@click.option("--limit", type=click.IntRange(min=1), default=None, metavar="N", help="Show at most N skills.")
@workspace_option
@json_option(shape="one JSON array (an object per skill)")
def list_skills(
    query: tuple[str, ...], folders: tuple[Path, ...], limit: int | None, workspace: str | None, as_json: bool
) -> None:
    """List skills: the workspace's code skills and SKILL.md skills, or those in --folder folders.

    \b
    QUERY keeps the skills whose name or description holds every one of its
    words (case-insensitive), e.g. `semif skills list pdf form`. A QUERY word
    that is an existing folder is taken as a --folder instead (the older form
    `semif skills list FOLDER...`).

    Each skill is one line: its name (a SKILL.md skill's id where names
    repeat), its kind (code or SKILL.md) and its description, cut to the
    terminal's width; a count goes to standard error. --json prints the full
    rows.
    """
    from ..catalog.listing import filter_skill_rows

    given_folders = tuple(Path(word) for word in query if word.strip() and Path(word).is_dir())
    words = " ".join(word for word in query if Path(word) not in given_folders)
    everything = _skill_rows(workspace, folders + given_folders)
    rows = filter_skill_rows(everything, words)
    shown = rows if limit is None else rows[:limit]
    if as_json:
        print_json(shown)
        return
    width = shutil.get_terminal_size((FALLBACK_COLUMNS, 24)).columns
    for line in _listing_lines(shown, width, everything):
        click.echo(line)
    if len(rows) > len(shown):
        click.echo(f"… and {len(rows) - len(shown)} more (use --limit or a QUERY)")
    click.echo(_count_line(rows, everything, words), err=True)


def _skill_rows(workspace: str | None, folders: tuple[Path, ...]) -> list[dict[str, Any]]:
    """Code skills first (workspace order), then SKILL.md skills (by id), then the folders that did not load."""
    from ..catalog.listing import list_skill_rows

    ws = _open(workspace, folders)
    rows: list[dict[str, Any]] = []
    if ws is not None:  # the workspace's tree: the ids `semif run` and `semif tree` use
        skill_tree = load_tree(ws)
        leaves = skill_tree.skills.values()
        rows += [{"kind": "code", **s.to_dict()} for s in leaves if not s.is_skill_md]
        rows += sorted((_skill_md_row(s) for s in leaves if s.is_skill_md), key=lambda entry: entry["id"])
        report = skill_tree.skill_md_report
        rows += [_left_out_row(Path(item.folder), item.reason) for item in report.skipped]
        rows += [_counted_row(number, why) for why, number in report.more_skipped.items()]
    if folders:
        rows += [{"kind": "skill.md", **r} for r in list_skill_rows(folders=folders, include_user=False)]
    return rows


def _skill_md_row(leaf: SkillManifest) -> dict[str, Any]:
    """A SKILL.md leaf of the workspace's tree as a listing row."""
    return {
        "kind": "skill.md",
        "id": leaf.name,
        "name": leaf.source_name or leaf.name,
        "description": leaf.description,
        "category": leaf.category,
        "path": str(leaf.source.parent) if leaf.source else "",
        "warnings": [],
    }


def _left_out_row(folder: Path, why: str) -> dict[str, Any]:
    """A folder the workspace's load left out, as a listing row: no id, and why in its warnings."""
    return {
        "kind": "skill.md",
        "id": "",
        "name": folder.name,
        "description": "",
        "path": str(folder),
        "warnings": [why],
    }


def _counted_row(number: int, why: str) -> dict[str, Any]:
    """Folders the load left out past the ones it names, for one reason, as one listing row (``left_out``: how
    many)."""
    return {
        "kind": "skill.md",
        "id": "",
        "name": f"({number} more)",
        "description": "",
        "path": "",
        "warnings": [why],
        "left_out": number,
    }


def _listing_lines(rows: list[dict[str, Any]], width: int, everything: list[dict[str, Any]]) -> list[str]:
    """One line per entry (name, kind, description), and one more for a loaded skill's warnings.

    A SKILL.md skill is labelled by its name, or by its id where several skills of ``everything``
    share the name (so that ``semif skills show LABEL`` finds it); a folder not loaded, by its name.
    """
    names = Counter(entry["name"] for entry in everything if _loaded(entry))
    labels = [  # a folder's name shown on one line, whatever it holds
        inert_line(
            entry["id"] if entry["kind"] == "skill.md" and entry["id"] and names[entry["name"]] > 1 else entry["name"]
        )
        for entry in rows
    ]
    column = min(max(map(len, labels), default=0), max(12, width * 2 // 5))
    lines = []
    for entry, label in zip(rows, labels):
        head = f"{label:<{column}}  {'code' if entry['kind'] == 'code' else 'SKILL.md':<8}  "
        warnings = "; ".join(entry.get("warnings") or ())
        text = ("(stub) " if entry.get("stub") else "") + entry["description"] if _loaded(entry) else f"! {warnings}"
        lines.append((head + one_line(text, width - len(head))).rstrip())
        if _loaded(entry) and warnings:
            indent = " " * (column + 12)
            lines.append(indent + one_line(f"! {warnings}", width - len(indent)))
    return lines


def _loaded(entry: dict[str, Any]) -> bool:
    """True for a skill; False for a SKILL.md folder that was skipped or shadowed (its entry has no id)."""
    return entry["kind"] == "code" or bool(entry["id"])


def _count_line(rows: list[dict[str, Any]], everything: list[dict[str, Any]], query: str) -> str:
    """``24 skills (3 code, 21 SKILL.md)``, or ``5 of 24 skills match 'pdf' (...)``; folders not loaded apart."""
    loaded = sum(map(_loaded, rows))
    code = sum(entry["kind"] == "code" for entry in rows)
    skill_md = loaded - code
    if query.strip():
        total = sum(map(_loaded, everything))
        line = f"{loaded} of {plural(total, 'skill')} match {query.strip()!r}"
    else:
        line = plural(loaded, "skill")
    line += f" ({code} code, {skill_md} SKILL.md)"
    not_loaded = sum(entry.get("left_out", 1) for entry in rows if not _loaded(entry))
    if not_loaded:
        line += f", {not_loaded} not loaded (skipped or shadowed)"
    return line


@skills.command("show")
@click.argument("name")
@click.option(
    "--folder",
    "folders",
    multiple=True,
    type=click.Path(exists=True, file_okay=False, path_type=Path),
    help="Also look for SKILL.md skills in this folder of skills (repeatable).",
)
@workspace_option
@json_option
def show_skill(name: str, folders: tuple[Path, ...], workspace: str | None, as_json: bool) -> None:
    """Show one skill: a code skill's manifest and body path, or a SKILL.md skill's details.

    \b
    For a skill of the workspace's tree, also what it learned as it was exercised: its
    learned examples (requests of runs labelled or judged a success, see `semif label`
    and `semif train`), where its decision rows are (decision_log_ref, the rows
    `semif log --skill NAME` lists) and how many logged runs chose it.
    """
    from ..catalog import show_skill as show_skill_md
    from ..tree.tree import did_you_mean

    ws = _open(workspace, folders)
    hint = ""
    try:
        if ws is None:
            raise UnknownSkillError(name)
        tree = load_tree(ws)
        hint = did_you_mean(name, tree.skills)
        leaf = tree.get(name)
        if leaf.is_skill_md and leaf.source is not None:
            details = show_skill_md(leaf.source_name or leaf.name, folders=[leaf.source.parent], include_user=False)
            data = {"kind": "skill.md", "id": leaf.name, "category": leaf.category, **details}
        else:
            data = {"kind": "code", **leaf.to_dict()}
        data.update(_exercised(ws, leaf))
    except UnknownSkillError:
        try:
            data = {
                "kind": "skill.md",
                **show_skill_md(name, workspace=ws, folders=folders, include_user=ws is not None),
            }
        except UserError:
            raise UnknownSkillError(f"no code skill or SKILL.md skill named {name!r}{hint}") from None
    if as_json:
        print_json(data)
        return
    for key, value in data.items():
        if isinstance(value, (list, tuple)):
            value = "; ".join(map(str, value)) if value else "-"
        elif isinstance(value, dict):
            value = ", ".join(f"{k}={v}" for k, v in value.items()) or "-"
        click.echo(f"{key:<17}{value}")


def _exercised(ws: Workspace, leaf: SkillManifest) -> dict[str, object]:
    """What a leaf learned as it was exercised: its learned examples, its decision rows and its runs."""
    from ..loop.learned_examples import decision_log_ref
    from ..records import DecisionLog

    runs = sum(run.skill == leaf.name for run in DecisionLog.for_workspace(ws).runs()) if ws.log_path.is_file() else 0
    return {
        "learned_examples": list(leaf.learned_examples),
        "decision_log_ref": leaf.decision_log_ref or decision_log_ref(ws, leaf.name),
        "runs": runs,
    }


COMMANDS = [skills]
