"""Fixtures for the agent suite: providers pointed at the loopback wire server.

The wire server, the clean environment and the block on real model calls come from ``tests/conftest.py``.
"""

from __future__ import annotations

from typing import Any

import pytest

from semif_agent.llm import RetryPolicy, create_provider


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
