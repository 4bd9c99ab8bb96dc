"""Anthropic's Messages API, through the official ``anthropic`` SDK (extra ``anthropic``).

Key from ``api_key`` or ``ANTHROPIC_API_KEY``; endpoint from ``base_url`` or
``ANTHROPIC_BASE_URL`` (default ``https://api.anthropic.com``). The Messages
API returns no token log-probabilities, so ``top_logprobs`` is ignored.

Provider options (:class:`AnthropicOptions`): ``context_management``, the
API's context-management config (e.g. ``{"edits": [{"type":
"clear_tool_uses_20250919"}]}``), sent in the request body with its beta
header; ``Agent.with_context_management`` sets it on every round. A
compaction edit (``{"type": "compact_20260112"}``) adds its own beta header,
and the ``compaction`` blocks the API then returns are kept on the answer
(:attr:`~semif_agent.llm.responses.Response.compaction_blocks`) and sent back
unchanged, ahead of the text, in the next request of the turn.

A ``cost`` the API reports in its usage is the call's billed cost.
"""

from __future__ import annotations

import json
from collections.abc import AsyncIterator
from typing import Any

from .._assembler import StreamAssembler
from ..messages import Message, ToolSpec
from ..options import ProviderOptions
from ..protocol import ModelRequest
from ..responses import StopReason, StreamChunk
from ..usage import Usage, billed_cost
from ._sdk import SDKProvider

DEFAULT_MAX_TOKENS = 1024
CONTEXT_MANAGEMENT_BETA = "context-management-2025-06-27"
COMPACTION_BETAS = {"compact_20260112": "compact-2026-01-12"}
"""The beta header each compaction edit of ``context_management`` needs, by edit type."""

_STOP_REASONS: dict[str, StopReason] = {
    "end_turn": "stop",
    "stop_sequence": "stop",
    "max_tokens": "max_tokens",
    "tool_use": "tool_use",
    "refusal": "content_filter",
}


class AnthropicOptions(ProviderOptions):
    """The Messages API's own request options."""

    context_management: dict[str, object] | None = None


class AnthropicProvider(SDKProvider):
    """Claude models over the Messages API."""

    provider_name = "anthropic"
    sdk_module = "anthropic"
    extra = "anthropic"
    key_env = "ANTHROPIC_API_KEY"
    base_url_env = "ANTHROPIC_BASE_URL"
    default_base_url = "https://api.anthropic.com"
    supports_logprobs = False
    options_schema = AnthropicOptions

    def _make_client(self) -> Any:
        return self._sdk.AsyncAnthropic(
            api_key=self.api_key,
            base_url=self.base_url,
            timeout=self.timeout,
            max_retries=0,
            default_headers=self.default_headers or None,
        )

    def _params(self, request: ModelRequest) -> dict[str, object]:
        params = _params(self.model_id, request, self.check_options(request))
        betas = [v for k, v in self.default_headers.items() if k.lower() == "anthropic-beta"]
        headers = params.get("extra_headers")
        if betas and isinstance(headers, dict):  # the betas asked for in default_headers stay on
            headers["anthropic-beta"] = ",".join([*betas, headers["anthropic-beta"]])
        return params

    async def _fill(self, client: Any, params: dict[str, object], assembler: StreamAssembler) -> None:
        message = await client.messages.create(**params)
        calls = 0
        for index, block in enumerate(message.content):
            if block.type == "text":
                assembler.text(block.text)
            elif block.type == "tool_use":
                assembler.tool_call(calls, id=block.id, name=block.name, arguments=json.dumps(block.input))
                calls += 1
            elif block.type == "compaction":
                assembler.compaction(index, block.to_dict())
        assembler.usage(_usage(message.usage))
        assembler.stop(_STOP_REASONS.get(message.stop_reason or "", "other"), message.stop_reason)

    async def _feed(
        self, client: Any, params: dict[str, object], assembler: StreamAssembler
    ) -> AsyncIterator[StreamChunk]:
        stream = await client.messages.create(**params, stream=True)
        counts: dict[str, int | None] = {}
        billed: float | None = None
        stop_reason: str | None = None
        call_numbers: dict[int, int] = {}  # content block index -> tool call number
        async with stream:
            async for event in stream:
                kind = event.type
                if kind == "message_start":
                    _merge_usage(counts, event.message.usage)
                    billed = _latest_cost(billed, event.message.usage)
                elif kind == "content_block_start":
                    block = event.content_block
                    if block.type == "text" and block.text:
                        for chunk in assembler.text(block.text):
                            yield chunk
                    elif block.type == "tool_use":
                        call_numbers[event.index] = len(call_numbers)
                        for chunk in assembler.tool_call(call_numbers[event.index], id=block.id, name=block.name):
                            yield chunk
                    elif block.type == "compaction":
                        assembler.compaction(event.index, block.to_dict())
                elif kind == "content_block_delta":
                    delta = event.delta
                    if delta.type == "text_delta":
                        for chunk in assembler.text(delta.text):
                            yield chunk
                    elif delta.type == "input_json_delta" and event.index in call_numbers:
                        for chunk in assembler.tool_call(call_numbers[event.index], arguments=delta.partial_json):
                            yield chunk
                    elif delta.type == "compaction_delta":
                        assembler.compaction(event.index, delta.to_dict())
                elif kind == "message_delta":
                    stop_reason = event.delta.stop_reason or stop_reason
                    _merge_usage(counts, event.usage)
                    billed = _latest_cost(billed, event.usage)
                elif kind == "message_stop":
                    assembler.usage(Usage.from_anthropic(**counts).with_cost(billed))
                    assembler.stop(_STOP_REASONS.get(stop_reason or "", "other"), stop_reason)


_USAGE_FIELDS = ("input_tokens", "output_tokens", "cache_creation_input_tokens", "cache_read_input_tokens")


def _merge_usage(counts: dict[str, int | None], usage: object) -> None:
    """Keep the latest non-null figure of each count (message_delta's are cumulative)."""
    if usage is None:
        return
    for field in _USAGE_FIELDS:
        value = getattr(usage, field, None)
        if value is not None:
            counts[field] = value


def _latest_cost(known: float | None, usage: object) -> float | None:
    """The billed cost a usage report carries, else the one known before."""
    reported = billed_cost(usage) if usage is not None else None
    return known if reported is None else reported


def _usage(usage: object) -> Usage:
    counts: dict[str, int | None] = {}
    _merge_usage(counts, usage)
    return Usage.from_anthropic(**{f: counts.get(f) for f in _USAGE_FIELDS}).with_cost(billed_cost(usage))


def _params(model: str, request: ModelRequest, options: dict[str, object]) -> dict[str, object]:
    params: dict[str, object] = {
        "model": model,
        "max_tokens": request.max_tokens or DEFAULT_MAX_TOKENS,
        "messages": _to_wire(request.messages),
    }
    if request.system:
        params["system"] = request.system
    if request.tools:
        params["tools"] = [_tool_to_wire(t) for t in request.tools]
    if request.tool_choice is not None and (request.tools or request.tool_choice == "none"):
        params["tool_choice"] = _tool_choice_to_wire(request.tool_choice)
    if request.stop:
        params["stop_sequences"] = list(request.stop)
    extra_body: dict[str, object] = {}
    if request.temperature is not None:
        extra_body["temperature"] = request.temperature
    config = options.get("context_management")
    if config is not None:
        extra_body["context_management"] = config
        params["extra_headers"] = {"anthropic-beta": ",".join(_betas(config))}
    if extra_body:
        params["extra_body"] = extra_body
    return params


def _betas(config: object) -> list[str]:
    """The beta flags a ``context_management`` config needs: the feature's, and each compaction edit's."""
    edits = config.get("edits") if isinstance(config, dict) else None
    kinds = [edit.get("type") for edit in edits or () if isinstance(edit, dict)]
    return [CONTEXT_MANAGEMENT_BETA, *dict.fromkeys(COMPACTION_BETAS[k] for k in kinds if k in COMPACTION_BETAS)]


def _tool_to_wire(tool: ToolSpec) -> dict[str, object]:
    return {"name": tool.name, "description": tool.description, "input_schema": tool.input_schema}


def _tool_choice_to_wire(choice: str) -> dict[str, object]:
    if choice in ("auto", "any", "none"):
        return {"type": choice}
    return {"type": "tool", "name": choice}


def _to_wire(messages: tuple[Message, ...]) -> list[dict[str, object]]:
    """Messages API turns: system text goes apart; tool results ride in user turns."""
    wire: list[dict[str, object]] = []
    for message in messages:
        if message.role == "system":
            continue
        if message.role == "user":
            wire.append({"role": "user", "content": message.content})
        elif message.role == "assistant":
            blocks: list[dict[str, object]] = [dict(block) for block in message.compaction_blocks]
            if message.content:
                blocks.append({"type": "text", "text": message.content})
            for call in message.tool_calls:
                blocks.append({"type": "tool_use", "id": call.id, "name": call.name, "input": call.arguments})
            wire.append({"role": "assistant", "content": blocks or message.content})
        else:
            result = {
                "type": "tool_result",
                "tool_use_id": message.tool_call_id,
                "content": message.content,
                "is_error": message.is_error,
            }
            last = wire[-1] if wire else None
            if last and last["role"] == "user" and isinstance(last["content"], list):
                last["content"].append(result)
            else:
                wire.append({"role": "user", "content": [result]})
    return wire
