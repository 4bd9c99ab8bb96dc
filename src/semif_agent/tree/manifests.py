"""Categories and code-skill manifests, loaded from ``data/categories.json``.

The file::

    {"version": 1,
     "categories": [{"name": "email", "description": "..."}],
     "skills": [{"name": "email.compose", "category": "email", "description": "...",
                 "allowed_inputs": "...", "actions": ["..."], "cost_budget": 2,
                 "decision_log_ref": "data/decisions.jsonl?skill=email.compose",
                 "examples": ["..."], "effects": "write",
                 "learned_examples": [{"text": "...", "run": "RUN_ID", "by": "label"}]},
                {"name": "email.archive", "description": "..."},
                {"name": "systematic-debugging", "category": "debugging", "description": "...",
                 "kind": "skill_md", "path": "../skills/systematic-debugging/SKILL.md"}],
     "none_examples": ["Book a flight to Rome", "..."]}

What a name may be is :mod:`semif_agent.catalog.names`. A leaf is a code
skill (``kind`` absent or ``"code"``: name words joined by dots, and a body
under ``data/skills/``) or a SKILL.md skill (``kind:
"skill_md"``: its ``path`` is the SKILL.md file, relative to the file that
lists it; its name is the one its folder gives, kept as written, and
``skill_name`` says so when the leaf's id had to differ).

Only ``name`` and ``description`` are required; the rest fill in as the
skill is exercised. A code skill's ``category``, when not given, is where its
name places it: the first word of a dotted name (``email.archive`` goes under
``email``), or :data:`DEFAULT_CATEGORY` for a name without a dot; such a
category is made, without a description, when the file does not list it. A
``category`` given explicitly must be listed (a misspelt one is reported).

``learned_examples`` are requests the skill served, written back by the host
from labelled and judged runs (see :mod:`semif_agent.loop.learned_examples`),
never by hand: each holds the request's ``text``, its ``run`` id and ``by``
(``"label"`` or ``"judge"``). They count as examples, after a person's own
``examples``, which they never replace.

``effects`` says what a leaf does to the workspace, ``"read"`` or ``"write"``
(see :mod:`.effects`; inferred from its words when absent). ``none_examples``
are requests no skill of the file serves: the ``none`` option's examples.

Loading is lenient: a bad entry is reported (file and entry) and skipped, and
the rest still load. A file that is not valid JSON is one clear error.
"""

from __future__ import annotations

import json
import os
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from .._json import JsonObject
from ..catalog.names import RESERVED_IDS, category_name_problem, code_skill_name_problem, skill_md_leaf_problem
from ..errors import ManifestError
from .effects import effects_problem, infer_effects
from .skill_md_report import SkillMdReport

DEFAULT_COST_BUDGET = 5
DEFAULT_CATEGORY = "general"
"""Where a code skill whose name has no dot, and that names no category, is placed."""
CODE = "code"
SKILL_MD = "skill_md"
KINDS = (CODE, SKILL_MD)


@dataclass(frozen=True)
class Category:
    """A node of the tree. ``parent`` nests it under another category ("" = top level).

    ``built`` marks a category the tree builder made for SKILL.md skills
    (stored in ``data/tree.json``), not one of ``categories.json``.
    """

    name: str
    description: str = ""
    parent: str = ""
    built: bool = False


@dataclass(frozen=True)
class SkillManifest:
    """A leaf's registry entry: the seed's fields, plus optional ``examples`` and ``effects``.

    ``examples`` are a person's, then the ``learned_examples`` (their texts, also listed apart).

    ``kind`` is ``"code"`` (a body with ``predict``/``act`` at ``body_path``)
    or ``"skill_md"`` (a SKILL.md skill: ``source`` is its SKILL.md file and
    ``source_name`` the name written there, which ``name`` differs from only
    when two skills share it).
    """

    name: str
    category: str
    description: str
    allowed_inputs: Any = ""
    actions: tuple[str, ...] = ()
    cost_budget: int = DEFAULT_COST_BUDGET
    decision_log_ref: str = ""
    examples: tuple[str, ...] = ()
    body_path: Path | None = None
    kind: str = CODE
    source: Path | None = None
    source_name: str = ""
    effects: str = "write"  # "read" | "write": what it does to the workspace (see .effects)
    learned_examples: tuple[str, ...] = ()  # the examples written back from runs (also in ``examples``)

    @property
    def own_examples(self) -> tuple[str, ...]:
        """The examples a person gave (``examples`` without the learned ones)."""
        learned = set(self.learned_examples)
        return tuple(e for e in self.examples if e not in learned)

    @property
    def leaf(self) -> str:
        """The name without its category prefix (``compose`` for ``email.compose``)."""
        prefix = f"{self.category}."
        return self.name[len(prefix) :] if self.name.startswith(prefix) else self.name

    @property
    def is_stub(self) -> bool:
        """A code skill without a body: listed and navigable, but it cannot act."""
        return self.kind == CODE and (self.body_path is None or not self.body_path.is_file())

    @property
    def is_skill_md(self) -> bool:
        return self.kind == SKILL_MD

    def to_dict(self) -> JsonObject:
        if self.kind == SKILL_MD:
            return {
                "name": self.name,
                "kind": SKILL_MD,
                "category": self.category,
                "description": self.description,
                "examples": list(self.own_examples),
                "learned_examples": list(self.learned_examples),
                "path": str(self.source) if self.source else None,
                "skill_name": self.source_name or self.name,
                "effects": self.effects,
            }
        return {
            "name": self.name,
            "kind": CODE,
            "category": self.category,
            "description": self.description,
            "allowed_inputs": self.allowed_inputs,
            "actions": list(self.actions),
            "cost_budget": self.cost_budget,
            "decision_log_ref": self.decision_log_ref,
            "examples": list(self.own_examples),
            "learned_examples": list(self.learned_examples),
            "effects": self.effects,
            "body": str(self.body_path) if self.body_path else None,
            "stub": self.is_stub,
        }


def body_path_for(bodies_dir: Path, category: str, name: str) -> Path:
    """Where a skill's body lives: ``<bodies_dir>/<category>/<leaf>.py``."""
    prefix = f"{category}."
    leaf = name[len(prefix) :] if name.startswith(prefix) else name
    return bodies_dir / category / f"{leaf}.py"


@dataclass
class Manifests:
    """What a ``categories.json`` held: categories, skills, and the entries skipped."""

    categories: dict[str, Category] = field(default_factory=dict)
    skills: dict[str, SkillManifest] = field(default_factory=dict)
    problems: list[ManifestError] = field(default_factory=list)
    none_examples: tuple[str, ...] = ()  # requests no skill serves: the ``none`` option's examples
    skill_md_report: SkillMdReport = field(default_factory=SkillMdReport)  # SKILL.md skills renamed or skipped


def load_manifests(path: Path, bodies_dir: Path) -> Manifests:
    """Read ``path`` leniently. Raises :class:`ManifestError` only if the file is unusable."""
    try:
        text = path.read_text(encoding="utf-8")
    except FileNotFoundError:
        raise ManifestError("no such file; create a workspace with: semif init DIR", file=str(path)) from None
    except (OSError, UnicodeDecodeError) as exc:
        raise ManifestError(f"cannot read ({exc})", file=str(path)) from exc
    try:
        data = json.loads(text)
    except json.JSONDecodeError as exc:
        raise ManifestError(
            f"invalid JSON at line {exc.lineno}, column {exc.colno}: {exc.msg}", file=str(path)
        ) from exc
    if not isinstance(data, dict):
        raise ManifestError("expected a JSON object with 'categories' and 'skills'", file=str(path))
    return parse_manifests(data, file=str(path), bodies_dir=bodies_dir)


def parse_manifests(data: Mapping[str, object], *, file: str, bodies_dir: Path, base: Path | None = None) -> Manifests:
    """Parse a loaded file leniently. A SKILL.md leaf's ``path`` is relative to ``base`` (default: ``file``'s folder)."""
    base = base if base is not None else Path(file).parent
    result = Manifests()
    for index, entry in enumerate(_entries(data, "categories", file, result)):
        try:
            category = _category(entry)
        except ManifestError as exc:
            result.problems.append(ManifestError(str(exc), file=file, entry=_label(entry, "categories", index)))
            continue
        if category.name in result.categories:
            result.problems.append(
                ManifestError("duplicate category, skipped", file=file, entry=_label(entry, "categories", index))
            )
            continue
        result.categories[category.name] = category
    _drop_orphans(result, file)
    for index, entry in enumerate(_entries(data, "skills", file, result)):
        try:
            skill = _skill(entry, result.categories, bodies_dir, base)
        except ManifestError as exc:
            result.problems.append(ManifestError(str(exc), file=file, entry=_label(entry, "skills", index)))
            continue
        if skill.name in result.skills:
            result.problems.append(
                ManifestError("duplicate leaf, skipped (the first one is kept)", file=file, entry=skill.name)
            )
            continue
        result.skills[skill.name] = skill
    none_examples = data.get("none_examples", [])
    if isinstance(none_examples, list) and all(isinstance(e, str) for e in none_examples):
        result.none_examples = tuple(e.strip() for e in none_examples if e.strip())
    else:
        result.problems.append(ManifestError("'none_examples' must be a list of strings, skipped", file=file))
    return result


def _entries(data: Mapping[str, object], key: str, file: str, result: Manifests) -> list[object]:
    entries = data.get(key, [])
    if not isinstance(entries, list):
        result.problems.append(ManifestError(f"'{key}' must be a list", file=file))
        return []
    return entries


def _label(entry: object, key: str, index: int) -> str:
    if isinstance(entry, dict) and isinstance(entry.get("name"), str):
        return entry["name"]
    return f"{key}[{index}]"


def _text(entry: Mapping[str, object], key: str, *, required: bool) -> str:
    value = entry.get(key, "")
    if not isinstance(value, str):
        raise ManifestError(f"'{key}' must be a string")
    if required and not value.strip():
        raise ManifestError(f"'{key}' is required")
    return value.strip()


def _category(entry: object) -> Category:
    if not isinstance(entry, dict):
        raise ManifestError("a category must be an object")
    name = _text(entry, "name", required=True)
    problem = category_name_problem(name)
    if problem:
        raise ManifestError(problem)
    parent = _text(entry, "parent", required=False)
    if parent == name:
        raise ManifestError("a category cannot be its own parent")
    return Category(name=name, description=_text(entry, "description", required=False), parent=parent)


def _drop_orphans(result: Manifests, file: str) -> None:
    """Skip categories whose parent is unknown or that sit on a cycle (and their descendants)."""
    while True:
        bad = [c for c in result.categories.values() if c.parent and c.parent not in result.categories]
        bad += [c for c in result.categories.values() if c not in bad and _on_cycle(c, result.categories)]
        if not bad:
            return
        for category in bad:
            reason = (
                "is on a cycle of parents"
                if category.parent in result.categories
                else f"unknown parent {category.parent!r}"
            )
            result.problems.append(ManifestError(f"category {reason}, skipped", file=file, entry=category.name))
            del result.categories[category.name]


def _on_cycle(category: Category, categories: dict[str, Category]) -> bool:
    seen = {category.name}
    parent = category.parent
    while parent:
        if parent in seen:
            return True
        seen.add(parent)
        node = categories.get(parent)
        if node is None:
            return False
        parent = node.parent
    return False


def _skill(entry: object, categories: dict[str, Category], bodies_dir: Path, base: Path) -> SkillManifest:
    if not isinstance(entry, dict):
        raise ManifestError("a skill manifest must be an object")
    name = _text(entry, "name", required=True)
    kind = entry.get("kind", CODE)
    if kind not in KINDS:
        raise ManifestError(f"kind must be one of {', '.join(KINDS)}, not {kind!r}")
    if name in RESERVED_IDS or name in categories:
        raise ManifestError(f"name {name!r} is taken ({'a category' if name in categories else 'the none option'})")
    if kind == SKILL_MD:
        return _skill_md(entry, name, categories, base)
    problem = code_skill_name_problem(name)
    if problem:
        raise ManifestError(problem)
    category = _text(entry, "category", required=False)
    placed = "" if category else _placed(name)
    if category and category not in categories:
        raise ManifestError(f"unknown category {category!r}")
    category = category or placed
    description = _text(entry, "description", required=True)
    budget = entry.get("cost_budget", DEFAULT_COST_BUDGET)
    if isinstance(budget, bool) or not isinstance(budget, int) or budget < 0:
        raise ManifestError(f"cost_budget must be a non-negative integer (engine calls per run), not {budget!r}")
    actions = entry.get("actions", [])
    if isinstance(actions, str):
        actions = [actions]
    if not isinstance(actions, list) or not all(isinstance(v, str) for v in actions):
        raise ManifestError("'actions' must be a list of strings")
    examples, learned = _examples(entry)
    skill = SkillManifest(
        name=name,
        category=category,
        description=description,
        allowed_inputs=entry.get("allowed_inputs", ""),
        actions=tuple(actions),
        cost_budget=budget,
        decision_log_ref=str(entry.get("decision_log_ref", "")),
        examples=examples,
        learned_examples=learned,
        body_path=body_path_for(bodies_dir, category, name),
        effects=_effects(entry.get("effects"), description, actions),
    )
    if placed:
        categories.setdefault(placed, Category(name=placed))
    return skill


def _skill_md(entry: Mapping[str, object], name: str, categories: dict[str, Category], base: Path) -> SkillManifest:
    problem = skill_md_leaf_problem(name)
    if problem:
        raise ManifestError(problem)
    category = _text(entry, "category", required=True)
    if category not in categories:
        raise ManifestError(f"unknown category {category!r}")
    path = _text(entry, "path", required=True)
    examples, learned = _examples(entry)
    description = _text(entry, "description", required=True)
    seen = entry.get("seen")
    metadata = seen.get("metadata") if isinstance(seen, dict) else None
    declared = entry.get("effects", metadata.get("effects") if isinstance(metadata, dict) else None)
    return SkillManifest(
        name=name,
        category=category,
        description=description,
        examples=examples,
        learned_examples=learned,
        effects=_effects(declared, description),
        kind=SKILL_MD,
        source=Path(os.path.normpath(os.path.join(base, os.path.expanduser(path)))),
        source_name=_text(entry, "skill_name", required=False) or name,
    )


def _placed(name: str) -> str:
    """The category a code skill naming none goes under (made, undescribed, when not listed): see the module."""
    category = name.split(".", 1)[0] if "." in name else DEFAULT_CATEGORY
    problem = category_name_problem(category) or ("it would be the skill's own name" if category == name else None)
    if problem:
        raise ManifestError(f"no category given, and {category!r} cannot be one: {problem}")
    return category


def _examples(entry: Mapping[str, object]) -> tuple[tuple[str, ...], tuple[str, ...]]:
    """``(examples, learned)``: a person's examples then the learned ones not among them (case aside), and the
    learned texts alone."""
    examples = entry.get("examples", [])
    if not isinstance(examples, list) or not all(isinstance(v, str) for v in examples):
        raise ManifestError("'examples' must be a list of strings")
    learned = entry.get("learned_examples", [])
    if not isinstance(learned, list) or not all(
        isinstance(v, dict) and isinstance(v.get("text"), str) for v in learned
    ):
        raise ManifestError("'learned_examples' must be a list of objects with a 'text'")
    seen = {e.strip().casefold() for e in examples}
    texts = []
    for item in learned:
        text = item["text"].strip()
        if text and text.casefold() not in seen:
            seen.add(text.casefold())
            texts.append(text)
    return (*examples, *texts), tuple(texts)


def _effects(declared: object, description: str, actions: list[str] | tuple[str, ...] = ()) -> str:
    """A leaf's ``effects``: as declared (checked), else read from its words (:func:`.effects.infer_effects`)."""
    if declared is None:
        return infer_effects(description, actions)
    problem = effects_problem(declared)
    if problem:
        raise ManifestError(problem)
    return str(declared)


def skill_md_effects(metadata: object, description: str) -> str:
    """A SKILL.md skill's ``effects``: its frontmatter's ``metadata.effects``, else read from its description.

    A value other than ``read`` or ``write`` counts as ``write`` (doubt counts as writing).
    """
    declared = metadata.get("effects") if isinstance(metadata, dict) else None
    if declared is None:
        return infer_effects(description)
    return str(declared) if effects_problem(declared) is None else "write"
