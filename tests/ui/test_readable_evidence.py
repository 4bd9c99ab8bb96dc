"""What an assessment weighed, as people read it: `semif log show` and the run page say it in words, never as Python.

Real runs of every kind (acted, handed back by the gate, no skill, a failed
hand-back, an error, a SKILL.md script, a request led by a word that is no
verb) through the real SkillRunner, then read back through the CLI and a
started `semif ui`.
"""

from __future__ import annotations

import html
import re
from pathlib import Path

import pytest
from click.testing import CliRunner

from semif_agent.cli import main
from semif_agent.engine import create_engine
from semif_agent.loop.evidence_text import evidence_lines
from semif_agent.loop.runner import SkillRunner
from semif_agent.starter import create_workspace
from semif_agent.workspace import Workspace

from .conftest import start_ui, stop
from .test_server import fetch

RUNS = (
    ("Email Alice that the quarterly report is ready", None),  # acted
    ("Don't email Alice about the report", None),  # handed back by the gate
    ("Translate this poem into Klingon", None),  # no skill
    ("Add a meeting with David", "calendar.add_event"),  # the skill handed it back: a failure
    ("Make a note that the wifi password is hunter2", "notes.add"),  # an error: the body is broken
    ("greet Ada", "greeter"),  # a SKILL.md skill's script
    ("Dentist on Tuesday at 3pm", None),  # led by a word that is no verb
)
PYTHON = re.compile(r"\{'|'\}|\[\{|\bTrue\b|\bFalse\b|\bNone\b(?! of)")


def workspace_with_runs(root: Path) -> tuple[Path, dict[str, str]]:
    """A starter workspace (lexical engine) with a SKILL.md script skill, a broken notes.add, and one run of each kind."""
    create_workspace(root)
    settings = root / "semif.toml"
    settings.write_text(settings.read_text().replace("[engine]\n", '[engine]\nname = "lexical"\n', 1))
    scripts = root / "skills" / "greeter" / "scripts"
    scripts.mkdir(parents=True)
    (scripts.parent / "SKILL.md").write_text(
        "---\nname: greeter\ndescription: Greet someone by name.\nscript: scripts/run.py\n---\n# greeter\n\nSay hello.\n"
    )
    (scripts / "run.py").write_text("import sys\nprint('hello from', ' '.join(sys.argv[1:]))\n")
    body = root / "data" / "skills" / "notes" / "add.py"
    body.write_text(
        body.read_text().replace("def act(", "def act(*args):\n    raise RuntimeError('no')\n\n\ndef _act(")
    )
    runner = SkillRunner(Workspace.load(root), engine=create_engine("lexical"), allow_scripts=True)
    return root, {text: runner.run(text, skill=skill).run_id for text, skill in RUNS}


@pytest.mark.slow
def test_log_show_and_the_run_page_show_evidence_in_words(tmp_path: Path) -> None:
    root, run_ids = workspace_with_runs(tmp_path / "ws")
    shown: dict[str, str] = {}
    for text, run_id in run_ids.items():
        result = CliRunner().invoke(main, ["log", "show", run_id, "-w", str(root)])
        assert result.exit_code == 0, result.output
        shown[text] = result.output
        assert not PYTHON.search(result.output), f"{text!r}: {PYTHON.search(result.output)}\n{result.output}"
    acted = shown["Email Alice that the quarterly report is ready"]
    assert re.search(r"^evidence +judge: +success$", acted, re.M), acted  # the lexical engine gives no probability
    assert re.search(r"^ +confined: +yes", acted, re.M) and re.search(r"^ +changed: +1 file$", acted, re.M)
    assert re.search(r"^ +act gate: +acted: email\.compose at \d+% clears the act threshold", acted, re.M)
    assert "handed back:" not in acted and "error:" not in acted  # what does not apply is left out
    assert re.search(r"^ +act gate: +handed the request back: the request says not to act", shown[RUNS[1][0]], re.M)
    no_skill = shown["Translate this poem into Klingon"]
    assert "confined" not in no_skill and "decided by:  no skill fits the request" in no_skill
    assert re.search(r"decided by: +the error: an error is a failure$", shown[RUNS[4][0]], re.M)
    assert re.search(r"^ +confined: +no: a SKILL\.md skill may act outside", shown["greet Ada"], re.M)
    dentist = shown["Dentist on Tuesday at 3pm"]
    assert re.search(r'^ +wording: +its first word "dentist" is one of calendar\.add_event\'s words$', dentist, re.M)

    served = start_ui(root, tmp_path / "home")
    try:
        for text, run_id in run_ids.items():
            status, _, page = fetch(f"{served.url}runs/{run_id}")
            assert status == 200
            assert not PYTHON.search(page), f"{text!r}: {PYTHON.search(page)}"
            table = re.search(r'<table class="evidence">(.*?)</table>', page, re.S)
            assert table, text
            rows = re.findall(r'<th scope="row">(.*?)</th><td>(.*?)</td>', table.group(1))
            record = Workspace.load(root)  # the same lines the CLI printed, row by row
            assert rows and all(f"{name}:" in shown[text] for name, _ in rows), rows
            assert [html.unescape(value) for _, value in rows] == [value for _, value in lines_of(record, run_id)], text
    finally:
        stop(served)


def lines_of(workspace: Workspace, run_id: str) -> list[tuple[str, str]]:
    from semif_agent.records import DecisionLog

    record = DecisionLog(workspace.log_path).run(run_id)
    return evidence_lines(record.evidence or {}, record.skill)


def test_a_value_of_a_key_it_does_not_know_is_still_made_readable() -> None:
    lines = dict(evidence_lines({"rule": "judge", "extra_fact": {"seen": True, "score": 0.51234, "left": None}}))
    assert lines == {"decided by": "the judge's verdict", "extra fact": "seen yes, score 0.512"}
