"""Providers by name, and :func:`create_provider` for ``"provider/model"``.

A provider is a class, or any callable ``factory(model_id, **options) ->
LLMProvider``, declared as an entry point of the ``semif_agent.providers``
group (the built-in ones are declared there too) or registered with
:func:`register_provider`. Each is imported only when built.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping
from typing import Any

from .._plugins import PluginGroup
from .errors import ProviderConfigError, UnknownProviderError
from .fallback import FallbackProvider
from .protocol import LLMProvider, is_provider
from .retry import RetryingProvider, RetryPolicy
from .testing import current_override

ProviderFactory = Callable[..., LLMProvider]
"""A provider class, or any callable ``factory(model_id, **options) -> LLMProvider``."""

# The same table as pyproject.toml's [project.entry-points."semif_agent.providers"].
BUILTIN_PROVIDERS: dict[str, str] = {
    "anthropic": "semif_agent.llm.providers.anthropic:AnthropicProvider",
    "openai": "semif_agent.llm.providers.openai:OpenAIProvider",
    "ollama": "semif_agent.llm.providers.openai:OllamaProvider",
    "vllm": "semif_agent.llm.providers.openai:VLLMProvider",
    "llamacpp": "semif_agent.llm.providers.openai:LlamaCppProvider",
    "openrouter": "semif_agent.llm.providers.openai:OpenRouterProvider",
    "scripted": "semif_agent.llm.providers.scripted:from_options",
}
PROVIDERS = PluginGroup("semif_agent.providers", "provider", BUILTIN_PROVIDERS, UnknownProviderError)

# Options a string fallback inherits from the primary; credentials and endpoints
# are inherited only by a fallback that names the same provider.
_SHARED_OPTIONS = ("timeout", "pricing")
_CONNECTION_OPTIONS = ("api_key", "base_url", "default_headers")

FallbackSpec = str | Mapping[str, object] | LLMProvider


def register_provider(name: str, factory: ProviderFactory) -> None:
    """Make ``create_provider("name/model", **options)`` build ``factory(model, **options)``."""
    if not name or "/" in name or ":" in name:
        raise ProviderConfigError(f"invalid provider name {name!r}")
    PROVIDERS.register(name, factory)


def provider_names() -> list[str]:
    """Every provider name ``create_provider`` knows, plug-ins' included (none is imported)."""
    return PROVIDERS.names()


# Bare model names whose provider is not in doubt (``Agent(model="claude-haiku-4-5")``).
_BARE_NAME_PROVIDERS = (
    ("claude-", "anthropic"),
    ("gpt-", "openai"),
    ("chatgpt-", "openai"),
    ("o1", "openai"),
    ("o3", "openai"),
    ("o4", "openai"),
)


def parse_model_ref(ref: str) -> tuple[str, str]:
    """``"openai/gpt-4o-mini"`` -> ``("openai", "gpt-4o-mini")``; the model may hold more slashes.

    A bare name of a well-known family (``claude-*``, ``gpt-*``, ``o1``/``o3``/``o4*``)
    gets its provider; any other name must say ``provider/model``.
    """
    if isinstance(ref, str) and "/" not in ref:
        for prefix, provider in _BARE_NAME_PROVIDERS:
            if ref.startswith(prefix):
                return provider, ref
    if not isinstance(ref, str) or "/" not in ref:
        raise ProviderConfigError(
            f"model {ref!r} does not name its provider: write provider/model, e.g. openai/gpt-4o-mini "
            f"(providers: {', '.join(provider_names())})"
        )
    provider, model = ref.split("/", 1)
    if not provider or not model:
        raise ProviderConfigError(f"model {ref!r}: write provider/model, e.g. anthropic/claude-haiku-4-5")
    return provider, model


def provider_factory(name: str) -> ProviderFactory:
    """The factory registered, built in or declared by a plug-in under ``name``."""
    factory: ProviderFactory = PROVIDERS.load(name)
    return factory


def create_provider(
    model: str,
    *,
    api_key: str | None = None,
    fallbacks: Iterable[FallbackSpec] | None = None,
    retry: RetryPolicy | bool | None = None,
    **options: Any,
) -> LLMProvider:
    """The provider for ``"provider/model"``, with retries and, if given, fallbacks.

    ``options`` go to the provider (``base_url``, ``timeout``, ``pricing``,
    ...). Each fallback is a ``"provider/model"`` string, a dict with a
    ``model`` key and that provider's own options (``api_key``, ``base_url``,
    ...), or a ready provider. A string fallback inherits the primary's
    ``timeout`` and ``pricing``, and its ``api_key``/``base_url`` only when it
    names the same provider; a dict fallback keeps exactly its own keys.

    ``retry`` is a :class:`RetryPolicy` (default: ``RetryPolicy()``), or
    ``False`` for none. Inside :func:`~semif_agent.llm.override_provider`
    the override is returned instead.
    """
    override = current_override()
    if override is not None:
        return override
    policy = None if retry is False else (retry if isinstance(retry, RetryPolicy) else RetryPolicy())
    if api_key is not None:
        options["api_key"] = api_key
    primary_name, _ = parse_model_ref(model)
    chain = [_build(model, options, policy)]
    for spec in fallbacks or ():
        if isinstance(spec, str):
            name, _ = parse_model_ref(spec)
            inherited = {k: options[k] for k in _SHARED_OPTIONS if k in options}
            if name == primary_name:
                inherited.update({k: options[k] for k in _CONNECTION_OPTIONS if k in options})
            chain.append(_build(spec, inherited, policy))
        elif isinstance(spec, Mapping):
            spec = dict(spec)
            ref = spec.pop("model", None)
            if not ref:
                raise ProviderConfigError(f"a fallback needs a model (provider/model): {spec!r}")
            chain.append(_build(str(ref), spec, policy))
        elif is_provider(spec):
            chain.append(spec)
        else:
            raise ProviderConfigError(
                f"cannot use {spec!r} as a fallback (a provider/model string, a dict or a provider)"
            )
    return chain[0] if len(chain) == 1 else FallbackProvider(chain)


def _build(ref: str, options: Mapping[str, object], policy: RetryPolicy | None) -> LLMProvider:
    name, model_id = parse_model_ref(ref)
    factory = provider_factory(name)
    with PROVIDERS.guard(name):
        try:
            provider = factory(model_id, **options)
        except TypeError as exc:
            if "argument" not in str(exc):
                raise
            raise ProviderConfigError(f"provider {name!r} cannot take these options: {exc}") from exc
    return RetryingProvider(provider, policy) if policy is not None else provider
