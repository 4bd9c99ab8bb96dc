"""`semif skills check|new|review` from the command line."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from click.testing import CliRunner

from semif_agent.cli import main
from semif_agent.llm import ScriptedProvider
from semif_agent.llm.testing import override_provider
from semif_agent.starter import create_workspace

from .test_generator import BAD, COUNT, fenced


def invoke(*args: str):
    return CliRunner().invoke(main, list(args))


@pytest.mark.slow
def test_every_starter_skill_passes_the_checker_and_its_gate(tmp_path: Path) -> None:
    root = create_workspace(tmp_path / "ws")
    tree = json.loads((root / "data" / "categories.json").read_text())
    for skill in tree["skills"]:
        result = invoke("skills", "check", skill["name"], "-w", str(root), "--json")
        report = json.loads(result.stdout)
        assert result.exit_code == 0 and report["ok"], (skill["name"], report)
        assert report["gate"]["ok"] and len(report["gate"]["results"]) >= 2


def test_check_a_file_reports_violations_with_lines_and_exits_1(tmp_path: Path) -> None:
    body = tmp_path / "skills" / "todos" / "count.py"
    body.parent.mkdir(parents=True)
    body.write_text(BAD[3])
    result = invoke("skills", "check", str(body))
    assert result.exit_code == 1
    assert f"{body}:3: [criterion 3] imports 'requests'" in result.stdout


def test_new_admits_a_skill_and_review_shows_it(tmp_path: Path) -> None:
    root = create_workspace(tmp_path / "ws")
    provider = ScriptedProvider([fenced(BAD[3]), fenced(COUNT)])
    with override_provider(provider):
        result = invoke(
            "skills",
            "new",
            "todos.count",
            "--description",
            "Count the to-do tasks, open or done.",
            "--budget",
            "1",
            "--code-model",
            "openai/some-model",
            "-w",
            str(root),
        )
    assert result.exit_code == 0, result.output
    assert "attempt 1: 1 violation\n" in result.stderr and "admitted todos.count after 2 attempts" in result.stdout
    rows = [json.loads(line) for line in (root / "data" / "decisions.jsonl").read_text().splitlines()]
    assert [(r["kind"], r["attempt"], r["admitted"]) for r in rows] == [("generate", 1, False), ("generate", 2, True)]
    review = invoke("skills", "review", "todos.count", "-w", str(root), "--json")
    data = json.loads(review.stdout)
    assert data["check"]["ok"] and "def act(ctx, request, prediction)" in data["body"]
    assert data["runs"] == {"success": 0, "failure": 0, "unclear": 0}


def test_new_that_never_passes_writes_nothing_and_says_so(tmp_path: Path) -> None:
    root = create_workspace(tmp_path / "ws")
    before = (root / "data" / "categories.json").read_bytes()
    with override_provider(ScriptedProvider([fenced(BAD[1])] * 2)):
        result = invoke(
            "skills",
            "new",
            "todos.count",
            "--description",
            "Count the tasks.",
            "--attempts",
            "2",
            "--code-model",
            "openai/m",
            "-w",
            str(root),
        )
    assert result.exit_code == 1
    assert "nothing was written" in result.stderr and "Traceback" not in result.stderr
    assert (root / "data" / "categories.json").read_bytes() == before
    assert not (root / "data" / "skills" / "todos" / "count.py").exists()


def test_review_regenerate_feeds_the_failed_runs_back(tmp_path: Path) -> None:
    from semif_agent.records import DecisionLog, OutcomeRow

    root = create_workspace(tmp_path / "ws")
    with override_provider(ScriptedProvider([fenced(COUNT)])):
        invoke(
            "skills",
            "new",
            "todos.count",
            "--description",
            "Count the to-do tasks, open or done.",
            "--budget",
            "1",
            "--code-model",
            "openai/m",
            "-w",
            str(root),
        )
    DecisionLog(root / "data" / "decisions.jsonl").append(
        OutcomeRow(
            run_id="r1",
            skill="todos.count",
            outcome="failure",
            request="count tasks due today",
            reason="judged by local",
            action_log="counted all tasks",
        )
    )
    provider = ScriptedProvider([fenced(COUNT.replace("to-do(s)", "task(s)"))])
    with override_provider(provider):
        result = invoke("skills", "review", "todos.count", "-w", str(root), "--regenerate", "--code-model", "openai/m")
    assert result.exit_code == 0, result.output
    assert "failure 1" in result.stdout and "regenerated todos.count after 1 attempt\n" in result.stdout
    prompt = provider.requests[0].messages[-1].content
    assert "count tasks due today" in prompt and "counted all tasks" in prompt
    assert "task(s)" in (root / "data" / "skills" / "todos" / "count.py").read_text()


def test_check_and_review_refuse_a_skill_md_skill_in_one_line(tmp_path: Path) -> None:
    root = create_workspace(tmp_path / "ws")
    skill_md = root / "skills" / "make-plan" / "SKILL.md"
    skill_md.parent.mkdir(parents=True)
    skill_md.write_text("---\nname: make-plan\ndescription: Write a short plan for a task.\n---\nList the steps.\n")
    for command in ("check", "review"):
        result = invoke("skills", command, "make-plan", "-w", str(root))
        assert isinstance(result.exception, SystemExit) and result.exit_code != 0, (command, result.exception)
        assert "make-plan is a SKILL.md skill: it has no Python body" in result.stderr, command


@pytest.mark.parametrize(
    ("escape", "fragment"),
    [
        ("    match predict:\n        case object(__globals__=g):\n            pass\n", "class pattern on __globals__"),
        ("    scope = {}['__globals__']\n", "names __globals__ in a string"),
        ("    import string\n    string.Formatter().get_field('0.' + '__globals__', [act], {})\n", ".Formatter"),
    ],
)
def test_the_known_escapes_fail_skills_check(tmp_path: Path, escape: str, fragment: str) -> None:
    body = tmp_path / "skills" / "todos" / "count.py"
    body.parent.mkdir(parents=True)
    body.write_text(
        COUNT.replace("def act(ctx, request, prediction):\n", "def act(ctx, request, prediction):\n" + escape)
    )
    assert escape in body.read_text()
    result = invoke("skills", "check", str(body))
    assert result.exit_code == 1 and fragment in result.stdout, result.stdout
