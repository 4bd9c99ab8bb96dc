"""Manifests that fill in: a stub needs a name and a description; labelled runs become learned examples."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from semif_agent.loop.learned_examples import MAX_LEARNED, Lesson, learn, lesson_of
from semif_agent.records import DecisionLog
from semif_agent.workspace import Workspace

from ..conftest import SEED_BODY
from .conftest import Semif

GRACE = "Email Grace that I accept the offer"


def manifest(root: Path, name: str) -> dict:
    data = json.loads((root / "data" / "categories.json").read_text(encoding="utf-8"))
    return next(entry for entry in data["skills"] if entry["name"] == name)


def json_of(semif: Semif, *args: str) -> object:
    done = semif(*args, "--json")
    assert done.returncode == 0, done.stderr
    return json.loads(done.stdout)


@pytest.mark.slow
def test_trained_on_runs_are_learned_and_shown(semif: Semif, tmp_path: Path) -> None:
    # The README's first hour: a fresh starter, one run, one label, one training.
    root = tmp_path / "ws"
    assert semif("init", str(root)).returncode == 0
    categories = root / "data" / "categories.json"
    data = json.loads(categories.read_text(encoding="utf-8"))
    person = manifest(root, "email.compose")["examples"]
    data["skills"].append({"name": "email.archive", "description": "Archive a message"})  # a stub: two fields
    categories.write_text(json.dumps(data), encoding="utf-8")
    stub = json_of(semif, "skills", "show", "email.archive", "-w", str(root))
    assert (stub["category"], stub["stub"], stub["runs"], stub["learned_examples"]) == ("email", True, 0, [])

    ran = json_of(semif, "run", GRACE, "-w", str(root))
    labelled = semif("label", ran["run_id"], "--skill", "email.compose", "-w", str(root))
    assert labelled.returncode == 0, labelled.stderr
    shown = json_of(semif, "skills", "show", "email.compose", "-w", str(root))
    assert shown["learned_examples"] == [], "nothing is learned before a training"
    assert shown["decision_log_ref"] == "data/decisions.jsonl?skill=email.compose"
    assert shown["runs"] == 1

    trained = semif("train", "-w", str(root))
    assert trained.returncode == 0, trained.stderr
    assert trained.stdout.splitlines()[-1] == "learned examples: 1 added, 0 removed", "after the report it sums up"
    entry = manifest(root, "email.compose")
    assert entry["examples"] == person, "a person's examples are never touched"
    assert entry["learned_examples"] == [{"text": GRACE, "run": ran["run_id"], "by": "label"}]
    assert entry["decision_log_ref"] == "data/decisions.jsonl?skill=email.compose"
    shown = json_of(semif, "skills", "show", "email.compose", "-w", str(root))
    assert shown["examples"] == person and shown["learned_examples"] == [GRACE]
    text = semif("skills", "show", "email.compose", "-w", str(root)).stdout
    assert re.search(rf"^learned_examples +{GRACE}$", text, re.M)

    ref_skill = entry["decision_log_ref"].split("?skill=")[1]
    runs = semif("log", "--skill", ref_skill, "-w", str(root), "--json").stdout.splitlines()
    assert [json.loads(line)["run_id"] for line in runs] == [ran["run_id"]]
    assert semif("log", "--skill", "notes.add", "-w", str(root), "--json").stdout.strip() == ""


@pytest.mark.slow
def test_a_label_the_switched_to_router_did_not_learn_is_no_learned_example(semif: Semif, tmp_path: Path) -> None:
    """A new user's label the trained router listed as "not learned" was still written as a learned example of the
    skill: a learned example is what was learned, so it waits until a training learns it."""
    root = tmp_path / "ws"
    assert semif("init", str(root)).returncode == 0
    text = "Add milk to my shopping list"
    ran = json_of(semif, "run", text, "-w", str(root))
    assert semif("label", ran["run_id"], "--skill", "calendar.add_event", "-w", str(root)).returncode == 0
    trained = semif("train", "-w", str(root))
    assert trained.returncode == 0, trained.stderr
    assert f"not learned {text!r}: labelled calendar.add_event" in trained.stdout
    assert re.search(r"^switched from ", trained.stdout, re.M), "the label alone does not keep the router in use"
    assert "learned_examples" not in manifest(root, "calendar.add_event")
    assert trained.stdout.splitlines()[-1] == (
        "learned examples: 0 added, 0 removed; 1 labelled request left out, as the new router does not route them "
        "as labelled (not learned)"
    )
    json_of(semif, "label", ran["run_id"], "--skill", "todos.add", "-w", str(root))  # where the router sends it
    assert "learned examples: 1 added, 0 removed" in semif("train", "-w", str(root)).stdout
    assert manifest(root, "todos.add")["learned_examples"] == [{"text": text, "run": ran["run_id"], "by": "label"}]
    again = semif("train", "-w", str(root)).stdout  # nothing new: no route flips, and it still says what it decided
    assert re.search(r"^switched from the learned router trained \S+: 0 requests now right, 0 now wrong", again, re.M)


def test_learning_is_bounded_deduplicated_and_judged_runs_count_when_asked(make_workspace) -> None:
    root = make_workspace({"email.compose": SEED_BODY})
    ws = Workspace.load(root)
    data = json.loads(ws.categories_path.read_text(encoding="utf-8"))
    data["skills"][0]["examples"] = ["Email Bob"]
    ws.categories_path.write_text(json.dumps(data), encoding="utf-8")
    lessons = [Lesson(f"r{i}", f"Email contact number {i}", "email.compose", "judge") for i in range(MAX_LEARNED + 5)]
    lessons += [
        Lesson("again", "EMAIL CONTACT NUMBER 24", "email.compose", "label"),
        Lesson("x", "email bob", "email.compose", "label"),
    ]
    lessons += [Lesson("gone", "Book a flight", "travel.book", "label")]  # a skill the workspace does not list
    learn(ws, lessons)
    learned = manifest(root, "email.compose")["learned_examples"]
    assert len(learned) == MAX_LEARNED and learned[0]["run"] == "r5" and learned[-1]["run"] == "r24"
    assert manifest(root, "email.compose")["examples"] == ["Email Bob"]
    assert not learn(ws, [Lesson("r24", "Email contact number 24", "email.compose", "judge")]), "nothing changes"
    moved = learn(ws, [Lesson("r24", "Email contact number 24", None, "label")])  # a label said no skill fits
    assert moved.removed == [("email.compose", "Email contact number 24")] and not moved.added

    log = DecisionLog(ws.log_path)
    log.append(
        {"run_id": "judged", "kind": "outcome", "skill": "email.compose", "request": "Mail Ann", "outcome": "success"}
    )
    log.append(
        {"run_id": "failed", "kind": "outcome", "skill": "email.compose", "request": "Mail Al", "outcome": "failure"}
    )
    runs = {run.run_id: run for run in log.runs()}
    assert lesson_of(runs["judged"]) is None, "a judged run teaches only when asked (semif train)"
    assert lesson_of(runs["judged"], judged=True) == Lesson("judged", "Mail Ann", "email.compose", "judge")
    assert lesson_of(runs["failed"], judged=True) == Lesson("failed", "Mail Al", None, "judge")
