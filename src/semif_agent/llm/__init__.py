"""Everything that talks to a language model: one provider protocol, providers, decisions.

>>> from semif_agent.llm import ScriptedProvider
>>> ScriptedProvider(["Hello!"]).invoke("Hi").text
'Hello!'

Providers
    Every provider answers one :class:`ModelRequest` (``request`` and
    ``request_stream``: the :class:`LLMProvider` protocol); ``invoke``,
    ``stream``, ``ainvoke`` and ``astream`` take keyword arguments and build
    the request for you. :func:`as_provider` puts a provider written before
    the seam on it. Options only some providers take (Anthropic's
    ``context_management``) are declared by each provider
    (:class:`ProviderOptions`) and refused by the others
    (:class:`UnsupportedOptionError`).
    :func:`create_provider` builds ``"provider/model"`` (``anthropic``, ``openai``,
    the OpenAI-compatible ``ollama``, ``vllm``, ``llamacpp``, ``openrouter``, and
    ``scripted``), with retries and fallbacks; :func:`register_provider` adds
    your own. The SDKs are optional extras (``pip install 'semif-agent[openai]'``,
    ``[anthropic]``, or ``[all]``), imported only when a provider is built.
    Keys and endpoints come from arguments, ``semif.toml``, or the environment
    (``OPENAI_API_KEY``, ``OPENAI_BASE_URL``, ``ANTHROPIC_API_KEY``,
    ``ANTHROPIC_BASE_URL``).

Decisions
    :class:`LLMEngine` answers SemIf decisions (the engine ``"llm"``);
    :func:`create_judge` builds the assess step's judge.

Testing
    :class:`ScriptedProvider` plays back replies; :func:`override_provider`
    swaps what :func:`create_provider` returns; :func:`block_model_requests`
    refuses calls to non-loopback endpoints.

Settings (``semif.toml``)::

    [engine]
    name = "llm"
    model = "openai/gpt-4o-mini"     # provider/model; `semif run --model` overrides it
    mode = "auto"                    # auto | logprobs | tool: how answers are read
    temperature = 0.0
    top_logprobs = 20                # alternatives asked for per token (max 20)
    fallbacks = ["anthropic/claude-haiku-4-5"]   # tried in order when a call fails
    # any [provider] connection key may also be set here, for the engine's model

    [engine.judge]                   # overrides for the assess step's judge
    model = "anthropic/claude-haiku-4-5"

    [provider]                       # what every model call uses by default
    model = "openai/gpt-4o-mini"     # used when [engine] names no model
    api_key_env = "OPENAI_API_KEY"   # the variable holding the key (environment, else the secrets file)
    base_url = "http://127.0.0.1:11434/v1"   # any OpenAI-compatible server
    timeout = 60                     # seconds per request
    max_retries = 2                  # on 429, 5xx, dropped connections, timeouts
    retry_initial_delay = 0.5        # seconds, doubled per retry (retry-after wins)
    retry_max_delay = 8
    fallbacks = []                   # as [engine] fallbacks, for everything

    [provider.anthropic]             # per provider: used by that provider, also as a fallback
    api_key_env = "ANTHROPIC_API_KEY"
    base_url = "https://api.anthropic.com"

    [provider.pricing."openai/gpt-4o-mini"]  # dollars per million tokens (overrides the table)
    input = 0.15
    output = 0.60
    cache_read = 0.075

Per-provider tables accept ``api_key_env``, ``base_url``,
``timeout``, ``default_headers``, ``max_tokens_field`` and ``stream_usage``.
A key itself is never written in ``semif.toml`` (code a skill runs could read
it; the workspace refuses one): it comes from the environment or the secrets
file outside every workspace (:mod:`.secrets`). Settings passed in code may
still hold ``api_key``.
"""

from __future__ import annotations

from .engine import LLMEngine
from .errors import (
    AuthenticationError,
    BadRequestError,
    InvalidModelRequestError,
    MissingCredentialsError,
    MissingExtraError,
    ModelRequestsBlockedError,
    ProviderConfigError,
    ProviderConnectionError,
    ProviderError,
    ProviderOverloadedError,
    ProviderTimeoutError,
    RateLimitError,
    ResponseError,
    ServerError,
    StreamInterruptedError,
    SyncInAsyncError,
    TooManyOptionsError,
    UnknownProviderError,
    UnsupportedOptionError,
)
from .fallback import FallbackProvider
from .judge import LLMJudge, assess_request, create_judge
from .messages import (
    AssistantMessage,
    Message,
    SystemMessage,
    ToolCall,
    ToolResultMessage,
    ToolSchema,
    ToolSpec,
    UserMessage,
)
from .options import ProviderOptions
from .pricing import MODEL_PRICING, ModelPrice, set_price
from .protocol import BaseProvider, LLMProvider, ModelRequest, as_provider
from .providers.scripted import ScriptedProvider, ScriptedReply
from .registry import create_provider, parse_model_ref, provider_names, register_provider
from .responses import (
    Response,
    StopChunk,
    StreamChunk,
    TextChunk,
    TokenLogprob,
    ToolCallDelta,
    TopLogprob,
    UsageChunk,
)
from .retry import RetryingProvider, RetryPolicy
from .testing import block_model_requests, override_provider
from .usage import Usage

__all__ = [
    # the protocol and building providers
    "LLMProvider",
    "BaseProvider",
    "ModelRequest",
    "ProviderOptions",
    "as_provider",
    "create_provider",
    "register_provider",
    "provider_names",
    "parse_model_ref",
    "RetryPolicy",
    "RetryingProvider",
    "FallbackProvider",
    # messages and answers
    "Message",
    "SystemMessage",
    "UserMessage",
    "AssistantMessage",
    "ToolResultMessage",
    "ToolCall",
    "ToolSpec",
    "ToolSchema",
    "Response",
    "TokenLogprob",
    "TopLogprob",
    "StreamChunk",
    "TextChunk",
    "ToolCallDelta",
    "UsageChunk",
    "StopChunk",
    # usage and cost
    "Usage",
    "ModelPrice",
    "MODEL_PRICING",
    "set_price",
    # decisions
    "LLMEngine",
    "LLMJudge",
    "create_judge",
    "assess_request",
    # testing
    "ScriptedProvider",
    "ScriptedReply",
    "override_provider",
    "block_model_requests",
    # errors
    "ProviderError",
    "AuthenticationError",
    "RateLimitError",
    "ServerError",
    "ProviderOverloadedError",
    "ProviderConnectionError",
    "ProviderTimeoutError",
    "BadRequestError",
    "StreamInterruptedError",
    "ResponseError",
    "ProviderConfigError",
    "UnknownProviderError",
    "MissingCredentialsError",
    "MissingExtraError",
    "InvalidModelRequestError",
    "UnsupportedOptionError",
    "ModelRequestsBlockedError",
    "SyncInAsyncError",
    "TooManyOptionsError",
]
