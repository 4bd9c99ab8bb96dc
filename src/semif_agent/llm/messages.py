"""What we send a model: typed messages, tool specs, tool calls and results.

Provider-neutral. Each provider translates these into its own wire format in
one place (its ``_to_wire`` functions).

>>> from semif_agent.llm.messages import to_messages
>>> [m.role for m in to_messages([{"role": "system", "content": "Be brief."}, "Hi"])]
['system', 'user']
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from functools import cached_property
from typing import Any, Literal, TypeAlias

from .._json import JsonObject
from .errors import InvalidModelRequestError


@dataclass(frozen=True, kw_only=True)
class ToolCall:
    """A model's request to run a tool: ``arguments`` decoded from ``raw_arguments`` (JSON).

    When the model sent arguments that are not a JSON object, ``arguments`` is
    empty and ``raw_arguments`` keeps what it sent.
    """

    id: str
    name: str
    arguments: JsonObject = field(default_factory=dict)
    raw_arguments: str = ""

    @classmethod
    def from_json(cls, *, id: str, name: str, raw_arguments: str) -> ToolCall:
        """Build a call from the argument JSON text a model streamed."""
        try:
            decoded = json.loads(raw_arguments) if raw_arguments.strip() else {}
        except json.JSONDecodeError:
            decoded = None
        arguments = decoded if isinstance(decoded, dict) else None
        call = cls(id=id, name=name, arguments=arguments if arguments is not None else {}, raw_arguments=raw_arguments)
        call.__dict__["arguments_valid"] = arguments is not None  # what its cached property finds, without a 2nd parse
        return call

    @cached_property
    def arguments_valid(self) -> bool:
        """False when the model's argument text was not a JSON object (decided once per call)."""
        if not self.raw_arguments.strip():
            return True
        try:
            return isinstance(json.loads(self.raw_arguments), dict)
        except json.JSONDecodeError:
            return False

    def arguments_json(self) -> str:
        """The arguments as JSON text (what the model sent, if it was valid)."""
        if self.raw_arguments and self.arguments_valid:
            return self.raw_arguments
        return json.dumps(self.arguments, ensure_ascii=False)


@dataclass(frozen=True, kw_only=True)
class SystemMessage:
    """Instructions for the model. Providers with a separate system field get them there."""

    content: str
    role: Literal["system"] = "system"


@dataclass(frozen=True, kw_only=True)
class UserMessage:
    """What the user (or the program, speaking as the user) says."""

    content: str
    role: Literal["user"] = "user"


@dataclass(frozen=True, kw_only=True)
class AssistantMessage:
    """What the model said before: text and/or tool calls.

    ``compaction_blocks`` are the context-compaction blocks the model's API
    returned with this answer (Anthropic's ``{"type": "compaction", ...}``),
    kept as they came so that the provider sends them back unchanged; other
    providers ignore them.
    """

    content: str = ""
    tool_calls: tuple[ToolCall, ...] = ()
    compaction_blocks: tuple[JsonObject, ...] = ()
    role: Literal["assistant"] = "assistant"


@dataclass(frozen=True, kw_only=True)
class ToolResultMessage:
    """The result of one tool call, answering the call with id ``tool_call_id``."""

    tool_call_id: str
    content: str
    is_error: bool = False
    role: Literal["tool"] = "tool"


Message: TypeAlias = SystemMessage | UserMessage | AssistantMessage | ToolResultMessage
MessageLike: TypeAlias = Message | str | Mapping[str, Any]


@dataclass(frozen=True, kw_only=True)
class ToolSpec:
    """A tool the model may call: its name, what it does, and a JSON Schema for its input."""

    name: str
    description: str = ""
    input_schema: JsonObject = field(default_factory=lambda: {"type": "object", "properties": {}})

    def __post_init__(self) -> None:
        if not self.name:
            raise InvalidModelRequestError("ToolSpec.name must be non-empty")


ToolSchema = ToolSpec
"""The name the Agent API gives a :class:`ToolSpec` (``AgentTool.to_tool_schema()`` returns one)."""

ToolChoice: TypeAlias = str
"""``"auto"`` (the model decides), ``"any"`` (it must call some tool), ``"none"``
(it must not), or the name of the one tool it must call."""

TOOL_CHOICE_MODES = ("auto", "any", "none")


def message_to_dict(message: Message) -> dict[str, object]:
    """A message as a JSON-ready dict: its fields by name (what ``dataclasses.asdict`` gives, without the copying)."""
    if message.role == "assistant":
        calls = [
            {"id": c.id, "name": c.name, "arguments": c.arguments, "raw_arguments": c.raw_arguments}
            for c in message.tool_calls
        ]
        item: dict[str, object] = {"content": message.content, "tool_calls": calls, "role": "assistant"}
        if message.compaction_blocks:
            item["compaction_blocks"] = [dict(block) for block in message.compaction_blocks]
        return item
    if message.role == "tool":
        return {
            "tool_call_id": message.tool_call_id,
            "content": message.content,
            "is_error": message.is_error,
            "role": "tool",
        }
    return {"content": message.content, "role": message.role}


def to_messages(messages: MessageLike | Iterable[MessageLike]) -> list[Message]:
    """Typed messages from typed ones, plain strings (user turns) or ``{"role", "content"}`` dicts."""
    if isinstance(messages, (str, Mapping, SystemMessage, UserMessage, AssistantMessage, ToolResultMessage)):
        messages = [messages]
    return [_to_message(m) for m in messages]


def _to_message(value: MessageLike) -> Message:
    if isinstance(value, (SystemMessage, UserMessage, AssistantMessage, ToolResultMessage)):
        return value
    if isinstance(value, str):
        return UserMessage(content=value)
    if isinstance(value, Mapping):
        role = value.get("role")
        content = value.get("content") or ""
        if not isinstance(content, str):
            raise InvalidModelRequestError(f"message content must be a string, got {type(content).__name__}")
        if role == "system":
            return SystemMessage(content=content)
        if role == "user":
            return UserMessage(content=content)
        if role == "assistant":
            calls = tuple(_to_tool_call(c) for c in value.get("tool_calls") or ())
            blocks = tuple(dict(b) for b in value.get("compaction_blocks") or () if isinstance(b, Mapping))
            return AssistantMessage(content=content, tool_calls=calls, compaction_blocks=blocks)
        if role == "tool":
            return ToolResultMessage(
                tool_call_id=str(value.get("tool_call_id", "")),
                content=content,
                is_error=bool(value.get("is_error", False)),
            )
        raise InvalidModelRequestError(f"unknown message role {role!r} (system, user, assistant or tool)")
    raise InvalidModelRequestError(f"cannot use {type(value).__name__} as a message")


def _to_tool_call(value: ToolCall | Mapping[str, Any]) -> ToolCall:
    if isinstance(value, ToolCall):
        return value
    arguments = value.get("arguments") or {}
    if isinstance(arguments, str):
        return ToolCall.from_json(id=str(value.get("id", "")), name=str(value["name"]), raw_arguments=arguments)
    return ToolCall(id=str(value.get("id", "")), name=str(value["name"]), arguments=dict(arguments))


def to_tools(tools: Iterable[ToolSpec | Mapping[str, Any]] | None) -> tuple[ToolSpec, ...]:
    """Tool specs from specs or ``{"name", "description", "input_schema"}`` dicts."""
    out = []
    for tool in tools or ():
        if isinstance(tool, ToolSpec):
            out.append(tool)
        elif isinstance(tool, Mapping):
            schema = tool.get("input_schema") or tool.get("parameters") or {"type": "object", "properties": {}}
            out.append(
                ToolSpec(
                    name=str(tool["name"]), description=str(tool.get("description", "")), input_schema=dict(schema)
                )
            )
        else:
            # Anything with the ToolSpec attributes (e.g. an agent tool's schema) will do.
            out.append(ToolSpec(name=tool.name, description=tool.description, input_schema=dict(tool.input_schema)))
    return tuple(out)


def check_tool_choice(tool_choice: ToolChoice | None, tools: tuple[ToolSpec, ...]) -> ToolChoice | None:
    """``tool_choice`` checked against ``tools``: a named tool must be one of them."""
    if tool_choice is None:
        return None
    if not isinstance(tool_choice, str) or not tool_choice:
        raise InvalidModelRequestError("tool_choice is 'auto', 'any', 'none' or a tool name")
    if tool_choice in TOOL_CHOICE_MODES:
        if tool_choice == "any" and not tools:
            raise InvalidModelRequestError("tool_choice='any' needs at least one tool")
        return tool_choice
    if tool_choice not in {t.name for t in tools}:
        raise InvalidModelRequestError(f"tool_choice names {tool_choice!r}, which is not one of the tools given")
    return tool_choice
