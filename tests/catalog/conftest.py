"""Fixtures for the SKILL.md catalog tests: skill roots, runtimes, the reference library."""

from __future__ import annotations

import asyncio
import inspect
import os
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest
from catalog_helpers import CORPUS, SKILLS_REF, cache_dir

from semif_agent.catalog import AgentSkillRuntime, SandboxLimits, SkillCatalog, WorkerPool


@pytest.hookimpl(tryfirst=True)
def pytest_pyfunc_call(pyfuncitem: pytest.Function) -> bool | None:
    """Run ``async def`` tests of this folder in a fresh event loop each."""
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


@pytest.fixture
def corpus() -> Path:
    if not CORPUS.is_dir():
        pytest.skip(f"the shared skills corpus is not beside the repository ({CORPUS.name} missing)")
    return CORPUS


@pytest.fixture(scope="session")
def reference_python(pytestconfig: pytest.Config, tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A Python with the reference library installed (a cached venv), or skip without a network."""
    venv = cache_dir(pytestconfig, tmp_path_factory, "skills-ref-0.1.1-venv")
    python = venv / "bin" / "python"
    check = [str(python), "-c", "import skills_ref, sys; sys.exit(skills_ref.__version__ != '0.1.1')"]
    if python.exists() and subprocess.run(check, capture_output=True).returncode == 0:
        return python
    created = subprocess.run([sys.executable, "-m", "venv", "--clear", str(venv)], capture_output=True, text=True)
    if created.returncode != 0:
        pytest.skip(f"cannot create a virtual environment for {SKILLS_REF}: {created.stderr.strip()[-200:]}")
    installed = subprocess.run(
        [str(python), "-m", "pip", "install", "--quiet", "--disable-pip-version-check", SKILLS_REF],
        capture_output=True,
        text=True,
        timeout=300,
        env={**os.environ, "PIP_NO_INPUT": "1"},
    )
    if installed.returncode != 0:
        pytest.skip(f"cannot install {SKILLS_REF} (no network?): {installed.stderr.strip()[-300:]}")
    return python
