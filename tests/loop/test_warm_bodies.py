"""Runs of one body in one workspace take the confined process the last run left warm; nothing else shares it.

The body counts its runs in a system module (``sys``; the contract refuses that, so the bodies here are recorded
as admitted): the state a warm interpreter keeps between runs. Every
fence still holds per run (the hostile bodies of this folder run warm too); what a run leaves that cannot be
put back retires its process (the sandbox's tests).
"""

from __future__ import annotations

from pathlib import Path

from semif_agent._sync import run_sync
from semif_agent.contract.admitted import record_body
from semif_agent.engine import ScriptedEngine
from semif_agent.forge.gate import run_gate
from semif_agent.loop import SkillRunner
from semif_agent.workspace import Workspace

COUNTS = """
import sys
from semif_agent.skills import ActionResult, Prediction


def predict(ctx, request):
    return Prediction(text="go")


def act(ctx, request, prediction):
    runs = getattr(sys, "semif_runs_here", 0) + 1
    sys.semif_runs_here = runs
    return ActionResult(action_log=f"{VERSION} run {runs}", new_state=str(runs))
"""


def counting(version: str = "v1") -> str:
    return COUNTS.replace("{VERSION}", version)


def runs(root: Path, times: int) -> list[str]:
    runner = SkillRunner(Workspace.load(root), engine=ScriptedEngine(fn=lambda r: r.option_ids[0]))
    results = [runner.run("count it", skill="tally.count") for _ in range(times)]
    assert all(r.error is None for r in results), [r.error for r in results]
    return [r.action.action_log for r in results]


def test_runs_of_one_body_share_its_warm_process(make_workspace) -> None:
    root = make_workspace({"tally.count": counting()}, admitted=True)
    assert runs(root, 3) == ["v1 run 1", "v1 run 2", "v1 run 3"]


def test_a_workspace_that_turns_warm_processes_off_gets_a_fresh_process_per_run(make_workspace) -> None:
    root = make_workspace({"tally.count": counting()}, admitted=True, settings="\n[skills]\nwarm_processes = false\n")
    assert runs(root, 3) == ["v1 run 1"] * 3


def test_a_changed_body_and_another_workspace_never_get_the_process(make_workspace) -> None:
    first = make_workspace({"tally.count": counting()}, admitted=True, name="first")
    other = make_workspace({"tally.count": counting()}, admitted=True, name="other")
    assert runs(first, 2) == ["v1 run 1", "v1 run 2"]
    assert runs(other, 1) == ["v1 run 1"]  # the same body text in another workspace
    body = first / "data" / "skills" / "tally" / "count.py"
    body.write_text(counting("v2"), encoding="utf-8")
    record_body(Workspace.load(first), "tally.count", counting("v2").encode(), how="admitted")  # a new version
    assert runs(first, 2) == ["v2 run 1", "v2 run 2"]


def test_the_gate_runs_its_samples_as_real_runs_run(make_workspace) -> None:
    """One after another in one warm process of the gate's own copy: a body cannot tell the gate by freshness."""
    fresh_only = counting().replace(
        '    return ActionResult(action_log=f"v1',
        '    if runs > 1:\n        raise RuntimeError("warm")\n    return ActionResult(action_log=f"v1',
    )
    ws = Workspace.load(make_workspace({"tally.count": counting()}, admitted=True))
    warm_ok = run_sync(
        run_gate(counting(), name="tally.count", category="tally", budget=1, samples=["a"], workspace=ws)
    )
    assert warm_ok.ok, warm_ok
    fails = run_sync(run_gate(fresh_only, name="tally.count", category="tally", budget=1, samples=["a"], workspace=ws))
    assert not fails.ok and any("RuntimeError" in r["problem"] for r in fails.results), fails
