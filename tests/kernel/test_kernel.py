"""The kernel's contract: standard library only, the seed's names, and the public face."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import semif_agent


def test_kernel_imports_only_the_standard_library() -> None:
    code = (
        "import sys, json\n"
        "before = set(sys.modules)\n"
        "import semif_agent.skills, semif_agent.engine\n"
        "new = {m.split('.')[0] for m in set(sys.modules) - before}\n"
        "print(json.dumps(sorted(new)))\n"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    loaded = set(json.loads(out))
    foreign = {m for m in loaded if m not in sys.stdlib_module_names and m != "semif_agent" and not m.startswith("_")}
    assert foreign == set(), f"the kernel imported third-party modules: {foreign}"


def test_contract_types_are_importable_where_the_seed_says() -> None:
    from semif_agent import engine, skills

    for name in (
        "Request",
        "ActionContext",
        "Prediction",
        "ActionResult",
        "DecisionRequest",
        "Option",
        "DecisionResult",
    ):
        assert hasattr(skills, name), name
    for name in ("DecisionRequest", "Option", "DecisionResult"):
        assert getattr(engine, name) is getattr(skills, name)
    prediction = skills.Prediction(text="t", decisions=[])
    result = skills.ActionResult(action_log="log", new_state="state")
    assert (prediction.text, result.action_log, result.new_state) == ("t", "log", "state")


def test_public_face_is_pinned() -> None:
    """The root holds the contract, the engines, the log, the workspace and its Router, and the whole Agent API
    (every name of ``semif_agent.agent``, as the seed imports them from the root)."""
    from semif_agent import agent

    own = [
        "ActionContext",
        "ActionResult",
        "DecisionLog",
        "DecisionRequest",
        "DecisionResult",
        "Engine",
        "Option",
        "Prediction",
        "Request",
        "ScriptedEngine",
        "SemifError",
        "UserError",
        "Workspace",
        "Router",
        "create_engine",
        "register_engine",
    ]
    assert semif_agent.__all__ == sorted({*own, *agent.__all__})
    for name in semif_agent.__all__:
        assert getattr(semif_agent, name) is not None


def test_fixture_body_is_the_seed_example_verbatim() -> None:
    """The skill the tests build workspaces with is the skill contract's worked example, as committed in the seed
    excerpts (which a test in ``tests/agent/test_seed_names.py`` keeps equal to the seed itself), after its imports."""
    from support.seed_body import seed_body

    fixtures = Path(__file__).parents[1] / "fixtures"
    body = seed_body(fixtures)
    worked = (fixtures / "seeds" / "skill_contract_worked_example.py").read_text(encoding="utf-8")
    assert worked.startswith("def predict(ctx, request):")
    assert body.rstrip().endswith(worked.strip())
    names: dict[str, object] = {}
    exec(compile(body, "email_compose.py", "exec"), names)
    assert callable(names["predict"]) and callable(names["act"])


def test_write_atomic_replaces_content_and_refuses_paths_outside(tmp_path: Path) -> None:
    import pytest

    from semif_agent.engine import ScriptedEngine
    from semif_agent.errors import WriteRefused
    from semif_agent.skills import ActionContext

    data = tmp_path / "data"
    ctx = ActionContext(engine=ScriptedEngine(), config={"todos": str(data / "todos.json")}, write_roots=(data,))
    target = ctx.write_atomic(ctx.data_path("todos"), "[1]")
    assert target.read_text() == "[1]"
    ctx.write_atomic(target, "[1, 2]")
    assert target.read_text() == "[1, 2]" and sorted(p.name for p in data.iterdir()) == ["todos.json"]
    with pytest.raises(WriteRefused, match="outside the data dirs"):
        ctx.write_atomic(tmp_path / "elsewhere.json", "x")
    assert not (tmp_path / "elsewhere.json").exists()


def test_a_write_root_is_resolved_once_per_context_and_compared_by_whole_folders(tmp_path: Path) -> None:
    """A root swapped for a link during the run does not move where it may write; ``todos2`` is not ``todos``."""
    import pytest

    from semif_agent.engine import ScriptedEngine
    from semif_agent.errors import WriteRefused
    from semif_agent.skills import ActionContext

    data, elsewhere = tmp_path / "todos", tmp_path / "elsewhere"
    data.mkdir()
    elsewhere.mkdir()
    ctx = ActionContext(engine=ScriptedEngine(), write_roots=(data,))
    assert ctx.check_write(data / "a.json") == data / "a.json"
    with pytest.raises(WriteRefused):
        ctx.check_write(tmp_path / "todos2" / "a.json")
    data.rename(tmp_path / "moved")
    data.symlink_to(elsewhere)  # the root now leads elsewhere
    with pytest.raises(WriteRefused):
        ctx.write_atomic(data / "a.json", "x")
    assert list(elsewhere.iterdir()) == []
    fresh = ActionContext(engine=ScriptedEngine(), write_roots=(data,))  # the next run resolves it again
    assert fresh.write_atomic(data / "a.json", "x") == elsewhere / "a.json"
