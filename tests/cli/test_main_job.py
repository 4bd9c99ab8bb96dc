"""The main job, as a new user runs it: a fresh workspace, the embedded engine, a real process."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

TEXT = "Email Alice that the quarterly report is ready"


def semif(*args: str, cwd: Path, env: dict[str, str] | None = None) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, "-m", "semif_agent", *args],
        cwd=cwd,
        capture_output=True,
        text=True,
        env={**os.environ, **(env or {})},
        timeout=120,
    )


def test_init_then_run_routes_to_email_compose_writes_the_draft_and_logs(tmp_path: Path) -> None:
    made = semif("init", "ws", cwd=tmp_path)
    assert made.returncode == 0, made.stderr
    done = semif("run", TEXT, "-w", "ws", "--json", cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    result = json.loads(done.stdout)
    assert result["skill"] == "email.compose"
    drafts = list((tmp_path / "ws" / "data" / "drafts").iterdir())
    assert len(drafts) == 1 and drafts[0].read_text().startswith("To: Alice")
    rows = (tmp_path / "ws" / "data" / "decisions.jsonl").read_text().splitlines()
    assert len([r for r in rows if json.loads(r)["kind"] != "outcome"]) >= 3
    assert result["assessment"]["label"] == "success"


def test_run_without_a_workspace_makes_the_users_own_and_says_where(tmp_path: Path) -> None:
    home = tmp_path / "home-workspace"
    done = semif("run", TEXT, cwd=tmp_path, env={"SEMIF_HOME": str(home)})
    assert done.returncode == 0, done.stderr
    assert f"made your workspace at {home}" in done.stderr
    assert "email.compose" in done.stdout
    assert len(list((home / "data" / "drafts").iterdir())) == 1
    again = semif("run", "Add buy milk to my todo list", cwd=tmp_path, env={"SEMIF_HOME": str(home)})
    assert again.returncode == 0 and "made your workspace" not in again.stderr


def test_a_users_mistake_is_one_line_without_a_traceback(tmp_path: Path) -> None:
    done = semif("run", "x", "-w", "nowhere", cwd=tmp_path)
    assert done.returncode == 1
    assert done.stderr.strip().count("\n") == 0 and "Traceback" not in done.stderr
