"""Fixtures for the llm suite: providers pointed at the loopback wire server, fast retries.

The wire server, the clean environment and the block on real model calls come from ``tests/conftest.py``.
"""

from __future__ import annotations

import pytest

from semif_agent.llm import RetryPolicy, create_provider


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
