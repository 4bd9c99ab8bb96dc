"""``semif label`` and what ``semif log`` shows of labels: who labelled which run, and how."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from click.testing import CliRunner

from semif_agent.cli import main

from ..conftest import SEED_BODY


def invoke(*args: str) -> tuple[int, str, str]:
    result = CliRunner().invoke(main, list(args))
    return result.exit_code, result.stdout, result.stderr


@pytest.fixture
def logged(make_workspace, tmp_path: Path) -> tuple[Path, str, str]:
    """A workspace with two runs logged: (root, the emailing run's id, the handed-back run's id)."""
    root = make_workspace({"email.compose": SEED_BODY, "notes.add": None})
    emailing = tmp_path / "email.json"
    emailing.write_text(json.dumps(["email", "email.compose", "Alice", "success"]))
    nothing = tmp_path / "none.json"
    nothing.write_text(json.dumps(["none"]))
    ids = []
    for text, script in (("Email Alice about lunch", emailing), ("note that lunch moved", nothing)):
        code, out, err = invoke("run", text, "-w", str(root), "--engine", f"scripted:{script}", "--json")
        assert code == 0, err
        ids.append(json.loads(out)["decisions"][0]["run_id"])
    return root, ids[0], ids[1]


def log_lines(root: Path, *args: str) -> list[str]:
    code, out, err = invoke("log", "-w", str(root), *args)
    assert code == 0, err
    return out.splitlines()


def test_a_label_shows_in_the_log_with_who_gave_it(logged) -> None:
    root, emailed, handed_back = logged
    code, out, err = invoke(
        "label", handed_back[:-2], "--skill", "notes.add", "--outcome", "failure", "--by", "alice", "-w", str(root)
    )
    assert code == 0, err
    assert out.strip() == (
        f'{handed_back}  "note that lunch moved"  -> none  [failure, labelled by alice: should be notes.add]'
    )
    lines = log_lines(root, "--decisions")
    assert [line.endswith("[scripted; success (engine)]") for line in lines] == [True] * 4 + [False]
    assert lines[-1].startswith(handed_back) and lines[-1].endswith(
        "[scripted; failure, labelled by alice: should be notes.add]"
    )
    assert [line.split()[0] for line in log_lines(root, "--decisions", "--labelled")] == [handed_back]
    assert {line.split()[0] for line in log_lines(root, "--decisions", "--unlabelled")} == {emailed}
    assert {line.split()[0] for line in log_lines(root, "--decisions", "--outcome", "failure")} == {handed_back}
    rows = [json.loads(line) for line in log_lines(root, "--decisions", "--json")]
    assert [r.get("label") for r in rows] == [None] * 4 + [{"skill": "notes.add", "outcome": "failure", "by": "alice"}]
    assert rows[-1]["outcome"] == "unclear"  # the engine's judgement stays beside the person's


def test_runs_view_lists_one_line_per_run_and_the_latest_label_wins_field_by_field(logged) -> None:
    root, emailed, handed_back = logged
    assert log_lines(root, "--runs") == [
        f'{emailed}  "Email Alice about lunch"  -> email.compose  [success (engine)]',
        f'{handed_back}  "note that lunch moved"  -> none  [unclear (engine)]',
    ]
    invoke("label", emailed, "--none", "--by", "alice", "-w", str(root))
    invoke("label", emailed, "--outcome", "failure", "--by", "bob", "--note", "Alice was out", "-w", str(root))
    assert log_lines(root, "--runs", "--labelled") == [
        f'{emailed}  "Email Alice about lunch"  -> email.compose  '
        "[failure, labelled by bob: no skill fits]  (Alice was out)"
    ]
    [record] = [json.loads(line) for line in log_lines(root, "--runs", "--json", "--labelled")]
    assert {
        k: record[k] for k in ("label_skill", "label_has_skill", "label_outcome", "labelled_by", "true_outcome")
    } == {
        "label_skill": None,
        "label_has_skill": True,
        "label_outcome": "failure",
        "labelled_by": "bob",
        "true_outcome": "failure",
    }
    assert [line.split()[0] for line in log_lines(root, "--runs", "--unlabelled")] == [handed_back]
    assert [line.split()[0] for line in log_lines(root, "--runs", "--run", handed_back[:-3])] == [handed_back]


def test_the_label_is_given_by_the_login_name_unless_told(logged, monkeypatch: pytest.MonkeyPatch) -> None:
    root, emailed, _ = logged
    monkeypatch.setenv("LOGNAME", "carol")
    code, out, err = invoke("label", emailed, "--outcome", "success", "-w", str(root), "--json")
    assert code == 0, err
    row = json.loads(out)
    assert (row["by"], row["kind"], row["source"], row["run_id"], row["outcome"]) == (
        "carol",
        "label",
        "person",
        emailed,
        "success",
    )
    assert json.loads((root / "data" / "decisions.jsonl").read_text().splitlines()[-1]) == row


def test_mistakes_are_one_line_exit_1_and_write_nothing(logged) -> None:
    root, emailed, handed_back = logged
    before = (root / "data" / "decisions.jsonl").read_bytes()
    common = emailed[:8]  # both runs were logged the same day
    cases = [
        (("label", "20000101-000000-000000", "--none"), "no run '20000101-000000-000000' in the decision log"),
        (
            ("label", common, "--none"),
            f"run id '{common}' is ambiguous: 2 runs start with it ({emailed}, {handed_back})",
        ),
        (
            ("label", emailed, "--skill", "email.compse"),
            "no skill named 'email.compse' in this workspace's tree; did you mean email.compose?",
        ),
        (("label", emailed, "--skill", "notes.add", "--none"), "give --skill NAME or --none, not both"),
        (("label", emailed), "say what the label is"),
        (("log", "--run", "nope"), "no run 'nope'"),
    ]
    for args, message in cases:
        code, out, err = invoke(*args, "-w", str(root))
        assert code == 1, (args, out, err)
        assert message in err and "Traceback" not in err, err
        assert len(err.strip().splitlines()) == 1, err
    assert (root / "data" / "decisions.jsonl").read_bytes() == before


def test_a_labelled_run_can_still_be_replayed(logged) -> None:
    from semif_agent.engine import ScriptedEngine

    root, emailed, handed_back = logged
    invoke("label", emailed, "--outcome", "failure", "-w", str(root))
    invoke("label", handed_back, "--none", "-w", str(root))  # a label naming a skill would route the request there
    log = root / "data" / "decisions.jsonl"
    code, out, err = invoke(
        "run", "note that lunch moved", "-w", str(root), "--engine", f"scripted:{log}", "--json", "--no-log"
    )
    assert code == 0, err  # the log ends with a label: the replay takes the last run's decisions, not the label
    assert [d["selected"] for d in json.loads(out)["decisions"]] == ["none"]
    replay = ScriptedEngine.replay(log, run_id=emailed)
    assert (replay.remaining, replay.model) == (4, f"replay:{emailed}")


def test_a_label_names_a_skill_md_skill_as_its_skill_md_writes_it(logged) -> None:
    root, emailing, _ = logged
    for folder, name in (("a-deploy", "Deploy Prod"), ("deploy-prod", "deploy-prod")):
        (root / "skills" / folder).mkdir(parents=True)
        text = f"---\nname: {name}\ndescription: Deploy the build to production.\n---\nShip it.\n"
        (root / "skills" / folder / "SKILL.md").write_text(text, encoding="utf-8")
    code, out, err = invoke("label", emailing, "--skill", "Deploy Prod", "-w", str(root), "--json")
    assert code == 0, err
    written = json.loads(out)["skill"]
    assert written != "deploy-prod" and written.startswith("deploy-prod")  # the other skill's id, not the exact one
    code, out, err = invoke("label", emailing, "--skill", "deploy-prod", "-w", str(root), "--json")
    assert code == 0 and json.loads(out)["skill"] == "deploy-prod"


def test_label_undo_and_unlabel_take_a_runs_labels_back(logged) -> None:
    root, emailing, _ = logged
    assert invoke("label", emailing, "--none", "-w", str(root))[0] == 0
    code, out, err = invoke("label", emailing, "--undo", "-w", str(root), "--json")
    assert code == 0, err
    assert {k: json.loads(out)[k] for k in ("run_id", "kind")} == {"run_id": emailing, "kind": "unlabel"}
    code, out, err = invoke("log", "-w", str(root), "--labelled", "--json")
    assert code == 0 and out.strip() == "", "the run is unlabelled again"

    code, out, err = invoke("unlabel", emailing, "-w", str(root))
    assert code == 1 and err.strip() == f"Error: run {emailing} has no label to take back"
    code, out, err = invoke("label", "nope", "--undo", "-w", str(root))
    assert code == 1 and len(err.strip().splitlines()) == 1 and "no run 'nope'" in err
    code, out, err = invoke("label", emailing, "--undo", "--none", "-w", str(root))
    assert code == 1 and "--undo takes the run's labels back" in err

    assert invoke("label", emailing, "--skill", "notes.add", "-w", str(root))[0] == 0
    code, out, err = invoke("unlabel", emailing, "-w", str(root))
    assert code == 0, err
    assert "labels taken back" in out
    assert invoke("log", "-w", str(root), "--labelled", "--json")[1].strip() == ""
