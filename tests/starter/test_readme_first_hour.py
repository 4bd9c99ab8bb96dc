"""The README's "Your first hour" runs as written: its shell commands in a real shell, then its Python."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

from semif_agent.engine import local_available

pytestmark = pytest.mark.slow  # a dozen `semif` commands, each a new process loading the embedded model

README = Path(__file__).resolve().parents[2] / "README.md"


def section() -> str:
    text = README.read_text(encoding="utf-8")
    start = text.index("## Your first hour")
    return text[start : text.index("\n## ", start + 1)]


def blocks(language: str) -> list[str]:
    return re.findall(rf"^```{language}\n(.*?)^```$", section(), re.S | re.M)


@pytest.mark.skipif(not local_available(), reason="the local engine is not installed")
def test_the_first_hour_runs_as_written(tmp_path: Path) -> None:
    shims = tmp_path / "bin"
    shims.mkdir()
    semif = shims / "semif"
    semif.write_text(f'#!/bin/sh\nexec "{sys.executable}" -m semif_agent "$@"\n')
    semif.chmod(0o755)
    env = {**os.environ, "PATH": f"{shims}{os.pathsep}{os.environ['PATH']}"}
    env.pop("SEMIF_WORKSPACE", None)
    script = "set -eu\n" + "\n".join(blocks("sh"))
    shell = subprocess.run(["bash", "-c", script], cwd=tmp_path, env=env, capture_output=True, text=True, timeout=600)
    assert shell.returncode == 0, shell.stderr + shell.stdout
    assert "todos.count: passes the contract" in shell.stdout

    ws = tmp_path / "ws"
    runs = [
        json.loads(line)
        for line in subprocess.run(
            [sys.executable, "-m", "semif_agent", "log", "-w", str(ws), "--json", "--limit", "0"],
            env=env,
            capture_output=True,
            text=True,
            check=True,
        ).stdout.splitlines()
    ]
    emails = [r for r in runs if r["request"] == "Email Grace that I accept the offer"]
    assert [r["skill"] for r in emails] == ["email.compose"], (
        "the gate moves a request to email to the skill that writes"
    )
    asked = [r for r in runs if r["request"] == "Send my manager a request asking for Friday off"]
    assert len(asked) == 2 and asked[0]["outcome"] == "handed_back" and asked[0]["label_skill"] == "email.compose"
    assert asked[-1]["skill"] == "email.compose" and asked[-1]["outcome"] != "handed_back", "after the label and train"
    [pdf] = [r for r in runs if r["request"] == "Convert the budget spreadsheet to a PDF"]
    assert pdf["labelled_by"] is None, "its --none label was taken back"
    [unsent] = [r for r in runs if r["request"] == "Any unsent messages?"]
    assert unsent["label_skill"] == "email.list_drafts"
    drafts = sorted((ws / "data" / "drafts").glob("*.txt"))
    assert [d.read_text().splitlines()[:2] for d in drafts] == [
        ["To: Grace Kim <grace.kim@example.com>", "Subject: Accepting the offer"],
        ["To: David Okafor <david.okafor@example.com>", "Subject: Friday off"],
    ]
    [added] = [r for r in runs if r["request"] == "Add renew the passport to my to-do list"]
    assert added["skill"] == "todos.add" and added["outcome"] == "success", "the trained router acts on the to-do"
    assert runs[-1]["skill"] == "todos.count" and runs[-1]["outcome"] != "failure"
    assert "1 open to-do(s)" in shell.stdout, "the new skill counts the to-do the walk-through added"
    assert json.loads((ws / "data" / "admitted.json").read_text())["bodies"]["todos.count"]["how"] == "checked"

    [python] = blocks("python")
    done = subprocess.run(
        [sys.executable, "-c", python], cwd=tmp_path, env=env, capture_output=True, text=True, timeout=300
    )
    assert done.returncode == 0, done.stderr
    assert done.stdout.splitlines()[0].startswith("calendar.add_event ")
    assert "Tue 18 Mar 10:30: Call with Grace" in done.stdout
