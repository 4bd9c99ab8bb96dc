"""Listings of SKILL.md skills for commands: :func:`list_skill_rows`, :func:`filter_skill_rows`, :func:`show_skill`.

Listing and showing work on a workspace (a :class:`~semif_agent.workspace.Workspace` or its
folder: its conventional locations, and the user's ``~/.agents/skills`` unless
left out) and on any folders, each a skill folder or a folder of skill folders.
"""

from __future__ import annotations

import os
import warnings
from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import TypedDict, TypeVar

from ..workspace import Workspace
from .errors import SkillCatalogWarning, SkillNotFound, SkillParseError, SkillsPathNotFound
from .frontmatter import read_document
from .loader import find_skill_md
from .registry import SkillCatalog

WorkspaceLike = Workspace | str | os.PathLike[str]


class SkillRow(TypedDict):
    """One row of :func:`list_skill_rows`: a SKILL.md skill, or a folder that was skipped or shadowed (no ``id``,
    the reason in ``warnings``)."""

    id: str
    name: str
    description: str
    source: str
    path: str
    warnings: list[str]


Row = TypeVar("Row", bound=Mapping[str, object])


def build_registry(
    *,
    workspace: WorkspaceLike | None = None,
    folders: Iterable[str | os.PathLike[str]] = (),
    include_user: bool = True,
    home: str | os.PathLike[str] | None = None,
) -> SkillCatalog:
    """A registry of the built-in skills, the workspace's conventional skills, then ``folders``.

    Loading problems are kept in :attr:`SkillCatalog.issues` rather than raised as warnings.
    """
    registry = SkillCatalog()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", SkillCatalogWarning)
        registry.scan_builtin()
        if workspace is not None:
            root = workspace.root if isinstance(workspace, Workspace) else workspace
            registry.scan_conventional(root, home=home, include_user=include_user)
        for folder in folders:
            path = Path(folder)
            if not path.is_dir():
                raise SkillsPathNotFound(f"{path}: no such folder")
            if find_skill_md(path) is not None:
                registry.scan_folder(path)
            registry.scan_custom(path)  # the skills within it: a folder of skills, or skills nested in a skill
    return registry


def list_skill_rows(
    *,
    workspace: WorkspaceLike | None = None,
    folders: Iterable[str | os.PathLike[str]] = (),
    include_user: bool = True,
    home: str | os.PathLike[str] | None = None,
    registry: SkillCatalog | None = None,
) -> list[SkillRow]:
    """One row per SKILL.md skill: ``id``, ``name``, ``description``, ``source``, ``path``, ``warnings``.

    Loaded skills come first, sorted by id. A skipped or shadowed folder gets
    a row too, with an empty ``id`` and the reason in ``warnings``. Pass
    ``registry`` to list one already built (the other arguments are then ignored).
    """
    if registry is None:
        registry = build_registry(workspace=workspace, folders=folders, include_user=include_user, home=home)
    rows: list[SkillRow] = [
        {
            "id": info.skill_id,
            "name": info.name,
            "description": info.description,
            "source": info.source,
            "path": str(info.root),
            "warnings": list(info.warnings),
        }
        for info in registry.list_all()
    ]
    for issue in registry.issues:
        if issue.kind in ("skipped", "shadowed"):
            rows.append(
                {
                    "id": "",
                    "name": issue.path.name,
                    "description": "",
                    "source": "",
                    "path": str(issue.path),
                    "warnings": [f"{issue.skill_id}: {issue.message}" if issue.skill_id else issue.message],
                }
            )
    return rows


def filter_skill_rows(rows: Iterable[Row], query: str) -> list[Row]:
    """The rows whose ``name`` or ``description`` holds every word of ``query`` (case-insensitive).

    A word matches anywhere in the text (``pdf`` matches ``PDFs``); an empty query keeps every row.
    Works on any rows with those two keys (code skills' rows too), in their order.
    """
    words = query.casefold().split()

    def holds_every_word(entry: Row) -> bool:
        text = f"{entry.get('name') or ''}\n{entry.get('description') or ''}".casefold()
        return all(word in text for word in words)

    return [row for row in rows if holds_every_word(row)]


def show_skill(
    token: str,
    *,
    workspace: WorkspaceLike | None = None,
    folders: Iterable[str | os.PathLike[str]] = (),
    include_user: bool = True,
    home: str | os.PathLike[str] | None = None,
    registry: SkillCatalog | None = None,
) -> dict[str, object]:
    """Every detail of one skill, found by id or by a display name only one skill has.

    Raises :class:`SkillNotFound` when nothing (or more than one skill) matches.
    Pass ``registry`` to look in one already built.
    """
    if registry is None:
        registry = build_registry(workspace=workspace, folders=folders, include_user=include_user, home=home)
    info = registry.get(token)
    if info is None:
        matches = registry.find_by_name(token)
        if len(matches) > 1:
            ids = ", ".join(item.skill_id for item in matches)
            raise SkillNotFound(f"{token!r} names several skills ({ids}); give an id")
        if not matches:
            raise SkillNotFound(f"no SKILL.md skill {token!r}")
        info = matches[0]
    details = info.to_dict()
    details["resources"] = info.resource_files()
    body = ""
    if info.skill_md is not None:
        try:
            body = read_document(info.skill_md).body
        except SkillParseError:
            body = ""
    details["body"] = body
    return details
