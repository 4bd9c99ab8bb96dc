"""The ``semif`` command run as a new user runs it: a real process, with its own home and data folders."""

from __future__ import annotations

import os
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path

import pytest

Semif = Callable[..., subprocess.CompletedProcess]


@pytest.fixture
def user_home(tmp_path: Path) -> Path:
    """The home folder of the user the processes run as (empty: no workspace of their own yet)."""
    home = tmp_path / "home"
    home.mkdir()
    return home


@pytest.fixture
def semif(user_home: Path, tmp_path: Path) -> Semif:
    """``semif(*args, cwd=..., env={...}, input=...)``: ``python -m semif_agent ARGS`` in a new process.

    HOME, SEMIF_HOME and the XDG folders point into the test's temporary
    folder, and no SEMIF_WORKSPACE is set unless ``env`` sets it.
    """
    base = {
        **os.environ,
        "HOME": str(user_home),
        "SEMIF_HOME": str(user_home / "semif-workspace"),
        "XDG_DATA_HOME": str(user_home / ".local" / "share"),
        "XDG_CONFIG_HOME": str(user_home / ".config"),
        "COLUMNS": "200",
    }
    base.pop("SEMIF_WORKSPACE", None)

    def run(
        *args: str,
        cwd: Path | None = None,
        env: dict[str, str] | None = None,
        input: str | None = None,
    ) -> subprocess.CompletedProcess:
        return subprocess.run(
            [sys.executable, "-m", "semif_agent", *args],
            cwd=cwd or tmp_path,
            input=input,
            capture_output=True,
            text=True,
            env={**base, **(env or {})},
            timeout=180,
        )

    return run
