"""The errors the agent raises, rooted in :class:`~semif_agent.errors.SemifError`.

::

    SemifError
    ├── UserError
    │   └── AgentConfigError          a bad agent or tool setup (also a ValueError)
    │       ├── ToolNameCollisionError two tools configured under one name
    │       └── ToolDefinitionError   @tool cannot describe a function
    └── AgentError                    a turn failed at run time
        └── OutputMissingError        run()/arun(): no valid structured output

A model provider's failure (:class:`~semif_agent.llm.ProviderError`) ends a
streamed turn with a ``TurnFinished`` whose diagnostics carry it;
``run``/``arun`` and ``chat``/``achat`` raise the provider error itself, so
callers can tell a rate limit from a refused key. Tool failures never
raise: the model sees them as error results.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from ..errors import SemifError, UserError

if TYPE_CHECKING:
    from .usage import TurnDiagnostics


class AgentConfigError(UserError, ValueError):
    """The agent or a tool is set up wrongly (found when it is configured, not mid-turn)."""


class ToolNameCollisionError(AgentConfigError):
    """Two tools were configured under one name: tool names are one namespace."""


class ToolDefinitionError(AgentConfigError):
    """``@tool`` cannot build a tool from this function (no name, bad signature, ...)."""


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
