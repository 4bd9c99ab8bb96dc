"""The ``allowed-tools`` gate: while an active skill restricts tools, calls it does not allow are refused.

Each restricting active skill is a restriction of its own: a call runs only
when every one of them allows it (their intersection), so a second skill
declaring ``allowed-tools: "*"`` cannot lift the first one's. A skill allows
a call when one of its patterns does:

- ``Read``: any call of the tool named ``Read``. Names are compared exactly
  (``read`` and ``READ`` are other tools); ``*`` and ``?`` are wildcards
  (``mcp__*``). ``Read(*)`` means the same as ``Read``.
- ``Bash(git status:*)``: a call whose argument starts with ``git status``,
  and whose rest holds no shell control character (``;``, ``&``, ``|``,
  a backquote, ``$(``, ``<``, ``>`` or a line break) and no ``..`` path
  segment, so ``git status; rm -rf ~`` is not a ``git status`` command and
  ``Read(docs/:*)`` does not reach ``docs/../secrets.env``. The argument is
  matched as text: a path is not resolved (a link under ``docs/`` is not
  followed).
- ``Bash(npm test)``: a call whose argument is exactly ``npm test``.

"The" argument of a call is its ``command`` when the tool's input schema has
one (shell tools), else its one required text property (``path`` of a
``Read(path)`` tool); a tool with neither, or a call whose argument is not
text, is refused by every pattern with parentheses. A pattern the gate cannot
read (``Bash(git``, ``Bash()``) allows nothing.

The session builds the gate each round (:meth:`~._session.AgentSession.configure`)
with the names exempt in that round: the meta-tools and the active skills'
own tools, each exempt only while the toolset that provides it holds the
name, so a tool of another toolset (an MCP server's ``task``, say) that takes
a meta-tool's name is gated like any other.
"""

from __future__ import annotations

import fnmatch
import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Any

from ..catalog.spec import tool_pattern_parts
from .hooks import HookResult, PreToolHook

_SHELL_CONTROL = re.compile(r"[;&|`<>\n\r]|\$\(")
_PARENT = re.compile(r"(?:^|[/\\\s])\.\.(?:$|[/\\\s])")  # a '..' path segment
_SHOWN = 200  # characters of an argument quoted in a refusal


@dataclass(frozen=True, slots=True)
class ToolPattern:
    """One ``allowed-tools`` pattern, read: a tool-name glob and what it allows of the argument.

    ``argument`` is None when any call of the tool is allowed; else the exact
    argument, or (``prefix``) what the argument must start with. A pattern
    that cannot be read has ``name`` empty and allows nothing.
    """

    name: str
    argument: str | None = None
    prefix: bool = False

    @classmethod
    def parse(cls, text: str) -> ToolPattern:
        parts = tool_pattern_parts(text)
        if parts is None:
            return cls(name="")
        name, argument = parts
        if argument is None or argument == "*":
            return cls(name=name)
        if argument.endswith(":*"):
            return cls(name=name, argument=argument[:-2], prefix=True)
        return cls(name=name, argument=argument)

    def names(self, tool: str) -> bool:
        return bool(self.name) and fnmatch.fnmatchcase(tool, self.name)

    def allows(self, value: str) -> bool:
        """Whether the argument ``value`` is one this pattern allows (its tool name already matched)."""
        if self.argument is None:
            return True
        if not self.prefix:
            return value == self.argument
        if not value.startswith(self.argument):
            return False
        rest = value[len(self.argument) :]
        return not _SHELL_CONTROL.search(rest) and not _PARENT.search(rest)


def primary_argument(schema: Mapping[str, Any] | None) -> str | None:
    """The property an argument pattern is matched on: ``command`` if the schema has one, else its one
    required text property; None when it has neither."""
    properties = (schema or {}).get("properties")
    if not isinstance(properties, Mapping):
        return None
    if "command" in properties:
        return "command"
    required = (schema or {}).get("required")
    if not isinstance(required, list):
        return None
    texts = [
        key
        for key in dict.fromkeys(required)
        if isinstance(key, str) and isinstance(properties.get(key), Mapping) and properties[key].get("type") == "string"
    ]
    return texts[0] if len(texts) == 1 else None


@dataclass(frozen=True, slots=True)
class _Refusal:
    """Why one skill refuses a call: ``what`` the call is, said for the model."""

    skill: str
    patterns: tuple[str, ...]
    what: str
    by_argument: bool


def _refusal(
    skill: str,
    texts: tuple[str, ...],
    patterns: tuple[ToolPattern, ...],
    name: str,
    tool_input: Mapping[str, Any],
    argument: str | None,
) -> _Refusal | None:
    """None when the skill's patterns allow the call, else why not."""
    matching = [p for p in patterns if p.names(name)]
    if not matching:
        return _Refusal(skill, texts, f"tool {name!r}", by_argument=False)
    if any(p.argument is None for p in matching):
        return None
    if argument is None:
        what = f"tool {name!r} (it has no 'command' and not one required text argument to match the pattern against)"
        return _Refusal(skill, texts, what, by_argument=True)
    value = tool_input.get(argument)
    if not isinstance(value, str):
        return _Refusal(skill, texts, f"tool {name!r} with a {argument} that is not text", by_argument=True)
    if any(p.allows(value) for p in matching):
        return None
    shown = value if len(value) <= _SHOWN else value[:_SHOWN] + "..."
    return _Refusal(skill, texts, f"tool {name!r} with {argument} {shown!r}", by_argument=True)


def allowed_tools_hook(
    restrictions: Mapping[str, tuple[str, ...]],
    exempt: Iterable[str],
    schemas: Mapping[str, Mapping[str, Any]] | None = None,
) -> PreToolHook:
    """The pre-hook that refuses a call unless every restricting active skill allows it.

    ``restrictions`` holds each skill's patterns by skill name; the tools named in ``exempt`` always pass;
    ``schemas`` holds the input schema of each tool of the round, by name, to find the argument a pattern
    in parentheses is matched on (a tool without one is refused by such patterns).
    """
    parsed = {
        skill: (tuple(texts), tuple(ToolPattern.parse(t) for t in texts)) for skill, texts in restrictions.items()
    }
    free = frozenset(exempt)
    known = dict(schemas or {})

    def allowed_tools_gate(name: str, tool_input: dict[str, Any]) -> HookResult | None:
        if name in free:
            return None
        argument = primary_argument(known.get(name))
        refusals = [
            refusal
            for skill, (texts, patterns) in parsed.items()
            if (refusal := _refusal(skill, texts, patterns, name, tool_input, argument)) is not None
        ]
        if not refusals:
            return None
        return HookResult(decision="deny", reason=_reason(refusals))

    return allowed_tools_gate


def _reason(refusals: list[_Refusal]) -> str:
    """The refusal the model reads: the call, the skills that refuse it and their patterns."""
    by_argument = [r for r in refusals if r.by_argument]
    what = (by_argument or refusals)[0].what
    if len(refusals) == 1:
        only = refusals[0]
        who = f"skill {only.skill!r} is active (allowed-tools: {' '.join(only.patterns)})"
    else:
        listed = ", ".join(f"{r.skill!r} (allowed-tools: {' '.join(r.patterns)})" for r in refusals)
        who = f"skills {listed} are active; a call must be allowed by each"
    advice = "call it only as a pattern in parentheses allows" if by_argument else "use one of the allowed tools"
    return f"{what} is not allowed while {who}; {advice}."
