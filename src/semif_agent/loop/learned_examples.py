"""Manifests that fill in: the requests a skill served become its ``learned_examples`` in ``categories.json``.

A run teaches (:func:`lesson_of`):

- a person's label naming a skill (``semif label RUN --skill NAME``): the
  request is an example of that skill; ``--none`` takes it from every skill;
- a person's label of the outcome: ``success`` makes the request an example
  of the skill the run chose; ``failure`` (or ``semif undo --reason route``) takes it back;
- with ``judged``, the assessment's own verdict on a run nobody labelled:
  ``success`` for the chosen skill, anything else takes it back.

The host writes them (never a skill body) when people ask the workspace to
learn: ``semif train``, once it switches to the router it fitted on the same
runs, applies every run of the log, judged ones included. Not after each run,
nor at ``semif label``: routing by examples would drift between two
``semif run`` (on the engine's own verdicts, before anyone could relabel a
wrong one), and a training would find the requests it is to learn already
learned. Once trained, routing is the learned router's, which does not read
examples: they are the record of what was learned, and what the untrained
routing uses again for skills the router has not seen.

A learned example records what was learned, so a request is written as one
only when the router ``semif train`` switched to routes it to that skill
(``routes``): a label the router did not learn (its ``not learned`` lines:
one label does not always outweigh a skill's examples) is no example of the
skill yet, and is taken from every skill's learned examples like a
``--none``, until a training learns it.

The write (:func:`learn`) rewrites ``categories.json`` in one step, under the
lock the forge admits skills under. Each learned example keeps its request's
``text``, its ``run`` and ``by`` (``"label"`` or ``"judge"``); a skill keeps
at most :data:`MAX_LEARNED` (the oldest go first), none that repeats one of
its examples (case aside), and a person's ``examples`` are never touched. A
skill that learns gets a ``decision_log_ref`` when it has none:
``LOG?skill=NAME``, the rows ``semif log --skill NAME`` lists.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from typing import Any

from .._files import replace_file
from .._text import plural
from ..contract.admitted import locked
from ..errors import ManifestError
from ..records.runs import RunRecord
from ..workspace import Workspace

MAX_LEARNED = 20
LEARNED = "learned_examples"


@dataclass(frozen=True)
class Lesson:
    """What one run teaches: its request is an example of ``skill`` (``None``: of no skill any more)."""

    run_id: str
    text: str
    skill: str | None
    by: str  # "label" | "judge"


@dataclass
class ExampleChanges:
    """What :func:`learn` changed: ``(skill, request)`` pairs added and removed."""

    added: list[tuple[str, str]] = field(default_factory=list)
    removed: list[tuple[str, str]] = field(default_factory=list)
    not_learned: list[tuple[str, str]] = field(default_factory=list)  # (skill, request) the router routes elsewhere

    def __bool__(self) -> bool:
        return bool(self.added or self.removed or self.not_learned)

    def summary(self) -> str:
        """``learned examples: 2 added, 1 removed`` and, when some were left out, how many and why."""
        said = f"learned examples: {len(self.added)} added, {len(self.removed)} removed"
        if self.not_learned:
            requests = len({text for _, text in self.not_learned})
            said += (
                f"; {plural(requests, 'labelled request')} left out, as the new router "
                "does not route them as labelled (not learned)"
            )
        return said


def lesson_of(run: RunRecord, *, judged: bool = False) -> Lesson | None:
    """What ``run`` teaches (see the module), or None when it teaches nothing."""
    text = (run.request or "").strip()
    if not text or run.source != "run":
        return None
    if run.label_has_skill:
        return Lesson(run.run_id, text, run.label_skill, "label")
    if run.label_outcome is not None:
        return Lesson(run.run_id, text, run.skill if run.label_outcome == "success" else None, "label")
    if judged and run.outcome is not None:
        return Lesson(run.run_id, text, run.skill if run.outcome == "success" else None, "judge")
    return None


def decision_log_ref(workspace: Workspace, skill: str) -> str:
    """Where ``skill``'s decision rows are: the log (relative to the workspace when inside it), ``?skill=NAME``."""
    log = workspace.log_path
    shown = log.relative_to(workspace.root) if log.is_relative_to(workspace.root) else log
    return f"{shown.as_posix()}?skill={skill}"


def learn(
    workspace: Workspace,
    lessons: Iterable[Lesson | None],
    routes: Callable[[list[str]], list[str | None]] | None = None,
) -> ExampleChanges:
    """Apply ``lessons`` to the workspace's ``categories.json`` (skills it does not list are left out). With
    ``routes`` (the skill the router routes each request to), a lesson whose request it routes to another skill
    teaches no example: its request is taken from every skill's learned examples instead."""
    taught = [lesson for lesson in lessons if lesson is not None]
    done = ExampleChanges()
    if routes is not None:
        taught = _as_routed(taught, routes, done)
    path = workspace.categories_path
    if not taught or not path.is_file():
        return done
    with locked(path):
        try:
            data = json.loads(path.read_text(encoding="utf-8"))
        except json.JSONDecodeError as exc:
            raise ManifestError(f"invalid JSON at line {exc.lineno}; fix it before learning", file=str(path)) from exc
        entries = _entries(data)
        for lesson in taught:
            _apply(workspace, entries, lesson, done)
        if done:
            replace_file(path, json.dumps(data, indent=2, ensure_ascii=False) + "\n")
    return done


def _as_routed(
    lessons: list[Lesson], routes: Callable[[list[str]], list[str | None]], done: ExampleChanges
) -> list[Lesson]:
    """``lessons``, those naming a skill ``routes`` does not send their request to made lessons of no skill."""
    asked = [lesson for lesson in lessons if lesson.skill is not None]
    routed = dict(zip((lesson.run_id for lesson in asked), routes([lesson.text for lesson in asked]), strict=True))
    kept = []
    for lesson in lessons:
        if lesson.skill is not None and routed[lesson.run_id] != lesson.skill:
            done.not_learned.append((lesson.skill, lesson.text))
            lesson = Lesson(lesson.run_id, lesson.text, None, lesson.by)
        kept.append(lesson)
    return kept


def _entries(data: Any) -> dict[str, dict[str, Any]]:
    """The skill entries whose learned examples can be written: a name, and a list (or nothing) learned."""
    skills = data.get("skills") if isinstance(data, dict) else None
    return {
        entry["name"]: entry
        for entry in (skills if isinstance(skills, list) else [])
        if isinstance(entry, dict)
        and isinstance(entry.get("name"), str)
        and isinstance(entry.get(LEARNED, []), list)
        and isinstance(entry.get("examples", []), list)
    }


def _apply(workspace: Workspace, entries: dict[str, dict[str, Any]], lesson: Lesson, done: ExampleChanges) -> None:
    target = entries.get(lesson.skill) if lesson.skill is not None else None
    for name, entry in entries.items():
        learned = entry.get(LEARNED, [])
        if entry is target and any(_run_of(item) == lesson.run_id for item in learned):
            continue  # learned there already
        kept = [item for item in learned if _run_of(item) != lesson.run_id]
        if len(kept) < len(learned):
            entry[LEARNED] = kept
            done.removed.append((name, lesson.text))
    if target is None or any(_run_of(item) == lesson.run_id for item in target.get(LEARNED, [])):
        return
    known = [e for e in target.get("examples", []) if isinstance(e, str)]
    known += [item.get("text", "") for item in target.get(LEARNED, []) if isinstance(item, dict)]
    if lesson.text.casefold() in {str(text).strip().casefold() for text in known}:
        return
    learned = [*target.get(LEARNED, []), {"text": lesson.text, "run": lesson.run_id, "by": lesson.by}]
    for item in learned[:-MAX_LEARNED]:
        done.removed.append((target["name"], str(item.get("text", "")) if isinstance(item, dict) else ""))
    target[LEARNED] = learned[-MAX_LEARNED:]
    done.added.append((target["name"], lesson.text))
    if not target.get("decision_log_ref"):
        target["decision_log_ref"] = decision_log_ref(workspace, target["name"])


def _run_of(item: Any) -> Any:
    return item.get("run") if isinstance(item, dict) else None
