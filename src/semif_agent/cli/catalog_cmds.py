"""``semif skills validate`` and ``semif skills prompt``: SKILL.md skills from the command line.

Both take skill folders, SKILL.md files and folders of skill folders as PATH,
and ``-w`` for a workspace's ``skills/`` and ``.agents/skills/``. The click
commands :data:`validate` and :data:`prompt` (both in :data:`COMMANDS`) are
meant for the ``semif skills`` group.
"""

from __future__ import annotations

from collections import Counter
from pathlib import Path

import click

from .._text import plural
from ..catalog.errors import SkillsPathNotFound
from ..catalog.left_out import more_lines
from ..catalog.loader import find_skill_folders
from ..catalog.locations import workspace_skill_dirs
from ..catalog.validate import PathSearch, ValidationReport, expand_skill_folders, search_paths, validate_folders
from ..compat.skills_ref import to_prompt
from ..errors import UserError
from ._common import inert_line, json_option, print_json, workspace_option
from .workspace_cmds import open_workspace


def _workspace_folders(workspace: str | None) -> list[Path]:
    """The skill folders of a workspace, ``skills/x`` winning over ``.agents/skills/x`` (nested ones too)."""
    root = open_workspace(workspace).root
    chosen: dict[str, Path] = {}
    for location in workspace_skill_dirs(root):
        for relative, folder in find_skill_folders(location):
            chosen.setdefault(relative, folder)
    if not chosen:
        raise UserError(f"{root}: no SKILL.md skills in skills/ or .agents/skills/")
    return [chosen[name] for name in sorted(chosen)]


def _workspace_skills(
    workspace: str | None,
) -> tuple[list[Path], dict[str, list[str]], dict[str, list[str]], dict[str, int]]:
    """The SKILL.md folders of a workspace (those skipped too), what loading renamed, by folder, every folder the
    load left out by name, with why, and how many more it left out, by reason."""
    from ..tree.workspace_tree import skill_md_folders

    ws = open_workspace(workspace)
    folders, report = skill_md_folders(ws)
    left_out = report.left_out_by_folder()
    if not folders and not left_out and not report.more_skipped:
        raise UserError(f"{ws.root}: no SKILL.md skills in the workspace's skill folders")
    return folders, report.renamed_by_folder(), left_out, dict(report.more_skipped)


@click.command("validate")
@click.argument("paths", nargs=-1, type=click.Path(path_type=str))
@workspace_option
@click.option("--strict", is_flag=True, help="Exit 1 also when a skill that loads breaks the specification.")
@json_option(shape="one JSON array (an object per skill)")
@click.pass_context
def validate(ctx: click.Context, paths: tuple[str, ...], workspace: str | None, strict: bool, as_json: bool) -> None:
    """Check SKILL.md skills against the Agent Skills specification, and say which load.

    PATH is a skill folder, its SKILL.md, or a folder of skill folders; with
    -w, or with no PATH inside a workspace, every SKILL.md skill of the
    workspace's tree is checked, and each one loaded under another name
    (normalised, or kept apart from a skill sharing its name) says so.
    Loading is lenient, so each skill gets one of four marks: FAIL (it does
    not load: no SKILL.md, frontmatter that cannot be read, no description, a
    link, a folder too large or too deep to search), spec (it loads, but
    breaks the specification: an unknown key, a name in capitals...), note
    (it loads under another name), ok. Every error of each skill is listed
    once; past the first few hundred folders left out, the others are
    counted by reason. Exits 1 when a skill does not load; with --strict,
    also when one breaks the specification.
    """
    search = search_paths(paths) if paths else PathSearch([], {})
    targets = list(search.folders)
    left_out = {folder: list(reasons) for folder, reasons in search.left_out.items()}
    more = Counter(search.more_left_out)
    notes: dict[str, list[str]] = {}
    if workspace is not None or not (targets or left_out or more):
        folders, notes, workspace_left_out, workspace_more = _workspace_skills(workspace)
        targets += folders
        for folder, reasons in workspace_left_out.items():
            left_out.setdefault(Path(folder), []).extend(reasons)
        more.update(workspace_more)
    reports = validate_folders(dict.fromkeys(targets), left_out)
    if as_json:
        unnamed = [
            {"path": "", "name": None, "ok": False, "loads": False, "errors": [why], "left_out": n}
            for why, n in more.items()
        ]
        print_json([*({**report.to_dict(), **_notes(notes, report.path)} for report in reports), *unnamed])
    else:
        for report in reports:
            noted = notes.get(str(report.path), [])
            click.echo(f"{_mark(report, bool(noted))}  {inert_line(str(report.path))}")
            for line in [*report.errors, *noted]:
                click.echo(f"      - {inert_line(line)}")
        for line in more_lines(more):
            click.echo(f"FAIL  ({inert_line(line)})")
        counted = f"; {plural(sum(more.values()), 'more folder')} left out, not named (FAIL)" if more else ""
        click.echo(_summary(reports, notes) + counted, err=True)
    failed = more or any(not report.loads for report in reports)
    if failed or (strict and any(not report.ok for report in reports)):
        ctx.exit(1)


def _mark(report: ValidationReport, renamed: bool) -> str:
    """The four-letter mark of a verdict: FAIL (does not load), spec (loads, breaks the specification), note
    (loads under another name), ok."""
    return "FAIL" if not report.loads else "spec" if not report.ok else "note" if renamed else "ok  "


def _summary(reports: list[ValidationReport], notes: dict[str, list[str]]) -> str:
    """``1642 skills checked: 1590 load, 52 do not (FAIL); of those that load, 1150 break the specification
    (spec) and 930 load under another name``."""
    loaded = [report for report in reports if report.loads]
    failed = len(reports) - len(loaded)
    said = f"{plural(len(reports), 'skill')} checked: {_verb(len(loaded), 'load')}, {_verb(failed, 'do')} not (FAIL)"
    remarks = sum(not report.ok for report in loaded)
    renamed = sum(bool(notes.get(str(report.path))) for report in loaded)
    parts = [
        f"{_verb(remarks, 'break')} the specification (spec)" if remarks else "",
        f"{_verb(renamed, 'load')} under another name" if renamed else "",
    ]
    tail = " and ".join(part for part in parts if part)
    return said + (f"; of those that load, {tail}" if tail else "")


def _verb(count: int, verb: str) -> str:
    """``count`` and ``verb`` agreeing with it (``1 loads``, ``2 load``, ``1 does``)."""
    return f"{count} {verb}" if count != 1 else f"{count} {verb}es" if verb == "do" else f"{count} {verb}s"


def _notes(notes: dict[str, list[str]], folder: Path) -> dict[str, list[str]]:
    """``{"notes": [...]}`` for a skill loaded under another name, else nothing."""
    return {"notes": notes[str(folder)]} if str(folder) in notes else {}


@click.command("prompt")
@click.argument("paths", nargs=-1, type=click.Path(exists=True, path_type=Path))
@workspace_option
def prompt(paths: tuple[Path, ...], workspace: str | None) -> None:
    """Print the <available_skills> block that lists skills in a system prompt.

    PATH is a skill folder, its SKILL.md, or a folder of skill folders (each
    of its skills is listed, nested collections too); -w adds a workspace's
    skills. A skill that cannot be read (no SKILL.md, broken frontmatter, no
    name or description) is left out with a warning on standard error; the
    block lists the others byte for byte as ``skills-ref to-prompt`` prints
    them. Exits 1 when no skill is usable.
    """
    folders: list[Path] = []
    for path in paths:
        try:
            folders += expand_skill_folders([path])
        except SkillsPathNotFound as exc:
            _warn(f"skipped {exc}")
    if workspace is not None or not paths:
        folders += _workspace_folders(workspace)
    entries = [entry for entry in map(_prompt_entry, folders) if entry is not None]
    if not entries:
        raise UserError(f"no usable SKILL.md skill among {plural(len(folders), 'folder')}: nothing to list")
    head, tail = to_prompt([]).split("\n")
    click.echo("\n".join([head, *entries, tail]))


def _prompt_entry(folder: Path) -> str | None:
    """The lines ``to_prompt`` prints for ``folder`` (each skill is read once), or None with a warning.

    ``to_prompt`` of several folders is its opening line, each folder's lines, and its closing line,
    so the block of the readable folders is assembled from these entries unchanged.
    """
    try:
        block = to_prompt([folder])
    except (UserError, OSError, ValueError) as exc:
        _warn(f"skipped {folder}: {exc}")
        return None
    return block.split("\n", 1)[1].rsplit("\n", 1)[0]


def _warn(message: str) -> None:
    """One line on standard error (a multi-line YAML error is joined)."""
    click.echo(f"warning: {' '.join(message.split())}", err=True)


COMMANDS = [validate, prompt]
"""The commands of this module, for the ``skills`` group."""
