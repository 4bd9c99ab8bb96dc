"""Fixtures for the llm suite: the loopback wire server, a clean environment, fast retries.

``tests/`` goes on ``sys.path`` so ``support`` (the shared test helpers) imports.
"""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from support.wire_server import WireServer  # noqa: E402

from semif_agent.llm import RetryPolicy, block_model_requests, create_provider  # noqa: E402

ENV_VARS = (
    "OPENAI_API_KEY", "OPENAI_BASE_URL", "OPENAI_ORG_ID", "OPENAI_PROJECT_ID", "OPENAI_CUSTOM_HEADERS",
    "ANTHROPIC_API_KEY", "ANTHROPIC_AUTH_TOKEN", "ANTHROPIC_BASE_URL", "ANTHROPIC_PROFILE",
    "ANTHROPIC_CUSTOM_HEADERS", "OPENROUTER_API_KEY", "OLLAMA_BASE_URL",
)


@pytest.fixture(scope="session", autouse=True)
def _no_real_model_calls():
    """Only loopback endpoints may be called from this suite."""
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


class Sleeps:
    """A retry ``sleep`` that records the delays instead of waiting them out."""

    def __init__(self) -> None:
        self.delays: list[float] = []

    async def __call__(self, seconds: float) -> None:
        self.delays.append(seconds)


@pytest.fixture
def sleeps() -> Sleeps:
    return Sleeps()


@pytest.fixture
def fast_retry(sleeps) -> RetryPolicy:
    return RetryPolicy(max_retries=2, initial_delay=0.001, max_delay=0.004, sleep=sleeps)


@pytest.fixture
def provider_for(wire, fast_retry):
    """``provider_for("openai", **options)``: a provider of that API pointed at the wire server."""

    def build(api: str, model: str = "test-model", **options):
        options.setdefault("api_key", "test-key")
        options.setdefault("base_url", wire.base_url(api))
        options.setdefault("retry", fast_retry)
        options.setdefault("timeout", 5.0)
        return create_provider(f"{api}/{model}", **options)

    return build
