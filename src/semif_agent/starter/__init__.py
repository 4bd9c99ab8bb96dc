"""The starter workspace: a small tree of working code skills over local data.

``semif init DIR`` writes it with :func:`create_workspace`. The template lives
in ``template/`` beside this module and is shipped as package data (its skill
bodies are data files, not modules of this package)::

    semif.toml                          engine, data paths, write dirs, decision log
    data/categories.json                5 categories, 11 skill manifests
    data/contacts.json                  the address book email skills choose from
    data/skills/<category>/<leaf>.py    the skill bodies (predict -> act)
    data/drafts/, notes/, calendar/, todos/   what the skills write (created empty)
    files/...                           sample files for the files skills
    skills/                             where SKILL.md skills go (created empty)

>>> from semif_agent.starter import create_workspace
>>> root = create_workspace("my-agent")          # doctest: +SKIP
"""

from __future__ import annotations

import contextlib
import json
import os
import shutil
from pathlib import Path

from .._files import replace_file
from ..catalog.locations import workspace_skill_dirs
from ..errors import WorkspaceError
from ..workspace import Workspace

__all__ = ["TEMPLATE_DIR", "create_workspace", "skills_folder", "template_files"]

TEMPLATE_DIR: Path = Path(__file__).resolve().parent / "template"
SETTINGS_FILE = "semif.toml"
CATEGORIES_FILE = Path("data") / "categories.json"
_SKIPPED_DIRS = {"__pycache__"}
_SKIPPED_SUFFIXES = {".pyc", ".pyo"}


def template_files() -> list[Path]:
    """The template's files, relative to :data:`TEMPLATE_DIR`, sorted."""
    found = []
    for folder, dirs, files in os.walk(TEMPLATE_DIR):
        dirs[:] = sorted(d for d in dirs if d not in _SKIPPED_DIRS)
        for name in files:
            if Path(name).suffix not in _SKIPPED_SUFFIXES:
                found.append((Path(folder) / name).relative_to(TEMPLATE_DIR))
    return sorted(found)


def create_workspace(dest: str | os.PathLike[str], *, force: bool = False, empty: bool = False) -> Path:
    """Write the starter workspace into ``dest`` (created if missing) and return it resolved.

    ``empty`` writes the settings and a tree without a skill: no code skill, no
    sample data, for a workspace that will hold its own skills (SKILL.md
    collections under ``skills/``), where the starter's email, notes and
    calendar skills would only be offered for requests they do not serve.

    Refuses with :class:`~semif_agent.errors.WorkspaceError` when ``dest``
    already holds a ``semif.toml``, unless ``force``. Even with ``force`` no
    existing file is overwritten: only the template files that are missing
    are written, and the starter's categories and skills are added to an
    existing ``data/categories.json`` where absent (entries already there win).
    The write dirs its ``semif.toml`` lists are created, and ``skills/``, the
    folder a workspace's SKILL.md skills are copied into.
    """
    root = Path(dest).expanduser().resolve()
    if root.exists() and not root.is_dir():
        raise WorkspaceError(f"{root}: exists and is not a directory")
    if (root / SETTINGS_FILE).exists() and not force:
        raise WorkspaceError(
            f"{root}: already a workspace ({SETTINGS_FILE} exists); use force to add the missing starter files"
        )
    if not TEMPLATE_DIR.is_dir():
        raise WorkspaceError(f"the starter template is missing from this installation ({TEMPLATE_DIR})")
    try:
        root.mkdir(parents=True, exist_ok=True)
        for rel in template_files():
            target = root / rel
            if empty and rel != Path(SETTINGS_FILE):
                if rel == CATEGORIES_FILE and not target.exists():
                    target.parent.mkdir(parents=True, exist_ok=True)
                    replace_file(target, json.dumps(_empty_tree(), indent=2) + "\n")
                continue
            if rel == CATEGORIES_FILE and target.exists():
                _merge_categories(target, TEMPLATE_DIR / rel)
                continue
            if target.exists() or target.is_symlink():
                continue
            target.parent.mkdir(parents=True, exist_ok=True)
            shutil.copyfile(TEMPLATE_DIR / rel, target)
        skills = skills_folder(root)
        if not (skills.exists() or skills.is_symlink()):  # a user's own (a file, a link) is left alone
            skills.mkdir()
        with contextlib.suppress(WorkspaceError):  # a user's semif.toml kept by force is theirs to fix
            Workspace.load(root).make_write_dirs()
    except OSError as exc:
        raise WorkspaceError(f"{root}: cannot write the starter workspace ({exc.strerror or exc})") from exc
    return root


def skills_folder(root: Path) -> Path:
    """The folder of a workspace at ``root`` that its own SKILL.md skills are copied into (the first of its
    skill folders)."""
    return workspace_skill_dirs(root)[0]


def _empty_tree() -> dict[str, object]:
    """The starter's categories file without a category, skill or example of what it does not serve."""
    starter = json.loads((TEMPLATE_DIR / CATEGORIES_FILE).read_text(encoding="utf-8"))
    return {"version": starter.get("version", 1), "categories": [], "skills": []}


def _merge_categories(target: Path, template: Path) -> None:
    """Add the template's categories and skills missing from ``target``; leave the rest alone.

    A ``target`` that is not a readable categories file is left untouched.
    """
    try:
        existing: object = json.loads(target.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, json.JSONDecodeError):
        return
    if not isinstance(existing, dict):
        return
    starter = json.loads(template.read_text(encoding="utf-8"))
    changed = False
    for key in ("categories", "skills"):
        entries = existing.get(key, [])
        if not isinstance(entries, list):
            return
        names = {e.get("name") for e in entries if isinstance(e, dict)}
        missing = [e for e in starter[key] if e["name"] not in names]
        if missing:
            existing[key] = entries + missing
            changed = True
    if changed:
        existing.setdefault("version", starter.get("version", 1))
        replace_file(target, json.dumps(existing, indent=2, ensure_ascii=False) + "\n")
