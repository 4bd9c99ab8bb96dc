"""OpenAI's Chat Completions API and every server that speaks it (extra ``openai``).

Through the official ``openai`` SDK. Key from ``api_key`` or ``OPENAI_API_KEY``;
endpoint from ``base_url`` or ``OPENAI_BASE_URL`` (default
``https://api.openai.com/v1``). Any OpenAI-compatible server works by base
URL; a key is required only at OpenAI's own endpoint. A cost the server bills
in its usage report (OpenRouter's ``usage.cost``) is the call's cost. Presets
for common servers:

===========  ==================================  ======================
name         default base URL                    key
===========  ==================================  ======================
``ollama``   ``http://localhost:11434/v1``       none (``OLLAMA_BASE_URL`` for the URL)
``vllm``     ``http://localhost:8000/v1``        ``VLLM_API_KEY`` if the server wants one
``llamacpp`` ``http://localhost:8080/v1``        ``LLAMACPP_API_KEY`` if the server wants one
``openrouter`` ``https://openrouter.ai/api/v1``  ``OPENROUTER_API_KEY`` (required)
===========  ==================================  ======================

Token log-probabilities (``top_logprobs``) are requested with ``logprobs=true``
and returned on the :class:`~semif_agent.llm.responses.Response`.
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Mapping
from typing import Any

from .._assembler import StreamAssembler
from ..errors import ResponseError
from ..messages import Message, ToolSpec
from ..pricing import ModelPrice
from ..protocol import ModelRequest
from ..responses import StopReason, StreamChunk, TokenLogprob, TopLogprob
from ..usage import Usage, billed_cost
from ._sdk import SDKProvider

_STOP_REASONS: dict[str, StopReason] = {
    "stop": "stop",
    "length": "max_tokens",
    "tool_calls": "tool_use",
    "function_call": "tool_use",
    "content_filter": "content_filter",
}


class OpenAIProvider(SDKProvider):
    """Chat Completions models, at OpenAI or any compatible server.

    ``max_tokens_field`` names the request field for the token cap
    (``"max_tokens"``, understood by compatible servers, or
    ``"max_completion_tokens"`` for OpenAI's reasoning models);
    ``stream_usage=False`` drops ``stream_options`` for servers that reject it.
    """

    provider_name = "openai"
    sdk_module = "openai"
    extra = "openai"
    key_env = "OPENAI_API_KEY"
    base_url_env = "OPENAI_BASE_URL"
    default_base_url = "https://api.openai.com/v1"
    supports_logprobs = True

    def __init__(
        self,
        model_id: str,
        *,
        api_key: str | None = None,
        base_url: str | None = None,
        timeout: float | None = None,
        pricing: Mapping[str, ModelPrice | Mapping[str, object]] | None = None,
        default_headers: Mapping[str, str] | None = None,
        max_tokens_field: str = "max_tokens",
        stream_usage: bool = True,
    ) -> None:
        super().__init__(
            model_id,
            api_key=api_key,
            base_url=base_url,
            timeout=timeout,
            pricing=pricing,
            default_headers=default_headers,
        )
        self.max_tokens_field = max_tokens_field
        self.stream_usage = stream_usage

    def _make_client(self) -> Any:
        return self._sdk.AsyncOpenAI(
            api_key=self.api_key,
            base_url=self.base_url,
            timeout=self.timeout,
            max_retries=0,
            default_headers=self.default_headers or None,
        )

    def _params(self, request: ModelRequest) -> dict[str, object]:
        self.check_options(request)  # Chat Completions declares no provider options
        params: dict[str, object] = {"model": self.model_id, "messages": _to_wire(request.messages)}
        if request.tools:
            params["tools"] = [_tool_to_wire(t) for t in request.tools]
        if request.tool_choice is not None and (request.tools or request.tool_choice == "none"):
            params["tool_choice"] = _tool_choice_to_wire(request.tool_choice)
        if request.max_tokens is not None:
            params[self.max_tokens_field] = request.max_tokens
        if request.temperature is not None:
            params["temperature"] = request.temperature
        if request.stop:
            params["stop"] = list(request.stop)
        if request.top_logprobs is not None:
            params["logprobs"] = True
            params["top_logprobs"] = request.top_logprobs
        return params

    async def _fill(self, client: Any, params: dict[str, object], assembler: StreamAssembler) -> None:
        completion = await client.chat.completions.create(**params)
        if not completion.choices:
            raise ResponseError("the answer has no choices", provider=self.provider_name, model=self.model_id)
        choice = completion.choices[0]
        message = choice.message
        logprobs = _logprobs(choice.logprobs)
        if logprobs is not None:
            assembler.add_logprobs(logprobs)
        if message.content:
            assembler.text(message.content)
        for index, call in enumerate(message.tool_calls or ()):
            function = getattr(call, "function", None)
            if function is not None:
                assembler.tool_call(index, id=call.id, name=function.name, arguments=function.arguments or "")
        if completion.usage is not None:
            assembler.usage(_usage(completion.usage))
        reason = choice.finish_reason
        assembler.stop(_STOP_REASONS.get(reason or "", "other"), reason)

    async def _feed(
        self, client: Any, params: dict[str, object], assembler: StreamAssembler
    ) -> AsyncIterator[StreamChunk]:
        if self.stream_usage:
            params = {**params, "stream_options": {"include_usage": True}}
        stream = await client.chat.completions.create(**params, stream=True)
        finish_reason: str | None = None
        async with stream:
            async for event in stream:
                if event.usage is not None:
                    assembler.usage(_usage(event.usage))
                for choice in event.choices:
                    if choice.index != 0:
                        continue
                    delta = choice.delta
                    logprobs = _logprobs(choice.logprobs)
                    if delta is not None and (delta.content or logprobs):
                        for chunk in assembler.text(delta.content or "", logprobs):
                            yield chunk
                    for call in (delta.tool_calls if delta is not None else None) or ():
                        function = call.function
                        for chunk in assembler.tool_call(
                            call.index,
                            id=call.id,
                            name=function.name if function else None,
                            arguments=(function.arguments or "") if function else "",
                        ):
                            yield chunk
                    if choice.finish_reason:
                        finish_reason = choice.finish_reason
        if finish_reason is not None:
            assembler.stop(_STOP_REASONS.get(finish_reason, "other"), finish_reason)


class OllamaProvider(OpenAIProvider):
    """A local Ollama server (its OpenAI-compatible endpoint)."""

    provider_name = "ollama"
    key_env = "OLLAMA_API_KEY"
    base_url_env = "OLLAMA_BASE_URL"
    default_base_url = "http://localhost:11434/v1"
    key_required = False


class VLLMProvider(OpenAIProvider):
    """A vLLM server."""

    provider_name = "vllm"
    key_env = "VLLM_API_KEY"
    base_url_env = "VLLM_BASE_URL"
    default_base_url = "http://localhost:8000/v1"
    key_required = False


class LlamaCppProvider(OpenAIProvider):
    """llama.cpp's ``llama-server``."""

    provider_name = "llamacpp"
    key_env = "LLAMACPP_API_KEY"
    base_url_env = "LLAMACPP_BASE_URL"
    default_base_url = "http://localhost:8080/v1"
    key_required = False


class OpenRouterProvider(OpenAIProvider):
    """OpenRouter (model ids like ``anthropic/claude-haiku-4-5``)."""

    provider_name = "openrouter"
    key_env = "OPENROUTER_API_KEY"
    base_url_env = "OPENROUTER_BASE_URL"
    default_base_url = "https://openrouter.ai/api/v1"


def _usage(usage: Any) -> Usage:
    details = getattr(usage, "prompt_tokens_details", None)
    cached = getattr(details, "cached_tokens", None) if details is not None else None
    counts = Usage.from_openai(
        prompt_tokens=usage.prompt_tokens, completion_tokens=usage.completion_tokens, cached_tokens=cached
    )
    return counts.with_cost(billed_cost(usage))


def _logprobs(logprobs: object) -> list[TokenLogprob] | None:
    content = getattr(logprobs, "content", None) if logprobs is not None else None
    if content is None:
        return None
    return [
        TokenLogprob(
            token=item.token,
            logprob=float(item.logprob),
            top=tuple(TopLogprob(token=t.token, logprob=float(t.logprob)) for t in (item.top_logprobs or ())),
        )
        for item in content
    ]


def _tool_to_wire(tool: ToolSpec) -> dict[str, object]:
    return {
        "type": "function",
        "function": {"name": tool.name, "description": tool.description, "parameters": tool.input_schema},
    }


def _tool_choice_to_wire(choice: str) -> Any:
    if choice == "any":
        return "required"
    if choice in ("auto", "none"):
        return choice
    return {"type": "function", "function": {"name": choice}}


def _to_wire(messages: tuple[Message, ...]) -> list[dict[str, object]]:
    wire: list[dict[str, object]] = []
    for message in messages:
        if message.role == "system" or message.role == "user":
            wire.append({"role": message.role, "content": message.content})
        elif message.role == "assistant":
            item: dict[str, object] = {"role": "assistant", "content": message.content or None}
            if message.tool_calls:
                item["tool_calls"] = [
                    {"id": c.id, "type": "function", "function": {"name": c.name, "arguments": c.arguments_json()}}
                    for c in message.tool_calls
                ]
            wire.append(item)
        else:
            content = f"Error: {message.content}" if message.is_error else message.content
            wire.append({"role": "tool", "tool_call_id": message.tool_call_id, "content": content})
    return wire
