"""Fixtures shared by the catalog and sandbox tests: async tests, skill roots, a worker pool, runtimes.

A suite's ``conftest.py`` imports them by name (pytest finds fixtures and
hooks among a conftest's names).
"""

from __future__ import annotations

import asyncio
import inspect
from collections.abc import Iterator
from pathlib import Path

import pytest

from semif_agent.catalog import AgentSkillRuntime, SkillCatalog
from semif_agent.sandbox import SandboxLimits, WorkerPool


@pytest.hookimpl(tryfirst=True)
def pytest_pyfunc_call(pyfuncitem: pytest.Function) -> bool | None:
    """Run ``async def`` tests of the folder in a fresh event loop each."""
    if not inspect.iscoroutinefunction(pyfuncitem.obj):
        return None
    arguments = {name: pyfuncitem.funcargs[name] for name in pyfuncitem._fixtureinfo.argnames}
    asyncio.run(pyfuncitem.obj(**arguments))
    return True


@pytest.fixture
def skills_root(tmp_path: Path) -> Path:
    root = tmp_path / "skills"
    root.mkdir()
    return root


@pytest.fixture
def worker_pool() -> Iterator[WorkerPool]:
    pool = WorkerPool(size=2)
    yield pool
    pool.close()


@pytest.fixture
def make_runtime(tmp_path: Path, worker_pool: WorkerPool):
    """Build a bound runtime over a registry, with fast limits and its own worker pool."""

    def build(
        registry: SkillCatalog,
        *,
        agent_id: int | str = 1,
        limits: SandboxLimits | None = None,
        workspace: Path | None = None,
    ) -> AgentSkillRuntime:
        runtime = AgentSkillRuntime(
            agent_id, registry, limits=limits or SandboxLimits(memory_mb=512), worker_pool=worker_pool
        )
        runtime.bind_workspace(workspace_root=workspace or tmp_path / f"work-{agent_id}")
        runtime.set_visible_skills(item.skill_id for item in registry.list_all())
        return runtime

    return build
