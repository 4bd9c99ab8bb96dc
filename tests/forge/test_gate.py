"""The behavioural gate contains bodies that hang, blow up memory, or crash, and never touches the host's data."""

from __future__ import annotations

from pathlib import Path

import pytest

from semif_agent._sync import run_sync
from semif_agent.forge.gate import run_gate
from semif_agent.starter import create_workspace
from semif_agent.workspace import Workspace

from .test_generator import COUNT, READ


@pytest.fixture
def ws(tmp_path: Path) -> Workspace:
    return Workspace.load(create_workspace(tmp_path / "ws"))


def gate(ws: Workspace, source: str, timeout: float = 20.0):
    return run_gate(
        source,
        name="todos.count",
        category="todos",
        budget=1,
        samples=["count my tasks"],
        workspace=ws,
        timeout=timeout,
    )


def test_a_passing_body_runs_on_each_sample_twice(ws: Workspace) -> None:
    report = run_sync(gate(ws, COUNT))
    assert report.ok and [r["answers"] for r in report.results] == ["first", "none"]
    assert all(r["engine_calls"] == 1 for r in report.results)


@pytest.mark.slow
def test_a_hanging_body_is_stopped_by_the_timeout(ws: Workspace) -> None:
    hang = COUNT.replace(READ, "    while True:\n        pass\n")
    report = run_sync(gate(ws, hang, timeout=2.0))
    assert not report.ok and "did not finish" in report.error


@pytest.mark.slow
def test_a_memory_bomb_is_contained(ws: Workspace) -> None:
    bomb = COUNT.replace(READ, "    hog = [bytearray(1 << 27) for _ in range(64)]\n" + READ)
    report = run_sync(gate(ws, bomb))
    assert not report.ok
    assert all("MemoryError" in v.message for v in report.violations())


def test_the_hosts_data_is_untouched(ws: Workspace) -> None:
    writer = COUNT.replace(READ, "    ctx.data_path('todos', 'todos.json').write_text('[]')\n" + READ)
    before = sorted(p.relative_to(ws.root) for p in ws.root.rglob("*"))
    report = run_sync(gate(ws, writer))
    assert report.ok
    assert sorted(p.relative_to(ws.root) for p in ws.root.rglob("*")) == before
