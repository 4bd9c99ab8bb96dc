"""Generation: only bodies that pass the contract are admitted, atomically, and usable at once."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from semif_agent._sync import run_sync
from semif_agent.engine import ScriptedEngine
from semif_agent.forge import GenerationFailed, agenerate_skill, make_manifest
from semif_agent.llm import ScriptedProvider
from semif_agent.loop import SkillRunner
from semif_agent.starter import create_workspace
from semif_agent.workspace import Workspace

COUNT = """
import json
from pathlib import Path

from semif_agent.skills import ActionResult, DecisionRequest, Option, Prediction


def predict(ctx, request):
    decision = DecisionRequest(request.text, "Which to-dos should be counted?",
                               [Option("open", "Tasks still to do."), Option("done", "Finished tasks."),
                                Option("none", "Count all of them.")])
    result = ctx.engine.call(decision)
    return Prediction(text=result.selected, decisions=[(decision, result)])


def act(ctx, request, prediction):
    path = Path(ctx.config["todos"]) / "todos.json"
    todos = json.loads(path.read_text()) if path.exists() else []
    if isinstance(todos, dict):
        todos = todos.get("todos", [])
    wanted = [t for t in todos if prediction.text == "none" or t.get("status", "open") == prediction.text]
    return ActionResult(action_log=f"todos.count: {len(wanted)} {prediction.text} to-do(s) in {path}.",
                        new_state=f"{len(wanted)} to-do(s).")
"""
HEADER_LINES = COUNT.count("\n", 0, COUNT.index("def act"))
READ = '    path = Path(ctx.config["todos"]) / "todos.json"\n'  # the line of COUNT that reads the to-dos


def fenced(source: str) -> str:
    return f"Here is the body.\n```python\n{source}```\n"


@pytest.fixture
def ws(tmp_path: Path) -> Workspace:
    return Workspace.load(create_workspace(tmp_path / "ws"))


def snapshot(ws: Workspace) -> dict[str, bytes]:
    files = {"categories.json": ws.categories_path.read_bytes()}
    for path in sorted(ws.bodies_dir.rglob("*")):
        if path.is_file():
            files[str(path.relative_to(ws.bodies_dir))] = path.read_bytes()
    return files


def generate(ws: Workspace, replies: list, manifest=None, **kwargs):
    provider = ScriptedProvider([fenced(r) if isinstance(r, str) else r for r in replies])
    manifest = manifest or make_manifest("todos.count", "Count the to-do tasks, open or done.", cost_budget=1)
    return provider, run_sync(agenerate_skill(ws, manifest, provider=provider, **kwargs))


def test_a_good_body_is_admitted_and_usable_at_once(ws: Workspace) -> None:
    provider, generated = generate(ws, [COUNT])
    assert len(generated.attempts) == 1 and generated.attempts[0].report.ok
    assert generated.body_path == ws.bodies_dir / "todos" / "count.py"
    assert generated.body_path.read_text() == COUNT.lstrip("\n")
    manifests = json.loads(ws.categories_path.read_text())["skills"]
    assert [m for m in manifests if m["name"] == "todos.count"][0]["cost_budget"] == 1
    system = provider.requests[0].messages[0].content
    assert "## Rules" in system and "Worked example" in system  # the contract, verbatim
    result = SkillRunner(ws, engine=ScriptedEngine(["open", "success"])).run(
        "how many tasks are open?", skill="todos.count"
    )
    assert result.error is None and "todos.count: 0 open to-do(s)" in result.action.action_log


BAD = {
    1: COUNT.replace("def act(ctx, request, prediction):", "def act(ctx, request):"),
    3: COUNT.replace("import json\n", "import json\nimport requests\n"),
    4: COUNT.replace(
        "    result = ctx.engine.call(decision)",
        "    from semif_agent.skills import DecisionResult\n    result = DecisionResult(selected='open')",
    ),
    "write": COUNT.replace(READ, "    Path('/tmp/semif-outside-write.txt').write_text('x')\n" + READ),
    "budget": COUNT.replace(
        "    result = ctx.engine.call(decision)",
        "    result = ctx.engine.call(decision)\n    result = ctx.engine.call(decision)",
    ),
}


@pytest.mark.parametrize("criterion", list(BAD))
def test_a_violation_is_refused_with_its_criterion_then_fixed_by_the_retry(ws: Workspace, criterion) -> None:
    provider, generated = generate(ws, [BAD[criterion], COUNT])
    first, second = generated.attempts
    expected = criterion if isinstance(criterion, int) else "gate"
    assert expected in first.report.criteria(), first.report.render()
    if criterion == "write":
        assert "writes outside the data dirs" in first.report.render()
        assert not Path("/tmp/semif-outside-write.txt").exists()
    if criterion == "budget":
        assert "exceeds its cost_budget" in first.report.render()
    assert second.report.ok
    feedback = provider.requests[1].messages[-1].content
    assert f"[criterion {expected}]" in feedback and "refused" in feedback
    assert generated.body_path.read_text() == COUNT.lstrip("\n")


def test_a_near_duplicate_is_refused_naming_the_leaf(ws: Workspace) -> None:
    before = snapshot(ws)
    manifest = make_manifest("todos.add_task", "Add a new task to my to-do list.", cost_budget=1)
    with pytest.raises(GenerationFailed, match="duplicates the existing leaf todos.add") as caught:
        generate(ws, [COUNT, COUNT], manifest=manifest, max_attempts=2)
    assert all(5 in a.report.criteria() for a in caught.value.attempts)
    assert snapshot(ws) == before


def test_an_interrupted_generation_leaves_everything_unchanged(ws: Workspace) -> None:
    before = snapshot(ws)
    with pytest.raises(KeyboardInterrupt):
        generate(ws, [BAD[3], KeyboardInterrupt()])
    assert snapshot(ws) == before


def test_a_crash_while_admitting_restores_both_files(ws: Workspace, monkeypatch) -> None:
    before = snapshot(ws)
    real_replace = os.replace

    def replace(src, dst):
        if str(dst).endswith("categories.json"):
            raise OSError("disk full")
        return real_replace(src, dst)

    monkeypatch.setattr(os, "replace", replace)
    with pytest.raises(OSError, match="disk full"):
        generate(ws, [COUNT])
    monkeypatch.setattr(os, "replace", real_replace)
    assert snapshot(ws) == before
    assert not [p for p in ws.categories_path.parent.iterdir() if p.name.endswith(".tmp")]


def test_a_new_category_is_created_with_a_description_listing_its_skills(ws: Workspace) -> None:
    manifest = make_manifest("chores.count", "Count the household chores done this week.", cost_budget=1)
    source = COUNT.replace("todos.count", "chores.count")
    _, generated = generate(ws, [source], manifest=manifest, category_description="Household chores")
    categories = json.loads(ws.categories_path.read_text())["categories"]
    chores = [c for c in categories if c["name"] == "chores"][0]
    assert chores["description"] == "Household chores. Skills: chores.count."
    assert generated.body_path == ws.bodies_dir / "chores" / "count.py"


def test_a_new_category_needs_a_description(ws: Workspace) -> None:
    from semif_agent.errors import UserError

    manifest = make_manifest("chores.count", "Count chores.", cost_budget=1)
    with pytest.raises(UserError, match="no category 'chores'"):
        generate(ws, [COUNT], manifest=manifest)
