"""Flat catalogs to build a tree from: a folder of SKILL.md skills, a tree file, or JSON lines."""

from __future__ import annotations

import json
import os
import warnings
from pathlib import Path
from typing import Any

from .._json import split_json_lines
from ..catalog.loader import find_skill_md, load_skill, search_skill_folders
from ..catalog.names import skill_md_leaf_id
from ..errors import UserError
from ._shape import LeafSpec
from .leaf_ids import distinct_ids
from .manifests import SKILL_MD


def load_flat_skills(path: str | os.PathLike[str]) -> list[LeafSpec]:
    """Skills from a folder of SKILL.md skills (nested collections too), a tree file, or JSON lines.

    A SKILL.md skill that cannot be loaded, and a folder the search left out
    (:func:`~semif_agent.catalog.loader.search_skill_folders`), is skipped with
    a warning naming its folder and why. Skills that share a name are all kept, under distinct ids
    (:func:`~semif_agent.tree.leaf_ids.distinct_ids`), each collision warned
    about with both folders. Paths of SKILL.md files are absolute.
    """
    path = Path(path)
    if path.is_dir():
        return _from_folder(path)
    try:
        text = path.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as exc:
        raise UserError(f"{path}: cannot read ({exc})") from exc
    try:
        data = json.loads(text)
        entries = data.get("skills", [data]) if isinstance(data, dict) else data
    except json.JSONDecodeError:
        try:
            entries = [json.loads(line) for line in split_json_lines(text) if line.strip()]
        except json.JSONDecodeError as exc:
            raise UserError(f"{path}: neither a JSON tree file nor JSON lines ({exc.msg})") from exc
    if not isinstance(entries, list):
        raise UserError(f"{path}: 'skills' must be a list")
    base = path.resolve().parent
    return [_from_entry(entry, number, path, base) for number, entry in enumerate(entries, start=1)]


def _from_folder(root: Path) -> list[LeafSpec]:
    search = search_skill_folders(root)
    for folder, why in search.reported():
        warnings.warn(f"{folder}: skipped ({why})", RuntimeWarning, stacklevel=3)
    folders = ([root] if find_skill_md(root) is not None else []) + [folder for _, folder in search.found]
    loaded = []
    for folder in folders:
        result = load_skill(folder, namespace="custom", source="custom", source_label=str(root))
        if result.descriptor is None:
            warnings.warn(f"{folder}: skipped ({result.skipped})", RuntimeWarning, stacklevel=3)
            continue
        loaded.append(result.descriptor)
    ids, collisions = distinct_ids([(skill_md_leaf_id(d.name, d.root.name), d.root) for d in loaded])
    for message in collisions:
        warnings.warn(str(message), RuntimeWarning, stacklevel=3)
    return [
        LeafSpec(
            leaf_id,
            d.description,
            path=os.path.abspath(d.skill_md or find_skill_md(d.root) or d.root / "SKILL.md"),
            skill_name=d.name,
        )
        for leaf_id, d in zip(ids, loaded)
    ]


def _from_entry(entry: Any, number: int, source: Path, base: Path) -> LeafSpec:
    if (
        not isinstance(entry, dict)
        or not isinstance(entry.get("name"), str)
        or not isinstance(entry.get("description"), str)
    ):
        raise UserError(f"{source}: skill {number} needs a string 'name' and 'description'")
    examples = entry.get("examples", [])
    if not isinstance(examples, list) or not all(isinstance(e, str) for e in examples):
        raise UserError(f"{source}: skill {number}: 'examples' must be a list of strings")
    path = entry.get("path")
    if entry.get("kind") == SKILL_MD or (entry.get("kind") is None and path is not None):
        if not isinstance(path, str) or not path:
            raise UserError(f"{source}: skill {number} is a SKILL.md skill without a 'path'")
        skill_name = entry.get("skill_name")
        return LeafSpec(
            entry["name"],
            entry["description"],
            tuple(examples),
            path=os.path.normpath(base / Path(path).expanduser()),
            skill_name=skill_name if isinstance(skill_name, str) and skill_name else entry["name"],
        )
    return LeafSpec(entry["name"], entry["description"], tuple(examples))
