"""Fixtures for the sandbox tests: async tests, skill roots, a worker pool, runtimes (shared with the catalog's)."""

from __future__ import annotations

from support.skill_runs import make_runtime, pytest_pyfunc_call, skills_root, worker_pool

__all__ = ["make_runtime", "pytest_pyfunc_call", "skills_root", "worker_pool"]  # fixtures and the hook, shared
