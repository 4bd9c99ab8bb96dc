"""What the encoder is tuned on: pairs of a request and a text of its skill, from the workspace's own evidence.

Every request whose skill is known (a skill's examples and learned examples, datasets, a person's labels, runs
judged a success, clients' picks) is paired with its skill's text as the router embeds it (the words of its name
and its description, :func:`~semif_agent.engine.local.leaf_text`), and, where its skill has other requests, with
one of them (so requests of one skill come together, not only towards its description). A skill the router in use
confused with the right one (:func:`confusions`) is the pair's hard negative. A pair weighs what its row weighs
in training (a person's label four times an example); clients' rows are counted once per request and capped as in
training (each client at most 5% of the workspace's own evidence, all of them 25%). Requests no skill serves and
failures (the right skill unknown) pair with nothing.
"""

from __future__ import annotations

import random
from collections import defaultdict
from collections.abc import Collection, Mapping, Sequence
from typing import TYPE_CHECKING

from ...engine.local import leaf_text
from ..training import TrainingExample, once_per_request
from .tuning import Pair

if TYPE_CHECKING:
    from ...tree.tree import SkillTree
    from ..strategies import RoutingStrategy

CONFUSED_KEPT = 3
"""At most this many skills confused with one skill are kept as its hard negatives (the most frequent)."""


def skill_text(tree: SkillTree, skill: str) -> str:
    """A skill's text as the router embeds it."""
    leaf = tree.skills[skill]
    return leaf_text(leaf.name, leaf.description)


def training_pairs(
    tree: SkillTree,
    rows: Sequence[TrainingExample],
    *,
    confusions: Mapping[str, Sequence[str]] | None = None,
    seed: int = 0,
    learned: bool = True,
    set_aside: Collection[str] = (),
) -> list[Pair]:
    """The pairs to tune on from ``rows`` (and, with ``learned``, the learned examples of ``tree``'s skills, as
    examples, but those whose text is one of the held-out requests ``set_aside``)."""
    import numpy as np

    from .._fitting import client_capped

    draw = random.Random(seed)
    extra = _learned_examples(tree, rows) if learned else []
    aside = set(set_aside)
    rows = once_per_request(list(rows) + [row for row in extra if row.text not in aside])
    kept = [row for row in rows if row.skill is not None and row.wrong is None and row.skill in tree.skills]
    clients = sorted({row.client for row in kept if row.client is not None})
    numbers = np.array([-1 if row.client is None else clients.index(row.client) for row in kept])
    weights = client_capped(np.array([row.weight for row in kept], dtype=float), numbers, list(tree.skills))
    by_skill: dict[str, list[str]] = defaultdict(list)
    for row in kept:
        by_skill[row.skill or ""].append(row.text)
    confusions = confusions or {}
    pairs = []
    for row, weight in zip(kept, weights):
        skill = row.skill or ""
        negatives = [name for name in confusions.get(skill, ()) if name != skill and name in tree.skills]
        negative = skill_text(tree, draw.choice(negatives)) if negatives else None
        pairs.append(Pair(row.text, skill_text(tree, skill), negative, float(weight), skill))
        others = [text for text in by_skill[skill] if text != row.text]
        if others:
            pairs.append(Pair(row.text, draw.choice(others), negative, float(weight), skill))
    return pairs


def _learned_examples(tree: SkillTree, rows: Sequence[TrainingExample]) -> list[TrainingExample]:
    """The learned examples of ``tree``'s skills that ``rows`` do not already hold, as examples."""
    known = {row.text for row in rows}
    return [
        TrainingExample(text, leaf.name, "examples")
        for leaf in tree.skills.values()
        for text in leaf.examples
        if text not in leaf.own_examples and text not in known and text.strip()
    ]


def confusions(strategy: RoutingStrategy, rows: Sequence[TrainingExample]) -> dict[str, list[str]]:
    """For each skill, the skills ``strategy`` routed its requests to instead (at most :data:`CONFUSED_KEPT`, the
    most frequent first): the hard negatives the encoder learns to push away."""
    from ..switching import routed_skills

    known = [row for row in rows if row.skill is not None and row.wrong is None]
    routed = routed_skills(strategy, [row.text for row in known])
    counted: dict[str, dict[str, int]] = defaultdict(lambda: defaultdict(int))
    for row, went in zip(known, routed):
        if went is not None and went != row.skill:
            counted[row.skill or ""][went] += 1
    return {
        skill: [name for name, _ in sorted(wrong.items(), key=lambda item: -item[1])[:CONFUSED_KEPT]]
        for skill, wrong in counted.items()
    }
