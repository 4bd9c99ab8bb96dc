"""semif-agent: hold thousands of skills, pick the right one fast, run it safely, judge it, learn.

The kernel (``semif_agent.skills``, ``semif_agent.engine``) imports only the
standard library; everything else is imported on first use.
"""

from __future__ import annotations

from ._lazy import lazy_namespace

__version__ = "0.1.0"

# public name -> module that defines it (imported lazily on first access)
_EXPORTS = {
    # the skill contract
    "Request": "semif_agent.skills",
    "ActionContext": "semif_agent.skills",
    "Prediction": "semif_agent.skills",
    "ActionResult": "semif_agent.skills",
    # decisions and engines
    "DecisionRequest": "semif_agent.engine",
    "DecisionResult": "semif_agent.engine",
    "Option": "semif_agent.engine",
    "Engine": "semif_agent.engine",
    "ScriptedEngine": "semif_agent.engine",
    "create_engine": "semif_agent.engine",
    "register_engine": "semif_agent.engine",
    "DecisionLog": "semif_agent.records",
    # errors
    "SemifError": "semif_agent.errors",
    "UserError": "semif_agent.errors",
    # workspaces, and the chooser over their skills
    "Workspace": "semif_agent.workspace",
    "Router": "semif_agent.chooser",
    # the agent
    "Agent": "semif_agent.agent",
    "AgentTool": "semif_agent.agent",
    "tool": "semif_agent.agent",
    "UsageLimits": "semif_agent.agent",
}

__all__ = sorted(_EXPORTS)

__getattr__, __dir__ = lazy_namespace(__name__, _EXPORTS, globals())
