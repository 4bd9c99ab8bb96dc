"""One tree for every skill of a workspace: its code skills and its SKILL.md skills.

- Code skills and their categories come from ``data/categories.json``.
- SKILL.md skills come from the workspace's locations (:mod:`.skill_md`).
  One whose frontmatter names a code category (``metadata: {category:
  email}``) hangs there; the others are placed by the tree builder
  (:mod:`.build`) in categories of their own, beside the code categories.
- The built part is stored in ``data/tree.json`` (the shape of
  ``categories.json``; every SKILL.md leaf with its path, the name its
  SKILL.md gives, the file's size and time, and what its body says to find
  it by, :mod:`.skill_md_evidence`). Loading compares it with
  what is on disk now and rebuilds only for the skills that changed
  (added, removed, description edited); when nothing changed, nothing is
  embedded and nothing is written.
- An example a skill gives that a skill loaded before it gives already is
  left out of the later one, with a warning (:mod:`.copied_examples`).

Leaf ids are the skills' names, normalised as the standard wants them; two
skills sharing one are both kept (:mod:`.leaf_ids`). Which of them keeps the
name as its id, in this order: a skill whose name is its id as written,
before one whose name only normalises to it; then the one that held it in the
stored tree (which keeps every SKILL.md leaf id with its folder), so a skill
added later, named alike, never takes the id of one the person already runs by
it; then the precedence of the locations (:mod:`.skill_md`) and, within one, of the folders
(:func:`~semif_agent.catalog.loader.precedence`: nearer the top, not hidden,
then by path). What was renamed or skipped is the tree's
:class:`~.skill_md_report.SkillMdReport`, stored in ``data/tree.json`` with
it: ``changed`` says when it differs from the one stored, so a command can say
so once.
"""

from __future__ import annotations

import json
import os
from collections.abc import Callable, Iterable, Mapping
from dataclasses import replace
from pathlib import Path

from .._files import replace_file
from ..catalog.names import skill_md_leaf_id
from ..errors import ManifestError
from ..workspace import Workspace
from ._vectors import Embed
from .build import MAX_CHILDREN, LeafSpec, update_tree
from .copied_examples import without_copied_examples
from .leaf_ids import distinct_ids
from .manifests import (
    RESERVED_IDS,
    SKILL_MD,
    Category,
    Manifests,
    SkillManifest,
    load_manifests,
    parse_manifests,
    skill_md_effects,
)
from .skill_md import SkillMdFolder, SkillMdScan, scan_skill_md, skill_md_locations
from .skill_md_evidence import evidence_from_json, evidence_to_json, remember_evidence, signed_evidence
from .skill_md_report import Renamed, SkillMdReport

TREE_FILE = "tree.json"
TREE_VERSION = 1
MAX_TREE_BYTES = 64 * 1024 * 1024
"""The largest stored tree read or written: each skill's part is bounded (:func:`.skill_md.bounded`), so only
tens of thousands of skills reach it; a larger file is not read (it is rebuilt), a larger tree is not stored."""
Progress = Callable[[str, int, int], None]


def tree_file(workspace: Workspace) -> Path:
    """Where the built part of the workspace's tree is stored."""
    return workspace.data_dir / TREE_FILE


def workspace_manifests(
    workspace: Workspace,
    *,
    embed: Embed | None = None,
    progress: Progress | None = None,
    full: bool = False,
) -> Manifests:
    """The categories and skills of the workspace's whole tree (:meth:`SkillTree.for_workspace`), the stored built
    part brought up to date (``full``: rebuilt from scratch).

    ``embed`` embeds texts for placing skills (default: the local model, or
    the builder's fallback without it); ``progress(stage, done, total)``
    reports long work.
    """
    code = load_manifests(workspace.categories_path, workspace.bodies_dir)
    path = tree_file(workspace)
    stored = _read_stored(path)
    problems: list[ManifestError] = list(code.problems)
    scan = scan_skill_md(workspace, known=_known(stored, path.parent))
    taken = set(code.categories) | set(code.skills) | RESERVED_IDS
    held = _held(stored, path.parent)
    ids, report = _leaf_ids(scan, taken, SkillMdReport.from_json(stored.get("report")), held)
    direct, placed = _split_by_category(scan.skills, ids, code.categories)
    flat = [_flat(found, leaf_id, path.parent) for leaf_id, found in placed]
    reserved = taken | set(ids)
    previous = {} if full or not _usable(stored, reserved) else stored
    built: Mapping[str, object]
    if not flat:
        built = {"categories": [], "skills": []}
    elif not full and _same_leaves(previous, flat):
        built = previous
    else:
        top = sum(1 for c in code.categories.values() if not c.parent)
        built, _ = update_tree(
            previous,
            flat,
            max_children=MAX_CHILDREN,
            top_capacity=max(1, MAX_CHILDREN - top),
            reserved=reserved,
            embed=embed,
            progress=progress,
        )
    built = _stored_form(built, placed, report, _held_form(scan, ids, held, path.parent))
    if built != stored and (scan.skills or stored or report):  # unchanged, or nothing to keep: nothing is written
        _store(path, built, problems)
    parsed = parse_manifests(built, file=str(path), bodies_dir=workspace.bodies_dir, base=path.parent)
    problems += parsed.problems
    categories = dict(code.categories)
    for name, category in parsed.categories.items():
        categories[name] = Category(category.name, category.description, category.parent, built=True)
    skills = dict(code.skills)
    for leaf_id, found in direct:
        skills[leaf_id] = _leaf(found, leaf_id, found.metadata["category"])
    skills.update(parsed.skills)
    skills = without_copied_examples(skills, problems)
    return Manifests(categories, skills, problems, code.none_examples, report)


def stored_skill_md(workspace: Workspace) -> dict[str, SkillMdFolder]:
    """What the stored tree says each SKILL.md held, by path, with the file's signature then: a scan given it as
    ``known`` parses only the files changed since (empty when there is no stored tree)."""
    path = tree_file(workspace)
    return _known(_read_stored(path), path.parent)


def skill_md_folders(workspace: Workspace) -> tuple[list[Path], SkillMdReport]:
    """Every SKILL.md folder of the workspace's locations in precedence order (skipped ones last), and the report
    (which alone holds what a search noted of a whole location, such as folders too deep to search).

    Reads only the SKILL.md skills (and the code skills' names, when
    ``categories.json`` can be read, for the ids they take); builds nothing.
    """
    try:
        code = load_manifests(workspace.categories_path, workspace.bodies_dir)
        taken = set(code.categories) | set(code.skills) | RESERVED_IDS
    except ManifestError:
        taken = set(RESERVED_IDS)
    scan = scan_skill_md(workspace)
    path = tree_file(workspace)
    _, report = _leaf_ids(scan, taken, SkillMdReport(), _held(_read_stored(path), path.parent))
    locations = {str(location.path) for location in skill_md_locations(workspace)}
    skipped = [Path(item.folder) for item in report.skipped if item.folder not in locations]  # a search's own notes
    return [found.folder for found in scan.skills] + skipped, report


def _leaf_ids(
    scan: SkillMdScan, taken: set[str], stored: SkillMdReport, held: dict[str, str]
) -> tuple[list[str], SkillMdReport]:
    """The leaf id of each skill found (its name normalised, kept apart from others), and what that renamed.

    ``held`` maps a skill folder to the id it had in the stored tree. The report says whether it differs from
    ``stored``, the one kept with the tree.
    """
    names = [skill_md_leaf_id(found.name, found.folder.name) for found in scan.skills]
    folders = [os.path.normpath(found.folder) for found in scan.skills]

    def claim(index: int) -> tuple[bool, bool, int]:
        # A skill named exactly its id claims it before one whose name only normalises to it ("Deploy Prod"):
        # `--skill deploy-prod` runs the skill that says `name: deploy-prod`. Among those named alike, the one that
        # held the id keeps it, so one added later (in a hidden or nested collection) never takes `--skill NAME`
        # from the skill it named; else the scan's precedence order.
        holder = held.get(folders[index]) == names[index]
        return names[index] != scan.skills[index].name, not holder, index

    order = sorted(range(len(names)), key=claim)
    pairs = [(names[index], scan.skills[index].folder) for index in order]
    claimed, collisions = distinct_ids(pairs, taken=taken, held=_held_while_skipped(scan, held))
    ids = [""] * len(names)
    for index, leaf_id in zip(order, claimed):
        ids[index] = leaf_id
    kept_by = {collision.folder: collision.kept_by for collision in collisions}
    renamed = tuple(
        Renamed(str(found.folder), found.name, leaf_id, kept_by.get(str(found.folder), ""))
        for found, leaf_id in zip(scan.skills, ids)
        if leaf_id != found.name
    )
    report = SkillMdReport.bounded(renamed, scan.skipped, scan.more_skipped)
    return ids, replace(report, changed=report != stored)


def _split_by_category(
    found: list[SkillMdFolder], ids: list[str], code_categories: dict[str, Category]
) -> tuple[list[tuple[str, SkillMdFolder]], list[tuple[str, SkillMdFolder]]]:
    """SKILL.md skills whose frontmatter names a code category, and the ones the builder places."""
    direct: list[tuple[str, SkillMdFolder]] = []
    placed: list[tuple[str, SkillMdFolder]] = []
    for leaf_id, skill in zip(ids, found):
        category = skill.metadata.get("category") if isinstance(skill.metadata, dict) else None
        (direct if category in code_categories else placed).append((leaf_id, skill))
    return direct, placed


def _flat(found: SkillMdFolder, leaf_id: str, base: Path) -> LeafSpec:
    return LeafSpec(
        leaf_id,
        found.description,
        found.examples,
        path=_relative(found.skill_md, base),
        skill_name=found.name if found.name != leaf_id else None,
    )


def _leaf(found: SkillMdFolder, leaf_id: str, category: str) -> SkillManifest:
    return SkillManifest(
        name=leaf_id,
        category=category,
        description=found.description,
        examples=found.examples,
        kind=SKILL_MD,
        source=found.skill_md,
        source_name=found.name,
        effects=skill_md_effects(found.metadata, found.description),
    )


def _relative(path: Path, base: Path) -> str:
    try:
        return os.path.relpath(path, base)
    except ValueError:  # another drive
        return str(path)


def _read_stored(path: Path) -> dict[str, object]:
    try:
        if path.stat().st_size > MAX_TREE_BYTES:
            return {}  # larger than any tree this version stores: rebuilt, never read
        data = json.loads(path.read_text(encoding="utf-8"))
    except FileNotFoundError:
        return {}
    except (OSError, UnicodeDecodeError, json.JSONDecodeError):
        return {}  # a damaged store is rebuilt, never trusted
    if not isinstance(data, dict) or data.get("version") != TREE_VERSION:
        return {}
    if not isinstance(data.get("categories"), list) or not isinstance(data.get("skills"), list):
        return {}
    return data


def _entries(tree: Mapping[str, object], key: str) -> list[dict[str, object]]:
    """The objects in one of a stored tree's lists (``categories``, ``skills``); anything else there is left out."""
    items = tree.get(key)
    return [item for item in items if isinstance(item, dict)] if isinstance(items, list) else []


def _known(stored: Mapping[str, object], base: Path) -> dict[str, SkillMdFolder]:
    """What the store says each SKILL.md held, by path, with the file's signature then (an entry not of that shape
    is left out: its SKILL.md is read again); what it says each body held is remembered for scoring, at the version
    it was read at (:func:`~.skill_md_evidence.remember_evidence`)."""
    known = {}
    for entry in _entries(stored, "skills"):
        path = entry.get("path")
        found = _seen(entry, Path(os.path.normpath(os.path.join(base, path)))) if isinstance(path, str) else None
        if found is not None:
            known[str(found.skill_md)] = found
            seen = entry["seen"]
            told = evidence_from_json(seen.get("evidence")) if isinstance(seen, dict) else None
            if told is not None:  # served only while the file is at the version it was read at
                remember_evidence(found.skill_md, *told)
    return known


def _seen(entry: Mapping[str, object], skill_md: Path) -> SkillMdFolder | None:
    """The skill a stored leaf says its SKILL.md held when it had the ``signature`` kept with it."""
    seen = entry.get("seen")
    if not isinstance(seen, dict):
        return None
    signature = seen.get("signature")
    name = seen.get("name") or entry.get("skill_name") or entry.get("name")
    description = entry.get("description", "")
    metadata = seen.get("metadata") or {}
    script = seen.get("script")
    examples = entry.get("examples") or []
    if not (
        isinstance(signature, list)
        and len(signature) == 2
        and all(isinstance(number, int) for number in signature)
        and isinstance(name, str)
        and isinstance(description, str)
        and isinstance(metadata, dict)
        and all(isinstance(key, str) and isinstance(value, str) for key, value in metadata.items())
        and (script is None or isinstance(script, str))
        and isinstance(examples, list)
    ):
        return None
    texts = tuple(text for text in examples if isinstance(text, str))
    return SkillMdFolder(
        name, description, skill_md.parent, skill_md, (signature[0], signature[1]), metadata, script, texts
    )


def _held(stored: Mapping[str, object], base: Path) -> dict[str, str]:
    """The id each SKILL.md skill folder had in the stored tree, by folder (a store written before ``held`` was
    kept: the leaves it placed)."""
    held = stored.get("held")
    if isinstance(held, dict):
        pairs = [(folder, leaf_id) for leaf_id, folder in held.items()]
    else:
        paths = [(e.get("path"), e.get("name")) for e in _entries(stored, "skills")]
        pairs = [(os.path.dirname(path), leaf_id) for path, leaf_id in paths if isinstance(path, str)]
    return {
        os.path.normpath(os.path.join(base, folder)): leaf_id
        for folder, leaf_id in pairs
        if isinstance(folder, str) and isinstance(leaf_id, str)
    }


def _held_while_skipped(scan: SkillMdScan, held: dict[str, str]) -> dict[str, str]:
    """The ids held by skill folders this scan skipped (a SKILL.md broken while it is edited), by id: kept for
    them, so no other skill takes one meanwhile; a folder removed gives its id up."""
    skipped = {os.path.normpath(item.folder) for item in scan.skipped}
    return {leaf_id: folder for folder, leaf_id in held.items() if folder in skipped}


def _held_form(scan: SkillMdScan, ids: list[str], held: dict[str, str], base: Path) -> dict[str, str]:
    """Each SKILL.md skill's id and its folder, relative to ``base``, as the stored tree keeps them, with the ids
    kept for the folders skipped."""
    kept = {leaf_id: _relative(Path(folder), base) for leaf_id, folder in _held_while_skipped(scan, held).items()}
    return kept | {leaf_id: _relative(found.folder, base) for leaf_id, found in zip(ids, scan.skills)}


def _usable(stored: Mapping[str, object], reserved: set[str]) -> bool:
    """A stored tree can be updated when its categories take no name a code skill or category now has."""
    names = [c.get("name") for c in _entries(stored, "categories")]
    return bool(names) and not any(name in reserved or not isinstance(name, str) for name in names)


def _same_leaves(previous: Mapping[str, object], flat: list[LeafSpec]) -> bool:
    def key(entry: Mapping[str, object]) -> tuple[object, ...]:
        examples = entry.get("examples")
        return (
            entry.get("name"),
            entry.get("description"),
            entry.get("path"),
            entry.get("skill_name") or None,
            tuple(examples) if isinstance(examples, list) else (),
        )

    stored = sorted(key(e) for e in _entries(previous, "skills"))
    wanted = sorted((s.name, s.description, s.path, s.skill_name or None, tuple(s.examples)) for s in flat)
    return bool(stored) and stored == wanted


def _stored_form(
    built: Mapping[str, object],
    placed: Iterable[tuple[str, SkillMdFolder]],
    report: SkillMdReport,
    held: dict[str, str],
) -> dict[str, object]:
    """The built tree with what each SKILL.md held, its body's evidence included (so the next load, and the next
    process's scoring, can skip unchanged files), the id of every SKILL.md skill with its folder (``held``: the
    next load keeps each id with its folder), and the report."""
    by_id = dict(placed)
    skills = []
    for entry in _entries(built, "skills"):
        entry = dict(entry)
        leaf_id = entry.get("name")
        skill = by_id.get(leaf_id) if isinstance(leaf_id, str) else None
        if skill is not None:
            seen: dict[str, object] = {
                "signature": list(skill.signature),
                "name": skill.name,
                "metadata": dict(skill.metadata),
                "script": skill.script,
            }
            read_at, evidence = signed_evidence(skill.skill_md)
            if read_at is not None:
                seen["evidence"] = evidence_to_json(read_at, evidence)
            entry["seen"] = seen
        skills.append(entry)
    categories = built.get("categories")
    stored: dict[str, object] = {
        "version": TREE_VERSION,
        "categories": list(categories) if isinstance(categories, list) else [],
        "skills": skills,
    }
    if held:
        stored["held"] = held
    if report:
        stored["report"] = report.to_json()
    return stored


def _store(path: Path, data: Mapping[str, object], problems: list[ManifestError]) -> None:
    """Write the built tree atomically; a workspace that cannot be written, or a tree over :data:`MAX_TREE_BYTES`,
    keeps it in memory only."""
    text = json.dumps(data, ensure_ascii=False, indent=1) + "\n"
    size = len(text.encode("utf-8"))
    if size > MAX_TREE_BYTES:
        reason = f"the built tree is {size} bytes, over the {MAX_TREE_BYTES} stored; it is rebuilt next time"
        problems.append(ManifestError(reason, file=str(path)))
        return
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        replace_file(path, text)
    except OSError as exc:
        problems.append(
            ManifestError(
                f"the built tree could not be stored ({exc.strerror}); it is rebuilt next time", file=str(path)
            )
        )
