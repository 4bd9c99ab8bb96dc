"""The errors the agent raises, rooted in :class:`~semif_agent.errors.SemifError`.

::

    SemifError
    ├── UserError
    │   ├── AgentConfigError          a bad agent or tool setup (also a ValueError)
    │   │   ├── ToolNameCollisionError two tools configured under one name
    │   │   ├── ToolDefinitionError   @tool cannot describe a function
    │   │   ├── SkillNameCollisionError two skills registered under one name
    │   │   └── SubagentNestingError  a subagent that would start subagents of its own
    │   └── UnknownSkillError
    │       └── SkillNotRegisteredError no skill of that name in the agent's registry (also a KeyError)
    └── AgentError                    a turn failed at run time
        ├── OutputMissingError        run()/arun(): no valid structured output
        └── SkillActivationError      a skill's instructions cannot be read to activate it

A model provider's failure (:class:`~semif_agent.llm.ProviderError`) ends a
streamed turn with a ``TurnFinished`` whose diagnostics carry it;
``run``/``arun`` and ``chat``/``achat`` raise the provider error itself, so
callers can tell a rate limit from a refused key. Tool failures never
raise: the model sees them as error results.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from ..errors import SemifError, UnknownSkillError, UserError

if TYPE_CHECKING:
    from .usage import TurnDiagnostics


class AgentConfigError(UserError, ValueError):
    """The agent or a tool is set up wrongly (found when it is configured, not mid-turn)."""


class ToolNameCollisionError(AgentConfigError):
    """Two tools were configured under one name: tool names are one namespace."""


class ToolDefinitionError(AgentConfigError):
    """``@tool`` cannot build a tool from this function (no name, bad signature, ...)."""


class SkillNameCollisionError(AgentConfigError):
    """A skill name is already registered with this agent: skill names are one namespace."""


class SubagentNestingError(AgentConfigError):
    """Subagents cannot have subagents of their own (found at registration, or again at call time)."""


class SkillNotRegisteredError(UnknownSkillError, KeyError):
    """No skill of that name is registered with the agent (also a ``KeyError``, as a mapping lookup)."""

    def __str__(self) -> str:  # KeyError would quote the message
        return str(self.args[0]) if self.args else ""


class AgentError(SemifError):
    """A turn failed at run time."""


class OutputMissingError(AgentError):
    """The turn ended without structured output that validates.

    ``diagnostics`` is the turn's :class:`~semif_agent.agent.TurnDiagnostics`
    (``stopped_by`` says why: ``output_missing``, or the cut that ended the
    turn first).
    """

    def __init__(self, message: str, *, diagnostics: TurnDiagnostics | None = None) -> None:
        self.diagnostics = diagnostics
        super().__init__(message)


class SkillActivationError(AgentError):
    """A registered skill could not be activated (its SKILL.md can no longer be read)."""
