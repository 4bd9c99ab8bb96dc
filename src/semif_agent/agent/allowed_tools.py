"""The ``allowed-tools`` gate: while an active skill restricts tools, calls to the others are refused.

The patterns of all restricting active skills count together. A pattern is
matched on the tool name, case-insensitively, with ``*`` wildcards; an
argument specifier (``Bash(git:*)``) is matched on its tool name only. The
session builds the gate each round (:meth:`~._session.AgentSession.configure`)
with the names exempt in that round: the meta-tools and the active skills'
own tools, each exempt only while the toolset that provides it holds the
name, so a tool of another toolset (an MCP server's ``task``, say) that takes
a meta-tool's name is gated like any other.
"""

from __future__ import annotations

import fnmatch
from collections.abc import Iterable, Mapping
from typing import Any

from .hooks import HookResult, PreToolHook


def allowed_tools_hook(restrictions: Mapping[str, tuple[str, ...]], exempt: Iterable[str]) -> PreToolHook:
    """The pre-hook that refuses tools no restricting active skill allows (those named in ``exempt`` always pass)."""
    patterns = tuple(dict.fromkeys(p for patterns in restrictions.values() for p in patterns))
    bases = tuple(p.split("(", 1)[0].strip().casefold() for p in patterns)
    free = frozenset(exempt)
    skills = ", ".join(repr(name) for name in restrictions)
    verb = "is" if len(restrictions) == 1 else "are"

    def allowed_tools_gate(name: str, tool_input: dict[str, Any]) -> HookResult | None:
        if name in free or any(fnmatch.fnmatchcase(name.casefold(), base) for base in bases):
            return None
        return HookResult(
            decision="deny",
            reason=(
                f"tool {name!r} is not allowed while skill {skills} {verb} active "
                f"(allowed-tools: {' '.join(patterns)}); use one of the allowed tools."
            ),
        )

    return allowed_tools_gate
