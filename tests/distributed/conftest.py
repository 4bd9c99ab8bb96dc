"""A fresh embedding cache for a local run, and starter workspaces (the Ray cluster is the whole run's, in ``tests/conftest.py``)."""

from __future__ import annotations

from pathlib import Path

import pytest

REQUESTS = Path(__file__).parents[1] / "routing" / "starter_requests.jsonl"  # 63 labelled requests for the starter


@pytest.fixture
def local_cache(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A fresh embedding cache for this process: the local run computes everything itself."""
    folder = tmp_path / "local-cache"
    monkeypatch.setenv("SEMIF_CACHE_DIR", str(folder))
    return folder


def starter(path: Path) -> Path:
    from semif_agent.starter import create_workspace

    return create_workspace(path)
