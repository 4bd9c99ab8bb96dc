"""Fixtures for the starter workspace: a fresh workspace, and a way to run one of its skills."""

from __future__ import annotations

from pathlib import Path

import pytest

from semif_agent.starter import create_workspace
from semif_agent.workspace import Workspace

from ._support import SkillRunner


@pytest.fixture
def ws(tmp_path: Path) -> Workspace:
    return Workspace.load(create_workspace(tmp_path / "ws"))


@pytest.fixture
def run(ws: Workspace) -> SkillRunner:
    return SkillRunner(ws)
