"""A local Ray cluster of 2 CPUs for the module's tests (skipped without the ``ray`` extra), and starter workspaces."""

from __future__ import annotations

import os
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

REQUESTS = Path(__file__).parents[1] / "routing" / "starter_requests.jsonl"  # 63 labelled requests for the starter


@pytest.fixture(scope="module")
def cluster(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Any]:
    """The ``ray`` module, connected to a local cluster with 2 CPUs and its own embedding cache.

    The workers cache embeddings in a folder of their own, so nothing they
    compute comes from what a local run in the same test computed.
    """
    ray = pytest.importorskip("ray", reason="the ray extra is not installed: pip install 'semif-agent[ray]'")
    cache = tmp_path_factory.mktemp("cluster-cache")
    env = {"SEMIF_CACHE_DIR": str(cache)}
    if os.environ.get("PYTHONPATH"):
        env["PYTHONPATH"] = os.environ["PYTHONPATH"]
    ray.init(num_cpus=2, include_dashboard=False, log_to_driver=False, runtime_env={"env_vars": env})
    try:
        yield ray
    finally:
        ray.shutdown()


@pytest.fixture
def local_cache(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A fresh embedding cache for this process: the local run computes everything itself."""
    folder = tmp_path / "local-cache"
    monkeypatch.setenv("SEMIF_CACHE_DIR", str(folder))
    return folder


def starter(path: Path) -> Path:
    from semif_agent.starter import create_workspace

    return create_workspace(path)
