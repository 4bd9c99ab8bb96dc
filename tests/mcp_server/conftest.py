"""A workspace of real skills (the starter's code skills and the SKILL.md corpus), and `semif mcp` processes on it."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

pytest.importorskip("mcp")

CORPUS = Path(__file__).resolve().parents[1] / "fixtures" / "skills-corpus"


def process_env(home: Path) -> dict[str, str]:
    """The environment `semif mcp` runs in: its own home, no workspace of the user's."""
    env = {**os.environ, "HOME": str(home), "SEMIF_HOME": str(home / "semif-workspace")}
    env.pop("SEMIF_WORKSPACE", None)
    return env


def starter_workspace(base: Path) -> tuple[Path, dict[str, str]]:
    """A starter workspace made by `semif init` in ``base``, and the env (a home of its own) to serve it in."""
    home = base / "home"
    home.mkdir()
    env = process_env(home)
    root = base / "ws"
    subprocess.run(
        [sys.executable, "-m", "semif_agent", "init", str(root)], env=env, check=True, capture_output=True, timeout=120
    )
    return root, env


@pytest.fixture(scope="module")
def corpus_workspace(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[Path, dict[str, str]]]:
    """A starter workspace with the 24 real SKILL.md skills in its skills/ folder, and the env to serve it in."""
    root, env = starter_workspace(tmp_path_factory.mktemp("mcp"))
    skills = root / "skills"
    skills.mkdir(exist_ok=True)
    for collection in ("superpowers", "openai-skills"):
        for folder in (CORPUS / collection).iterdir():
            if (folder / "SKILL.md").is_file():
                shutil.copytree(folder, skills / folder.name)
    yield root, env
