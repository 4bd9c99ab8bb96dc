"""``semif mcp``: the workspace's skills as an MCP server (the official ``mcp`` SDK), over stdio or HTTP.

It is a thin face over :class:`semif_agent.Router`: the same tree, strategy
and learned router ``semif run`` uses; every ``find_skills`` is a logged
decision, and what the client loads or runs after it teaches the router.
Over HTTP each client may have a token of its own (:mod:`.tokens`, which
needs no SDK: ``semif mcp token`` works without the mcp extra).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from .._lazy import lazy_namespace

_EXPORTS = {"SkillServer": ".server", "skill_uri": ".server", "parse_skill_uri": ".server"}

__all__ = ["SkillServer", "skill_uri", "parse_skill_uri"]

if TYPE_CHECKING:  # what a type checker sees: the same names, from the same module
    from .server import SkillServer as SkillServer
    from .server import parse_skill_uri as parse_skill_uri
    from .server import skill_uri as skill_uri
else:  # at run time each name is imported on first use (the SDK with it)
    __getattr__, __dir__ = lazy_namespace(__name__, _EXPORTS, globals())
