"""Fixtures for the SKILL.md catalog tests: skill roots, runtimes, the reference library."""

from __future__ import annotations

from pathlib import Path

import pytest
from support.catalog_helpers import CORPUS, SKILLS_REF
from support.skill_runs import make_runtime, pytest_pyfunc_call, skills_root, worker_pool
from support.venvs import installed_python

__all__ = ["make_runtime", "pytest_pyfunc_call", "skills_root", "worker_pool"]  # fixtures and the hook, shared


@pytest.fixture
def corpus() -> Path:
    if not CORPUS.is_dir():
        pytest.skip(f"the shared skills corpus is not beside the repository ({CORPUS.name} missing)")
    return CORPUS


@pytest.fixture(scope="session")
def reference_python(pytestconfig: pytest.Config, tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A Python with the reference library installed (a cached venv), or skip without a network."""
    check = "import skills_ref, sys; sys.exit(skills_ref.__version__ != '0.1.1')"
    return installed_python(pytestconfig, tmp_path_factory, SKILLS_REF, check)
