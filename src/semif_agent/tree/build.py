"""Trees for flat catalogs: group skills into categories of at most 15 children, recursively.

Fifteen, so that a decision at any node, with its ``none`` option, shows a
model at most 16 options (what the LLM engine accepts).

Skills are embedded on the local model and split with k-means (k-means++
seeding, fixed seed, so a build is reproducible) until every category holds at
most ``max_children`` children. Each category is named and described by the
words that set its skills apart (TF-IDF against its sibling categories) and a
few of its most central skills, so a model deciding at that level can see
what it holds.
"""

from __future__ import annotations

import math
import re
from collections import Counter
from dataclasses import dataclass, field
from typing import Any

from ..engine.lexical import terms
from ..engine.local import option_text, shared_embedder
from ..errors import UserError
from .manifests import NAME_RE

MAX_CHILDREN = 15
_SEED = 1234
# words every skill description uses ("Use when ..."): they name nothing
_VAGUE = frozenset("use used using when before after skill skill need needs make help helps want work any all "
                   "also other new get set way thing things must should".split())


@dataclass(frozen=True)
class FlatSkill:
    name: str
    description: str
    examples: tuple[str, ...] = ()
    path: str | None = None
    skill_name: str | None = None


@dataclass(frozen=True)
class TreeUpdate:
    added: tuple[str, ...] = ()
    removed: tuple[str, ...] = ()
    changed: tuple[str, ...] = ()
    touched: tuple[str, ...] = ()
    rebuilt: bool = True


def update_tree(previous, skills, *, max_children=MAX_CHILDREN, top_capacity=None, reserved=(), embed=None, progress=None):
    """Placeholder: a full rebuild keeping SKILL.md paths (the incremental builder replaces it)."""
    built = build_tree(list(skills), max_children=max_children, embed=embed)
    by_name = {manifest_name(s.name): s for s in skills}
    for entry in built["skills"]:
        skill = by_name[entry["name"]]
        entry["name"] = skill.name
        if skill.path:
            entry.update(kind="skill_md", path=skill.path)
            if skill.skill_name:
                entry["skill_name"] = skill.skill_name
    taken = set(reserved)
    rename = {c["name"]: c["name"] + "_skills" for c in built["categories"] if c["name"] in taken}
    for entry in built["categories"]:
        entry["name"] = rename.get(entry["name"], entry["name"])
        if entry.get("parent"):
            entry["parent"] = rename.get(entry["parent"], entry["parent"])
    for entry in built["skills"]:
        entry["category"] = rename.get(entry["category"], entry["category"])
    return built, TreeUpdate(added=tuple(s.name for s in skills))


@dataclass
class _Node:
    skills: list[int] = field(default_factory=list)  # indexes of the skills directly here
    children: list[_Node] = field(default_factory=list)
    name: str = ""
    description: str = ""


def manifest_name(name: str) -> str:
    """A name made valid for a manifest: lowercase, ``-``/spaces to ``_``."""
    cleaned = re.sub(r"[^a-z0-9_.]+", "_", name.strip().lower()).strip("._")
    cleaned = re.sub(r"\.{2,}", ".", cleaned)
    if not NAME_RE.fullmatch(cleaned or "-"):
        raise UserError(f"cannot make a skill name out of {name!r}")
    return cleaned


def build_tree(skills: list[FlatSkill], *, max_children: int = MAX_CHILDREN, embed: Any = None) -> dict[str, Any]:
    """A ``categories.json``-shaped tree holding every skill exactly once."""
    if max_children < 2:
        raise UserError("a category must be allowed at least 2 children")
    names = [manifest_name(s.name) for s in skills]
    dupes = sorted(n for n, c in Counter(names).items() if c > 1)
    if dupes:
        raise UserError(f"duplicate skill names: {', '.join(dupes[:5])}")
    if not skills:
        raise UserError("no skills to build a tree from")
    import numpy as np

    embed = embed or shared_embedder().embed
    vectors = np.asarray(embed([option_text(n, s.description) for n, s in zip(names, skills)]), dtype=np.float32)
    root = _split(list(range(len(skills))), vectors, max_children, top=True)
    _label(root, skills, vectors)
    categories: list[dict[str, Any]] = []
    manifests: list[dict[str, Any]] = []
    used: set[str] = set()

    def emit(node: _Node, parent: str) -> None:
        name = _unique(node.name or "skills", used)
        categories.append({"name": name, "description": node.description, **({"parent": parent} if parent else {})})
        for index in node.skills:
            skill = skills[index]
            manifests.append({"name": names[index], "category": name, "description": skill.description,
                              **({"examples": list(skill.examples)} if skill.examples else {})})
        for child in node.children:
            emit(child, name)

    for child in root.children:
        emit(child, "")
    return {"version": 1, "categories": categories, "skills": manifests}


def _split(indexes: list[int], vectors: Any, max_children: int, *, top: bool = False) -> _Node:
    """A node over ``indexes``: direct leaves if they fit, else clusters (each a category)."""
    if len(indexes) <= max_children and not top:
        return _Node(skills=list(indexes))
    if len(indexes) <= max_children:  # the top level holds only categories
        return _Node(children=[_Node(skills=list(indexes))])
    k = min(max_children, math.ceil(len(indexes) / max_children))
    k = max(k, 2)
    groups = _kmeans(vectors[indexes], k)
    node = _Node()
    for members in groups:
        chosen = [indexes[i] for i in members]
        if len(chosen) == 1 and not top:
            node.skills.append(chosen[0])
        else:
            node.children.append(_split(chosen, vectors, max_children))
    return node


def _kmeans(points: Any, k: int, iterations: int = 25) -> list[list[int]]:
    """Non-empty clusters of row indexes; never one cluster holding everything."""
    import numpy as np

    rng = np.random.default_rng(_SEED)
    n = len(points)
    centres = [points[rng.integers(n)]]
    for _ in range(1, k):  # k-means++ seeding on cosine distance
        distance = np.clip(1 - np.max(points @ np.stack(centres).T, axis=1), 0, None)
        total = distance.sum()
        pick = rng.choice(n, p=distance / total) if total > 0 else rng.integers(n)
        centres.append(points[pick])
    centres = np.stack(centres)
    labels = np.zeros(n, dtype=int)
    for _ in range(iterations):
        new = np.argmax(points @ centres.T, axis=1)
        if np.array_equal(new, labels) and _ > 0:
            break
        labels = new
        for c in range(k):
            members = points[labels == c]
            if len(members):
                mean = members.mean(axis=0)
                centres[c] = mean / (np.linalg.norm(mean) or 1.0)
    groups = [list(np.flatnonzero(labels == c)) for c in range(k)]
    groups = [g for g in groups if g]
    if len(groups) < 2:  # degenerate (identical texts): split evenly
        order = list(range(n))
        size = math.ceil(n / k)
        groups = [order[i : i + size] for i in range(0, n, size)]
    return groups


def _label(node: _Node, skills: list[FlatSkill], vectors: Any) -> None:
    """Name and describe every category under ``node`` from its skills' words."""
    kids = node.children
    if not kids:
        return
    bags = [Counter(t for i in _all_skills(kid) for t in set(terms(skills[i].description))) for kid in kids]
    df = Counter(t for bag in bags for t in bag)
    for kid, bag in zip(kids, bags):
        members = _all_skills(kid)
        scored = sorted(bag, key=lambda t: (-bag[t] * math.log(1 + len(kids) / df[t]), t))
        stems = [t for t in scored if len(t) > 2 and t not in _VAGUE][:3]
        words = [_surface(t, members, skills) for t in stems] or ["skills"]
        centre = vectors[members].mean(axis=0)
        central = sorted(members, key=lambda i: -float(vectors[i] @ centre))[:2]
        examples = "; ".join(_clip(skills[i].description, 90) for i in central)
        kid.name = "_".join(words)
        kid.description = f"{len(members)} skills about {', '.join(words)}, e.g. {examples}"
        _label(kid, skills, vectors)


def _surface(stem: str, members: list[int], skills: list[FlatSkill]) -> str:
    """The word the skills actually use for ``stem`` (``creat`` -> ``creating``)."""
    seen = Counter(w for i in members for w in re.findall(r"[a-z0-9]+", skills[i].description.lower())
                   if terms(w) == [stem])
    return seen.most_common(1)[0][0] if seen else stem


def _clip(text: str, limit: int) -> str:
    text = " ".join(text.split())
    return text if len(text) <= limit else text[: limit - 1].rsplit(" ", 1)[0] + "…"


def _all_skills(node: _Node) -> list[int]:
    out = list(node.skills)
    for child in node.children:
        out.extend(_all_skills(child))
    return out


def _unique(name: str, used: set[str]) -> str:
    base = re.sub(r"[^a-z0-9_]+", "_", name.lower()).strip("_") or "skills"
    candidate, n = base, 2
    while candidate in used:
        candidate, n = f"{base}_{n}", n + 1
    used.add(candidate)
    return candidate


def load_flat_skills(path: Any) -> list[FlatSkill]:
    """Skills from a tree file (``{"skills": [...]}``), JSON lines of skills, or a folder of SKILL.md skills."""
    import json
    from pathlib import Path

    path = Path(path)
    if path.is_dir():
        from ..catalog import SkillRegistry

        registry = SkillRegistry()
        roots = sorted({p.parent.parent for p in path.rglob("SKILL.md")}) or [path]
        for root in roots:  # a folder of skills, or a folder of such folders
            registry.scan_custom(root)
        return [FlatSkill(d.name, d.description) for d in registry.list_all()]
    try:
        text = path.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as exc:
        raise UserError(f"{path}: cannot read ({exc})") from exc
    try:
        data = json.loads(text)
        entries = data.get("skills", [data]) if isinstance(data, dict) else data
    except json.JSONDecodeError:
        try:
            entries = [json.loads(line) for line in text.splitlines() if line.strip()]
        except json.JSONDecodeError as exc:
            raise UserError(f"{path}: neither a JSON tree file nor JSON lines ({exc.msg})") from exc
    skills = []
    for number, entry in enumerate(entries, start=1):
        if not isinstance(entry, dict) or not isinstance(entry.get("name"), str) or not isinstance(entry.get("description"), str):
            raise UserError(f"{path}: skill {number} needs a string 'name' and 'description'")
        skills.append(FlatSkill(entry["name"], entry["description"], tuple(entry.get("examples", ()))))
    return skills
