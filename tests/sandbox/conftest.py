"""Fixtures for the sandbox tests: async tests, skill roots, a worker pool, runtimes (shared with the catalog's),
and ``call``, a scripted confined call on the pool."""

from __future__ import annotations

from pathlib import Path

import pytest
from support.skill_runs import make_runtime, pytest_pyfunc_call, skills_root, worker_pool

from semif_agent.sandbox import SandboxLimits, WorkerPool, scripted_call
from semif_agent.sandbox.limits import confinement_spec

__all__ = ["make_runtime", "pytest_pyfunc_call", "skills_root", "worker_pool"]  # fixtures and the hook, shared


@pytest.fixture
def call(tmp_path: Path, worker_pool: WorkerPool):
    """``await call(steps, on_message=..., timeout_sec=..., **pool_call_options)`` with the pool's defaults.

    The callee is :func:`semif_agent.sandbox.scripted_call.run_steps`; the call's folder is ``tmp_path / "ws"``.
    """
    workspace = tmp_path / "ws"
    workspace.mkdir()

    async def run(steps, *, timeout_sec: float = 10, limits: SandboxLimits | None = None, **options):
        spec = confinement_spec(
            limits or SandboxLimits(memory_mb=512),
            timeout_sec=timeout_sec,
            workspace_root=workspace,
            skill_dir=workspace,
        )
        return await worker_pool.call(
            scripted_call.run_steps,
            {"steps": steps},
            cwd=workspace,
            env={"PATH": "/usr/bin:/bin"},
            confine_spec=spec,
            timeout_sec=timeout_sec,
            **options,
        )

    return run
