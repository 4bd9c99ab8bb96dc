"""Manifests that fill in: a stub needs a name and a description; labelled runs become learned examples."""

from __future__ import annotations

import json
import re
from pathlib import Path

from semif_agent.loop.learned_examples import MAX_LEARNED, Lesson, learn, lesson_of
from semif_agent.records import DecisionLog
from semif_agent.workspace import Workspace

from ..conftest import SEED_BODY
from .conftest import Semif


def manifest(root: Path, name: str) -> dict:
    data = json.loads((root / "data" / "categories.json").read_text(encoding="utf-8"))
    return next(entry for entry in data["skills"] if entry["name"] == name)


def json_of(semif: Semif, *args: str) -> object:
    done = semif(*args, "--json")
    assert done.returncode == 0, done.stderr
    return json.loads(done.stdout)


def test_a_labelled_success_is_learned_shown_and_taken_back(semif: Semif, make_workspace, tmp_path: Path) -> None:
    root = make_workspace({"email.compose": SEED_BODY, "notes.add": None})
    categories = root / "data" / "categories.json"
    data = json.loads(categories.read_text(encoding="utf-8"))
    data["skills"][0]["examples"] = ["Write to Bob about the budget"]
    data["skills"].append({"name": "email.archive", "description": "Archive a message"})  # a stub: two fields
    categories.write_text(json.dumps(data), encoding="utf-8")
    script = tmp_path / "email.json"
    script.write_text(json.dumps(["email", "email.compose", "Alice", "success"]))
    ran = json_of(semif, "run", "Email Alice about lunch", "-w", str(root), "--engine", f"scripted:{script}")
    run_id = ran["run_id"]
    assert ran["assessment"]["label"] == "success"

    stub = json_of(semif, "skills", "show", "email.archive", "-w", str(root))
    assert (stub["category"], stub["stub"], stub["runs"]) == ("email", True, 0)
    shown = json_of(semif, "skills", "show", "email.compose", "-w", str(root))
    assert shown["learned_examples"] == [], "a run alone teaches nothing until it is labelled or trained on"
    assert shown["decision_log_ref"] == "data/decisions.jsonl?skill=email.compose"
    assert shown["runs"] == 1

    labelled = semif("label", run_id[:-2], "--outcome", "success", "--by", "alice", "-w", str(root))
    assert labelled.returncode == 0, labelled.stderr
    assert "learned examples: 1 added, 0 removed" in labelled.stderr
    entry = manifest(root, "email.compose")
    assert entry["examples"] == ["Write to Bob about the budget"], "a person's examples are never touched"
    assert entry["learned_examples"] == [{"text": "Email Alice about lunch", "run": run_id, "by": "label"}]
    assert entry["decision_log_ref"] == "data/decisions.jsonl?skill=email.compose"
    shown = json_of(semif, "skills", "show", "email.compose", "-w", str(root))
    assert shown["examples"] == ["Write to Bob about the budget"]
    assert shown["learned_examples"] == ["Email Alice about lunch"]
    text = semif("skills", "show", "email.compose", "-w", str(root)).stdout
    assert re.search(r"^learned_examples +Email Alice about lunch$", text, re.M)

    ref_skill = entry["decision_log_ref"].split("?skill=")[1]
    runs = semif("log", "--skill", ref_skill, "-w", str(root), "--json").stdout.splitlines()
    assert [json.loads(line)["run_id"] for line in runs] == [run_id]
    assert semif("log", "--skill", "notes.add", "-w", str(root), "--json").stdout.strip() == ""

    moved = semif("label", run_id, "--skill", "notes.add", "-w", str(root))
    assert moved.returncode == 0, moved.stderr
    assert manifest(root, "email.compose")["learned_examples"] == []
    assert [e["text"] for e in manifest(root, "notes.add")["learned_examples"]] == ["Email Alice about lunch"]
    semif("label", run_id, "--none", "-w", str(root))
    assert manifest(root, "notes.add")["learned_examples"] == []


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
