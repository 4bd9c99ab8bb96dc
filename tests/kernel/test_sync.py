"""The sync bridge runs each call in the caller's current context and refuses a running loop."""

from __future__ import annotations

import asyncio
import contextvars

import pytest

from semif_agent._sync import iter_sync, run_sync
from semif_agent.errors import SyncInAsyncError

flag: contextvars.ContextVar[str] = contextvars.ContextVar("flag", default="unset")


async def read_flag() -> str:
    return flag.get()


async def flags(n: int):
    for i in range(n):
        yield flag.get()
        flag.set(f"set by the generator {i}")


def test_each_call_sees_the_context_of_its_caller() -> None:
    assert run_sync(read_flag()) == "unset"  # the thread's runner starts here
    token = flag.set("overridden")
    try:
        assert run_sync(read_flag()) == "overridden"
        assert list(iter_sync(flags(2))) == ["overridden", "set by the generator 0"]
    finally:
        flag.reset(token)
    assert run_sync(read_flag()) == "unset"


def test_sync_calls_inside_a_running_loop_are_refused() -> None:
    async def inside() -> None:
        with pytest.raises(SyncInAsyncError, match="await"):
            run_sync(read_flag())

    asyncio.run(inside())
