"""Fixtures for the SKILL.md catalog tests: skill roots, runtimes, the reference library."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest
from support.catalog_helpers import CORPUS, SKILLS_REF, cache_dir
from support.skill_runs import make_runtime, pytest_pyfunc_call, skills_root, worker_pool

__all__ = ["make_runtime", "pytest_pyfunc_call", "skills_root", "worker_pool"]  # fixtures and the hook, shared


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
