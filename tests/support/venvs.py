"""A package from the registry in a virtual environment of its own, kept in pytest's cache between runs."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest
from support.catalog_helpers import cache_dir


def installed_python(
    config: pytest.Config, factory: pytest.TempPathFactory, requirement: str, check: str, *, timeout: float = 300
) -> Path:
    """The Python of a cached venv with ``requirement`` installed (``check``, Python code, exits 0 once it is);
    the test is skipped when it cannot be installed (no network)."""
    venv = cache_dir(config, factory, requirement.replace("==", "-") + "-venv")
    python = venv / "bin" / "python"
    if python.exists() and subprocess.run([str(python), "-c", check], capture_output=True).returncode == 0:
        return python
    created = subprocess.run([sys.executable, "-m", "venv", "--clear", str(venv)], capture_output=True, text=True)
    if created.returncode != 0:
        pytest.skip(f"cannot create a virtual environment for {requirement}: {created.stderr.strip()[-200:]}")
    installed = subprocess.run(
        [str(python), "-m", "pip", "install", "--quiet", "--disable-pip-version-check", requirement],
        capture_output=True,
        text=True,
        timeout=timeout,
        env={**os.environ, "PIP_NO_INPUT": "1"},
    )
    if installed.returncode != 0:
        pytest.skip(f"cannot install {requirement} (no network?): {installed.stderr.strip()[-300:]}")
    return python
