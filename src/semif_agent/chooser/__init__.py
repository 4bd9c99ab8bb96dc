"""The chooser: one library face over the workspace's skills, :class:`Router` (find, load, run, report).

The command line, the Agent, the web view and the MCP server (``semif mcp``)
choose skills through the same tree and strategy; whatever a client picks
after a ``find`` is logged, and teaches the router (see :mod:`._picks`).
"""

from .results import Candidate, LoadedSkill, RunOutcome, Shortlist
from .router import MAX_REQUEST_BYTES, Router

__all__ = ["Router", "Shortlist", "Candidate", "LoadedSkill", "RunOutcome", "MAX_REQUEST_BYTES"]
