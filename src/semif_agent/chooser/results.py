"""What the chooser hands back: a shortlist of skills, a skill loaded, a skill run. Plain data, JSON-ready."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field

from .._json import JsonObject
from ..engine.decisions import NONE_ID
from ..loop.gate import Verdict


@dataclass(frozen=True)
class Candidate:
    """One skill of a shortlist: its probability of being the request's skill, and its description in one line.

    ``copies`` are the same skill shipped elsewhere (the same name and description in another collection), shown
    once as this one; ``locations`` the folders of this SKILL.md skill and of its copies, its own first."""

    name: str
    probability: float
    description: str
    kind: str  # "code" or "skill_md"
    copies: tuple[str, ...] = ()
    locations: tuple[str, ...] = ()

    def to_dict(self) -> JsonObject:
        shown: JsonObject = {
            "name": self.name,
            "probability": round(self.probability, 4),
            "description": self.description,
            "kind": self.kind,
        }
        if self.copies:
            shown.update(copies=list(self.copies), locations=list(self.locations))
        return shown


@dataclass(frozen=True)
class Shortlist:
    """The skills ``find`` ranked for ``request``, best first, under the choice id its decision row was logged with.

    ``none`` is the probability that no skill fits. :attr:`best` is what a run
    of the request would do (``verdict``, the runner's one decision: the skill
    its route ends at once the act gate read it, ``"none"`` when it ends at
    none), with whether that skill would act and why; without a verdict, the
    first skill unless ``none`` beats it. A skill shipped several times is
    named as the copy it is shown as (``shown_as`` maps each other copy to it).
    """

    choice_id: str
    request: str
    skills: tuple[Candidate, ...]
    none: float
    verdict: Verdict | None = None
    shown_as: Mapping[str, str] = field(default_factory=dict)

    @property
    def best(self) -> str:
        if self.verdict is not None:
            skill = self.verdict.skill
            return self.shown_as.get(skill, skill) if skill else NONE_ID
        if not self.skills or self.none >= self.skills[0].probability:
            return NONE_ID
        return self.skills[0].name

    def to_dict(self) -> JsonObject:
        shown: JsonObject = {"choice_id": self.choice_id, "best": self.best}
        if self.verdict is not None:
            shown.update(acts=self.verdict.acts, handed_back=self.verdict.handed_back, reason=self.verdict.reason)
        return {**shown, "skills": [c.to_dict() for c in self.skills], "none": round(self.none, 4)}


@dataclass(frozen=True)
class LoadedSkill:
    """A skill to follow: a SKILL.md skill's instructions and the files beside it, or a code skill's manifest."""

    name: str
    kind: str
    description: str
    instructions: str | None = None  # a SKILL.md skill's body
    files: tuple[str, ...] = ()  # a SKILL.md skill's other files, relative to its folder (read_file reads them)
    manifest: JsonObject | None = None  # a code skill's manifest entry

    def to_dict(self) -> JsonObject:
        shown: JsonObject = {"name": self.name, "kind": self.kind, "description": self.description}
        if self.instructions is not None:
            shown["instructions"] = self.instructions
            shown["files"] = list(self.files)
        if self.manifest is not None:
            shown["manifest"] = self.manifest
        return shown


@dataclass(frozen=True)
class RunOutcome:
    """What running a skill did: the run id it was logged under, its result, the files it changed."""

    run_id: str
    skill: str | None
    outcome: str  # the assessment: success, failure, unclear, handed_back
    result: str  # what the skill said it did
    state: str  # the state it left (its answer, for a skill that looks something up)
    changes: dict[str, list[str]] = field(default_factory=dict)
    instructions: str | None = None  # a SKILL.md skill's instructions, when they were handed back to follow
    error: str | None = None
    handed_back: bool = False  # nothing acted: the act gate held the request back (as ``semif run --json`` says it)
    reason: str | None = None  # why the gate let it act or held it back

    def to_dict(self) -> JsonObject:
        shown: JsonObject = {
            "run_id": self.run_id,
            "skill": self.skill,
            "handed_back": self.handed_back,
            "reason": self.reason,
            "outcome": self.outcome,
            "result": self.result,
            "state": self.state,
            "changes": self.changes,
        }
        if self.instructions is not None:
            shown["instructions"] = self.instructions
        if self.error is not None:
            shown["error"] = self.error
        return shown
