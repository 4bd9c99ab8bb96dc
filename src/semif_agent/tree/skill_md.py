"""A workspace's SKILL.md skills: where they are found, and one scan of them all.

Locations, highest precedence first (the order decides which of two skills
sharing a name keeps it; see :mod:`.leaf_ids`):

1. ``<workspace>/skills/``
2. ``<workspace>/.agents/skills/``
3. the folders listed in ``semif.toml`` (``[skills] folders = [...]``, relative to the workspace)
4. ``~/.agents/skills/`` (unless ``[skills] user_skills = false``)

Each location may hold skill folders directly or collections of them
(:func:`~semif_agent.catalog.loader.search_skill_folders`), hidden collection
folders (``.system``, ``.curated``) included; links are not followed, and a
link out of the location, a folder of too many entries or a search cut short
is reported. A skill that cannot be loaded is skipped (and reported, see
:mod:`.skill_md_report`); the others load.

A scan re-reads only the SKILL.md files that changed since the last one: the
stored tree keeps each file's size and modification time next to what it
said (``known``).

What a skill brings into the tree is bounded (:func:`bounded`), whether read
now or remembered: a name, description, script or metadata over
:data:`MAX_FIELD_CHARS` refuses the skill with that reason; at most
:data:`MAX_EXAMPLES` example requests are kept, each at most
:data:`MAX_EXAMPLE_CHARS`. So one SKILL.md can never make the stored tree
(``data/tree.json``) large.
"""

from __future__ import annotations

import json
import os
import re
from collections import Counter
from collections.abc import Mapping
from dataclasses import dataclass, field, replace
from pathlib import Path

from ..catalog.errors import SkillParseError
from ..catalog.frontmatter import SkillDocument
from ..catalog.loader import find_skill_md, load_skill, parse_failure, parse_skill_md, search_skill_folders
from ..catalog.locations import SkillLocation, conventional_locations, custom_location
from ..workspace import Workspace
from .skill_md_report import Skipped

EXAMPLES_HEADING = re.compile(r"^#{2,3}\s+(example requests|examples)\s*$", re.IGNORECASE)
EXAMPLES_SECTION = re.compile(EXAMPLES_HEADING.pattern, re.IGNORECASE | re.MULTILINE)
"""An examples heading anywhere in a body."""
LIST_ITEM = re.compile(r"^\s*(?:[-*]|\d+[.)])\s+(.+)$")
MAX_FIELD_CHARS = 4096
"""The longest name, description, script path or metadata (as JSON) a SKILL.md skill loads with (the standard
allows 64, 1024, a path and a few short strings)."""
MAX_EXAMPLES = 32
"""The most example requests kept of one skill."""
MAX_EXAMPLE_CHARS = 500
"""The longest example request kept (a longer one is left out)."""


@dataclass(frozen=True)
class SkillMdFolder:
    """A SKILL.md skill folder found in a workspace's locations, with what its frontmatter says."""

    name: str
    description: str
    folder: Path
    skill_md: Path
    signature: tuple[int, int]  # size and mtime of the SKILL.md, to notice an edit
    metadata: Mapping[str, str] = field(default_factory=dict)
    script: str | None = None
    examples: tuple[str, ...] = ()  # example requests: an `examples` list, or the `## Examples` section's items


@dataclass
class SkillMdScan:
    """What a scan found: the skills in precedence order, and the folders it had to skip (with why; and how many
    more its searches counted without naming them, by reason)."""

    skills: list[SkillMdFolder] = field(default_factory=list)
    skipped: list[Skipped] = field(default_factory=list)
    more_skipped: Counter[str] = field(default_factory=Counter)


def skill_md_locations(workspace: Workspace) -> list[SkillLocation]:
    """The workspace's SKILL.md locations, highest precedence first (absent ones included)."""
    configured = workspace.settings.skills.folders
    user = workspace.settings.skills.user_skills
    return [
        *conventional_locations(workspace.root, include_user=False),
        *(custom_location(workspace.resolve(item), "configured") for item in configured),
        *conventional_locations(include_user=user),
    ]


def scan_skill_md(workspace: Workspace, known: Mapping[str, SkillMdFolder] | None = None) -> SkillMdScan:
    """Every SKILL.md skill of ``workspace``, in precedence order.

    ``known`` maps a SKILL.md path to what it held last time (with its
    ``signature`` then): a file whose signature did not change is not parsed
    again.
    """
    known = known or {}
    scan = SkillMdScan()
    seen: set[str] = set()
    for location in skill_md_locations(workspace):
        if not location.path.is_dir():
            continue
        real_location = os.path.realpath(location.path)
        for relative, folder in _folders(location.path, scan):
            # the search follows no link below the location: its real path is the location's, joined
            real = real_location if folder == location.path else os.path.join(real_location, relative)
            if real in seen:
                continue
            seen.add(real)
            skill_md = find_skill_md(folder)
            if skill_md is None:
                continue
            signature = _signature(skill_md)
            cached = known.get(str(skill_md))
            if cached is not None and cached.signature == signature:
                _add(scan, replace(cached, folder=folder, skill_md=skill_md))
                continue
            try:
                parsed = parse_skill_md(skill_md)  # read once: the load and the example requests both need it
            except SkillParseError as exc:
                scan.skipped.append(Skipped(str(folder), parse_failure(exc)))
                continue
            result = load_skill(
                folder,
                namespace=location.namespace,
                source=location.source,
                source_label=location.label,
                skill_md=skill_md,
                parsed=parsed,
            )
            if result.descriptor is None:
                scan.skipped.append(Skipped(str(folder), result.skipped))
                continue
            info = result.descriptor
            _add(
                scan,
                SkillMdFolder(
                    info.name,
                    info.description,
                    folder,
                    skill_md,
                    signature,
                    dict(info.metadata),
                    info.script,
                    examples_in(*parsed),
                ),
            )
    return scan


def bounded(found: SkillMdFolder) -> SkillMdFolder | str:
    """``found`` with its examples cut to the caps, or why it is refused (a field over :data:`MAX_FIELD_CHARS`)."""
    fields = {
        "name": found.name,
        "description": found.description,
        "script": found.script or "",
        "metadata": json.dumps(dict(found.metadata), ensure_ascii=False),
    }
    for key, value in fields.items():
        if len(value) > MAX_FIELD_CHARS:
            return f"'{key}' is {len(value)} characters; at most {MAX_FIELD_CHARS} are loaded"
    examples = tuple(text for text in found.examples if isinstance(text, str) and len(text) <= MAX_EXAMPLE_CHARS)
    examples = examples[:MAX_EXAMPLES]
    return found if examples == found.examples else replace(found, examples=examples)


def _add(scan: SkillMdScan, found: SkillMdFolder) -> None:
    kept = bounded(found)
    if isinstance(kept, str):
        scan.skipped.append(Skipped(str(found.folder), kept))
    else:
        scan.skills.append(kept)


def example_requests(skill_md: Path) -> tuple[str, ...]:
    """A SKILL.md's example requests: its frontmatter's ``examples`` list, and the items of an ``## Examples`` section."""
    try:
        return examples_in(*parse_skill_md(skill_md))
    except SkillParseError:
        return ()


def examples_in(document: SkillDocument, data: Mapping[str, object]) -> tuple[str, ...]:
    """The example requests of a SKILL.md already parsed (:func:`example_requests`)."""
    listed = data.get("examples")
    found = (
        [str(item).strip() for item in listed if isinstance(item, (str, int, float))]
        if isinstance(listed, list)
        else []
    )
    section = False
    lines = document.body.splitlines() if EXAMPLES_SECTION.search(document.body) else []  # most have none
    for line in lines:
        heading = EXAMPLES_HEADING.match(line)
        if line.startswith("#"):
            section = bool(heading)
            continue
        item = LIST_ITEM.match(line) if section else None
        if item:
            found.append(item.group(1).strip().strip('"“”'))
    return tuple(dict.fromkeys(text for text in found if text))


def _folders(root: Path, scan: SkillMdScan) -> list[tuple[str, Path]]:
    """The skill folders of the location ``root`` (itself first when it is one skill, then the skills within it);
    what the search left out goes to ``scan``'s skipped."""
    search = search_skill_folders(root)
    scan.skipped.extend(Skipped(str(folder), reason) for folder, reason in search.skipped)
    scan.more_skipped.update(search.more_skipped)
    own = [(root.name, root)] if find_skill_md(root) is not None else []
    return own + search.found


def _signature(path: Path) -> tuple[int, int]:
    try:
        info = path.stat()
    except OSError:
        return (-1, -1)
    return (info.st_size, info.st_mtime_ns)
