"""The errors the agent raises; the whole tree is drawn in :mod:`semif_agent.errors`.

A bad setup is an :class:`AgentConfigError` when it is configured; a
pydantic-built object given bad fields is an :class:`ArgumentValidationError`
(still a pydantic ``ValidationError``); a turn that fails at run time is an
:class:`AgentError`. A model provider's failure
(:class:`~semif_agent.llm.ProviderError`) ends a streamed turn with a
``TurnFinished`` whose diagnostics carry it; ``run``/``arun`` and
``chat``/``achat`` raise the provider error itself, so callers can tell a
rate limit from a refused key. Tool failures never raise: the model sees
them as error results.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from pydantic import ValidationError

from ..errors import InvalidArgumentError, SemifError, UnknownSkillError

if TYPE_CHECKING:
    from .usage import TurnDiagnostics


class ArgumentValidationError(InvalidArgumentError, ValidationError):
    """A pydantic-built object (``Skill``, ``AgentTool``, ``UsageLimits``, an event...) refused its fields.

    Also pydantic's ``ValidationError``: :meth:`errors` lists each problem,
    and the error pydantic raised is the ``__cause__``. Its message is one
    line: ``Skill: name: skill name 'two words' must be 1-64 characters...``.
    """

    @classmethod
    def from_validation(cls, exc: ValidationError) -> ArgumentValidationError:
        """The same problems as ``exc``, as our error (raise it ``from exc``)."""
        lines: list[Any] = exc.errors()
        try:
            return cls.from_exception_data(exc.title, lines)
        except KeyError:  # an error type pydantic does not know (a validator's own): keep its message
            from pydantic_core import PydanticCustomError

            lines = [
                {"type": PydanticCustomError(line["type"], line["msg"]), "loc": line["loc"], "input": line["input"]}
                for line in lines
            ]
            return cls.from_exception_data(exc.title, lines)

    def __str__(self) -> str:
        problems = []
        for line in self.errors(include_url=False):
            where = ".".join(str(part) for part in line["loc"])
            message = line["msg"].removeprefix("Value error, ")
            problems.append(f"{where}: {message}" if where else message)
        return f"{self.title}: {'; '.join(problems)}"


class AgentConfigError(InvalidArgumentError):
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
