"""Helpers for the agent tests: scripted tool-call replies, draining streams, picking events."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from typing import Any

from semif_agent.llm import ScriptedReply


def calls(
    *specs: tuple[str, dict[str, Any]] | tuple[str, dict[str, Any], str], text: str = "", **kw: Any
) -> ScriptedReply:
    """A scripted reply asking for tool calls: ``calls(("add", {"a": 1}), ("add", {"a": 2}, "id"))``."""
    tool_calls = []
    for number, spec in enumerate(specs):
        name, arguments = spec[0], spec[1]
        call_id = spec[2] if len(spec) > 2 else f"call_{name}_{number}"
        tool_calls.append({"id": call_id, "name": name, "arguments": arguments})
    return ScriptedReply(text=text, tool_calls=tool_calls, **kw)


def collect(agen_or_iter: Any) -> list[Any]:
    """All items of a sync iterator, or of an async one (run to completion on a fresh loop)."""
    if hasattr(agen_or_iter, "__anext__"):

        async def drain(items: AsyncIterator[Any]) -> list[Any]:
            return [item async for item in items]

        return asyncio.run(drain(agen_or_iter))
    return list(agen_or_iter)


def types(events: list[Any]) -> list[str]:
    return [e.type for e in events]


def of_type(events: list[Any], kind: str) -> list[Any]:
    return [e for e in events if e.type == kind]
