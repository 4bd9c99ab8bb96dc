"""Fixtures for the agent suite: scripted replies, the loopback wire server, a clean environment.

``tests/`` goes on ``sys.path`` so ``support`` (the shared test helpers) imports.
"""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from support.wire_server import WireServer  # noqa: E402

from semif_agent.llm import RetryPolicy, block_model_requests, create_provider  # noqa: E402

ENV_VARS = (
    "OPENAI_API_KEY", "OPENAI_BASE_URL", "ANTHROPIC_API_KEY", "ANTHROPIC_AUTH_TOKEN", "ANTHROPIC_BASE_URL",
    "OPENROUTER_API_KEY", "OLLAMA_BASE_URL",
)


@pytest.fixture(scope="session", autouse=True)
def _no_real_model_calls():
    with block_model_requests(allow_loopback=True):
        yield


@pytest.fixture(autouse=True)
def _clean_env(monkeypatch, tmp_path):
    for name in ENV_VARS:
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("ANTHROPIC_CONFIG_DIR", str(tmp_path / "no-anthropic-config"))


@pytest.fixture(scope="session")
def _wire_server():
    with WireServer() as server:
        yield server


@pytest.fixture
def wire(_wire_server):
    """The loopback server, with no replies queued and no requests recorded."""
    _wire_server.reset()
    yield _wire_server
    _wire_server.reset()


@pytest.fixture
def provider_for(wire):
    """``provider_for("openai")``: a provider of that API pointed at the wire server."""

    def build(api: str, model: str = "test-model", **options: Any):
        options.setdefault("api_key", "test-key")
        options.setdefault("base_url", wire.base_url(api))
        options.setdefault("retry", RetryPolicy(max_retries=0))
        options.setdefault("timeout", 5.0)
        return create_provider(f"{api}/{model}", **options)

    return build
