"""Hostile code-skill bodies run for real: :func:`body` builds one, the ``attack`` fixture runs it as ``evil.act``.

The bodies are recorded as admitted, so they skip the static contract check
and meet the sandbox itself.
"""

from __future__ import annotations

import hashlib
import itertools
import os
from pathlib import Path

import pytest

from semif_agent.engine import Engine, ScriptedEngine
from semif_agent.loop import SkillRunner
from semif_agent.records import OUTCOME_KIND, DecisionLog
from semif_agent.workspace import Workspace

HEAD = """
import os, sys, time, json
from pathlib import Path
from semif_agent.skills import ActionResult, Prediction

def predict(ctx, request):
    return Prediction(text="go")

def act(ctx, request, prediction):
    target = Path(ctx.config["outside"])
"""
TAIL = """
    return ActionResult(action_log="done", new_state="done")
"""


def body(attack: str) -> str:
    return HEAD + "\n".join("    " + line for line in attack.strip("\n").splitlines()) + TAIL


def snapshot(*roots: Path) -> dict[str, str]:
    """Every file under ``roots`` with a digest of its bytes (what must not change)."""
    found = {}
    for root in roots:
        for path in sorted(root.rglob("*")):
            if path.is_file() and not path.is_symlink():
                found[str(path)] = hashlib.sha256(path.read_bytes()).hexdigest()
            elif path.is_symlink():
                found[str(path)] = "link:" + os.readlink(path)
    return found


@pytest.fixture
def attack(make_workspace, tmp_path: Path):
    """Run ``attack`` (body lines) as skill ``evil.act``; returns the result, the workspace, and what changed outside.

    Each run gets a workspace of its own; all of a test's runs share the thread's warm worker pool.
    """
    outside = tmp_path / "outside"
    outside.mkdir()
    (outside / "keep.txt").write_text("precious")

    made = itertools.count()

    def run(lines: str, *, timeout: float = 20.0, settings: str = "", engine: Engine | None = None):
        root = make_workspace(
            {"evil.act": body(lines), "email.compose": None},
            admitted=True,
            settings=f'\n[config]\noutside = "{outside / "pwned.txt"}"\n' + settings,
            name=f"ws{next(made) or ''}",
        )
        ws = Workspace.load(root)
        records = [ws.categories_path, ws.bodies_dir, ws.settings_file]
        before = snapshot(outside, *[p for p in records if p.is_dir()]) | {
            str(p): _digest(p) for p in records if p.is_file()
        }
        engine = engine or ScriptedEngine(fn=lambda r: r.option_ids[0])
        runner = SkillRunner(ws, engine=engine, body_timeout=timeout)
        result = runner.run("do it", skill="evil.act")
        after = snapshot(outside, *[p for p in records if p.is_dir()]) | {
            str(p): _digest(p) for p in records if p.is_file()
        }
        outcome = [r for r in DecisionLog(ws.log_path).read() if r.kind == OUTCOME_KIND]
        assert outcome and outcome[-1].run_id == result.run_id, "every run ends with its outcome row"
        return result, ws, {k for k in set(before) | set(after) if before.get(k) != after.get(k)}

    return run


def _digest(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()
