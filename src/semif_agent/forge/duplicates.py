"""Criterion 5: a new skill must not duplicate a leaf of its category.

The new description is compared with every leaf of the category on the
embedded model (BM25 when it is not installed). Below ``ask_at`` the skill is
new; at ``refuse_at`` or above it is a duplicate; in between, a model engine
is asked a SemIf "same or different action?" decision. (A similarity engine,
local or lexical, would only compare the same two texts again, so for those
the similarity alone decides.) A refusal names the nearest leaf.
"""

from __future__ import annotations

from dataclasses import dataclass

from .._json import JsonObject
from ..contract import Violation
from ..engine.base import Engine
from ..engine.decisions import DecisionRequest, Option
from ..engine.lexical import LexicalEngine
from ..engine.local import option_text
from ..engine.registry import local_available
from ..tree.tree import SkillTree

ASK_AT = 0.70
REFUSE_AT = 0.80
SAME_QUESTION = "Do these two skills perform the same action?"


@dataclass(frozen=True)
class Nearest:
    name: str
    similarity: float
    verdict: str  # "new" | "same" | "different"

    def to_dict(self) -> JsonObject:
        return {"name": self.name, "similarity": round(self.similarity, 4), "verdict": self.verdict}


def similarities(description: str, leaves: list[tuple[str, str]]) -> dict[str, float]:
    """Similarity of ``description`` to each ``(name, description)`` leaf."""
    if not leaves:
        return {}
    if local_available():
        from ..engine.local import shared_embedder

        vectors = shared_embedder().embed([description] + [option_text(n, d) for n, d in leaves])
        return {name: float(v @ vectors[0]) for (name, _), v in zip(leaves, vectors[1:])}
    return LexicalEngine().score(description, [Option(n, d) for n, d in leaves])


def nearest_leaf(
    name: str,
    description: str,
    category: str,
    tree: SkillTree,
    engine: Engine | None = None,
    *,
    ask_at: float = ASK_AT,
    refuse_at: float = REFUSE_AT,
) -> Nearest | None:
    """The closest existing leaf of ``category`` and whether the new skill duplicates it."""
    leaves = [(s.name, s.description) for s in tree.children(category) if s.name != name]
    scores = similarities(option_text(name, description), leaves)
    if not scores:
        return None
    closest = max(scores, key=scores.__getitem__)
    similarity = scores[closest]
    if similarity >= refuse_at:
        return Nearest(closest, similarity, "same")
    if similarity < ask_at or engine is None or callable(getattr(engine, "score", None)):
        return Nearest(closest, similarity, "new")
    existing = tree.skills[closest].description
    decision = DecisionRequest(
        state=f"Existing skill {closest}: {existing}\nProposed skill {name}: {description}",
        question=SAME_QUESTION,
        options=[
            Option("same", f"The same action as {closest}: {existing}"),
            Option("different", "A different action, not covered by the existing skill."),
        ],
    )
    return Nearest(closest, similarity, engine.call(decision).selected)


def duplicate_violation(found: Nearest | None) -> Violation | None:
    if found is None or found.verdict != "same":
        return None
    return Violation(
        5,
        1,
        f"duplicates the existing leaf {found.name} (similarity {found.similarity:.2f}); "
        "extend that skill or describe a different action",
    )
