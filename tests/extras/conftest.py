"""A fresh virtual environment per extra, with the project installed as a user installs it: the README's
``pip install '.[local]'`` and the one extra, nothing else (so an extra that does not install what it uses fails
here, where the test extra, which pulls every extra, would hide it).

The project is built into a wheel once, from a copy of the checkout (a build writes beside its sources), and each
environment installs that wheel with its extras from the package index. These tests are marked ``extras``: CI runs
them (``--all``), the quick loop leaves them out.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path

import pytest

import semif_agent

CHECKOUT = Path(semif_agent.__file__).resolve().parents[2]
INSTALL_TIMEOUT = 900  # seconds for one environment; a warm pip cache takes 25-40 s an extra
PIP_CACHE = os.environ.get("PIP_CACHE_DIR") or str(Path.home() / ".cache" / "pip")
"""pip's cache of the user running the tests, read before the tests give each a home of its own."""


def _pip(python: Path, *args: str) -> subprocess.CompletedProcess:
    return subprocess.run(
        [str(python), "-m", "pip", "--disable-pip-version-check", *args],
        capture_output=True,
        text=True,
        timeout=INSTALL_TIMEOUT,
        env={
            **{k: v for k, v in os.environ.items() if k != "PYTHONPATH"},
            "PIP_NO_INPUT": "1",
            "PIP_CACHE_DIR": PIP_CACHE,
        },
    )


@pytest.fixture(scope="session")
def project_wheel(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The project's wheel, built from a copy of the checkout's sources."""
    if not (CHECKOUT / "pyproject.toml").is_file():
        pytest.skip("not running from a checkout (no pyproject.toml beside src/)")
    copy = tmp_path_factory.mktemp("checkout")
    for name in ("pyproject.toml", "README.md", "LICENSE"):
        if (CHECKOUT / name).is_file():
            shutil.copy2(CHECKOUT / name, copy / name)
    shutil.copytree(CHECKOUT / "src", copy / "src", ignore=shutil.ignore_patterns("__pycache__", "*.egg-info"))
    wheels = tmp_path_factory.mktemp("wheel")
    built = _pip(Path(sys.executable), "wheel", "--quiet", "--no-deps", "--wheel-dir", str(wheels), str(copy))
    assert built.returncode == 0, built.stderr[-2000:]
    return next(wheels.glob("semif_agent-*.whl"))


@pytest.fixture(scope="session")
def venv_with(project_wheel: Path, tmp_path_factory: pytest.TempPathFactory) -> Callable[..., Path]:
    """``venv_with("ui")``: the bin folder of a new virtual environment with the project and ``local`` plus that extra
    (``base=()``: the extra alone)."""
    made: dict[tuple[str, ...], Path] = {}

    def build(extra: str, base: tuple[str, ...] = ("local",)) -> Path:
        extras = (*base, extra)
        if extras not in made:
            venv = tmp_path_factory.mktemp("venv-" + "-".join(extras))
            created = subprocess.run([sys.executable, "-m", "venv", str(venv)], capture_output=True, text=True)
            assert created.returncode == 0, created.stderr
            installed = _pip(venv / "bin" / "python", "install", "--quiet", f"{project_wheel}[{','.join(extras)}]")
            assert installed.returncode == 0, installed.stderr[-3000:]
            made[extras] = venv / "bin"
        return made[extras]

    return build


def clean_env(home: Path) -> dict[str, str]:
    """The environment a command of the fresh install runs in: a home of its own, nothing of this test run's."""
    env = {
        k: v for k, v in os.environ.items() if not k.startswith(("SEMIF_", "RAY_", "OTEL_", "PYTHON", "VIRTUAL_ENV"))
    }
    env.update(HOME=str(home), SEMIF_HOME=str(home / "semif-workspace"), COLUMNS="200")
    return env


def run(bin_dir: Path, *args: str, home: Path, timeout: float = 300) -> subprocess.CompletedProcess:
    """``semif ARGS`` of the fresh install."""
    return subprocess.run(
        [str(bin_dir / "semif"), *args], capture_output=True, text=True, env=clean_env(home), timeout=timeout
    )
