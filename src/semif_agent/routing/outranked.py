"""A person's label outranks a skill's own examples: an example that says otherwise of (nearly) the same request
is what is wrong.

A skill's examples are its author's word, and anyone can write a SKILL.md: a skill dropped into ``skills/`` may
copy another skill's phrasings and add many like them. Where one of its examples says a request goes elsewhere
than a person's label of the same or nearly the same request (:func:`nearly_same`: most of their words shared),
``semif train`` takes the label's word: the example is left out of the fit, neither a fix nor a break when the
new router is weighed (:mod:`.switching`), never blamed on the label, and reported as what is wrong, naming the
skill whose example it is (:class:`Contradiction`).
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from .training import TrainingExample

NEAR = 0.6  # the share of their words (of the words either has) two requests share at least to be nearly the same
EXAMPLES = "examples"  # the source of a skill's own examples (and the tree's none examples)
LABEL = "label"  # the source of a person's label


def words(text: str) -> frozenset[str]:
    """The words of ``text``, case and punctuation aside."""
    return frozenset(re.findall(r"\w+", text.casefold()))


def nearly_same(one: frozenset[str], other: frozenset[str]) -> bool:
    """Whether two requests' :func:`words` make them the same or nearly the same request (:data:`NEAR`)."""
    return bool(one and other) and len(one & other) >= NEAR * len(one | other)


@dataclass(frozen=True)
class Contradiction:
    """An example of ``skill`` (``None``: a ``none`` example) that a person's label of a (nearly) same request
    contradicts: the label says ``label_skill`` (``None``: no skill fits)."""

    example: str
    skill: str | None
    label_text: str
    label_skill: str | None
    run_id: str

    def sentence(self) -> str:
        whose = f"skill {self.skill}'s example" if self.skill is not None else "the none example"
        said = f"--skill {self.label_skill}" if self.label_skill is not None else "--none"
        return (
            f"{whose} {self.example!r} is what is wrong: the label on run {self.run_id} ({self.label_text!r} {said}) "
            "outranks it, and it was left out"
            + (f" (edit or remove it in skill {self.skill})" if self.skill is not None else "")
        )

    def to_dict(self) -> dict[str, object]:
        return {
            "example": self.example,
            "skill": self.skill,
            "label_text": self.label_text,
            "label_skill": self.label_skill,
            "run_id": self.run_id,
            "says": self.sentence(),
        }


def contradicted_examples(rows: Sequence[TrainingExample]) -> dict[str, Contradiction]:
    """The examples among ``rows`` that a person's label among them contradicts, by the example's text: a label
    (the latest of its request) of the same or nearly the same request that names another skill, or ``none``."""
    latest: dict[frozenset[str], TrainingExample] = {}
    for row in rows:
        if row.source == LABEL and row.wrong is None and row.client is None and row.run_id:
            key = words(row.text)
            latest.pop(key, None)
            latest[key] = row
    found: dict[str, Contradiction] = {}
    if not latest:
        return found
    for row in rows:
        if row.source != EXAMPLES or row.wrong is not None or row.text in found:
            continue
        mine = words(row.text)
        for theirs, label in latest.items():
            if label.skill != row.skill and nearly_same(mine, theirs):
                found[row.text] = Contradiction(row.text, row.skill, label.text, label.skill, label.run_id or "")
                break
    return found
