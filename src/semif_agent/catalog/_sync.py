"""Run a coroutine to completion from synchronous code: :func:`run_sync`."""

from __future__ import annotations

import asyncio
from collections.abc import Coroutine
from typing import Any, TypeVar

T = TypeVar("T")


def run_sync(coroutine: Coroutine[Any, Any, T]) -> T:
    """Run ``coroutine`` in a fresh event loop; refuses inside a running loop (await it there)."""
    try:
        asyncio.get_running_loop()
    except RuntimeError:
        return asyncio.run(coroutine)
    coroutine.close()
    raise RuntimeError("run_sync() cannot run inside a running event loop; await the coroutine instead")
