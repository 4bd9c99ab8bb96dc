"""MCP servers as the agent's tools: the public name of :mod:`semif_agent.agent.toolkits.mcp` (the same objects, for code written against it)."""

from .toolkits.mcp import *  # noqa: F403 - this module re-exports that one under its public name
from .toolkits.mcp import __all__  # noqa: F401 - the same public names
