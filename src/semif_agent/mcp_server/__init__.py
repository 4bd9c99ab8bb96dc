"""``semif mcp``: the workspace's skills as an MCP server (the official ``mcp`` SDK), over stdio or HTTP.

It is a thin face over :class:`semif_agent.Router`: the same tree, strategy
and learned router ``semif run`` uses; every ``find_skills`` is a logged
decision, and what the client loads or runs after it teaches the router.
"""

from .server import SkillServer, parse_skill_uri, skill_uri

__all__ = ["SkillServer", "skill_uri", "parse_skill_uri"]
