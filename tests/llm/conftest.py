"""Fixtures for the llm suite: fast retries for the providers ``provider_for`` builds.

The wire server, ``provider_for``, the clean environment and the block on real model calls come from
``tests/conftest.py``.
"""

from __future__ import annotations

import pytest

from semif_agent.llm import RetryPolicy


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
def provider_retry(fast_retry) -> RetryPolicy:
    """:func:`provider_for` (``tests/conftest.py``) retries quickly here, with the delays recorded."""
    return fast_retry
