"""From ``semif.toml`` settings to :func:`~semif_agent.llm.create_provider` arguments.

The engine settings a factory receives are the ``[engine]`` table plus
``workspace`` and ``provider`` (the ``[provider]`` table). Which model:
``[engine] model`` (``semif run --model`` sets it), else ``[provider] model``.
Options for the model's provider, later ones winning:

1. the flat keys of ``[provider]`` (``api_key``, ``api_key_env``, ``base_url``, ...),
2. that provider's own sub-table (``[provider.openai]``),
3. the same keys in ``[engine]``.

Fallbacks (``[engine] fallbacks`` or ``[provider] fallbacks``) take their
provider's sub-table only, so each keeps its own key and endpoint. Keys and
endpoints that no setting gives come from the environment
(``OPENAI_API_KEY``, ``ANTHROPIC_BASE_URL``, ...), as the SDKs read them.

When nothing names a model, :func:`default_model` picks one from the provider
that is set up: the one whose key or base URL the environment or
``semif.toml`` gives (:data:`DEFAULT_MODELS`); with both or neither set up, the
Anthropic default.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from .errors import MissingCredentialsError, ProviderConfigError
from .registry import parse_model_ref
from .retry import RetryPolicy
from .secrets import read_secret, secret_source, secrets_file

# Keys that configure a provider connection (per provider).
CONNECTION_KEYS = (
    "api_key",
    "api_key_env",
    "base_url",
    "timeout",
    "default_headers",
    "max_tokens_field",
    "stream_usage",
)
RETRY_KEYS = ("max_retries", "retry_initial_delay", "retry_max_delay")


def provider_table(settings: Mapping[str, object]) -> dict[str, object]:
    """The ``[provider]`` table of engine settings (empty when absent)."""
    table = settings.get("provider") or {}
    if not isinstance(table, Mapping):
        raise ProviderConfigError("[provider] must be a table")
    return dict(table)


def configured_model(settings: Mapping[str, object]) -> str:
    """``[engine] model`` (or ``--model``), else ``[provider] model``."""
    model = settings.get("model") or provider_table(settings).get("model")
    if not model:
        raise ProviderConfigError(
            'no model configured: set model = "openai/gpt-4o-mini" (any provider/model) under [engine] '
            "or [provider] in semif.toml, or pass --model"
        )
    return str(model)


DEFAULT_MODELS = {"anthropic": "anthropic/claude-haiku-4-5-20251001", "openai": "openai/gpt-4o-mini"}
"""The model used for each provider when it is the one set up and no model is named."""
FALLBACK_PROVIDER = "anthropic"
"""Whose default model is used when both providers, or neither, are set up."""
# The variables that set each provider up: its key (or token) and its endpoint, as its SDK reads them.
PROVIDER_ENV = {
    "anthropic": ("ANTHROPIC_API_KEY", "ANTHROPIC_AUTH_TOKEN", "ANTHROPIC_BASE_URL"),
    "openai": ("OPENAI_API_KEY", "OPENAI_BASE_URL"),
}


@dataclass(frozen=True)
class ModelChoice:
    """The model :func:`default_model` chose, and why, in words (``"OPENAI_BASE_URL is set"``)."""

    model: str
    reason: str
    detected: bool  # True when one provider was set up; False for the default (both or neither)

    def describe(self, how_to_choose: str = "--model") -> str:
        """One line: ``model openai/gpt-4o-mini (OPENAI_API_KEY is set; --model to choose another)``."""
        return f"model {self.model} ({self.reason}; {how_to_choose} to choose another)"


def default_model(
    settings: Mapping[str, object] | None = None, environ: Mapping[str, str] | None = None
) -> ModelChoice:
    """The model to use when none is named: that of the one provider set up, else the Anthropic default.

    A provider is set up when ``semif.toml`` gives it a key or a base URL (its
    ``[provider.NAME]`` table, or ``[provider]``'s ``api_key_env`` naming one of
    its variables; a ``[provider]`` ``base_url`` is an OpenAI-compatible server)
    or the environment has one of its :data:`PROVIDER_ENV` variables.
    """
    environ = os.environ if environ is None else environ
    found = {name: _set_up_by(name, settings or {}, environ) for name in DEFAULT_MODELS}
    found = {name: where for name, where in found.items() if where}
    if len(found) == 1:
        [(name, where)] = found.items()
        return ModelChoice(DEFAULT_MODELS[name], where, detected=True)
    if found:
        why = "both " + " and ".join(f"{name} ({where})" for name, where in sorted(found.items()))
        reason = f"the default: {why} are set up"
    else:
        reason = "the default: neither ANTHROPIC_API_KEY nor OPENAI_API_KEY (nor a base URL) is set"
    return ModelChoice(DEFAULT_MODELS[FALLBACK_PROVIDER], reason, detected=False)


def _set_up_by(name: str, settings: Mapping[str, object], environ: Mapping[str, str]) -> str:
    """What sets provider ``name`` up, in words ("OPENAI_BASE_URL is set"), or "" when nothing does."""
    table = provider_table(settings)
    own = table.get(name)
    if isinstance(own, Mapping) and any(own.get(k) for k in ("api_key", "api_key_env", "base_url")):
        return f"[provider.{name}] in semif.toml"
    key_env = str(table.get("api_key_env") or settings.get("api_key_env") or "")
    if key_env and key_env in PROVIDER_ENV[name]:
        return f"[provider] api_key_env = {key_env!r} in semif.toml"
    base_url = str(settings.get("base_url") or table.get("base_url") or "")
    if base_url and ("anthropic" in base_url) == (name == "anthropic"):
        return "[provider] base_url in semif.toml"
    found = [(variable, secret_source(variable, environ)) for variable in PROVIDER_ENV[name]]
    present = [variable for variable, source in found if source and source[1].startswith("$")]
    filed = [variable for variable, source in found if source and not source[1].startswith("$")]
    said = [" and ".join(present) + (" is set" if len(present) == 1 else " are set")] if present else []
    said += [" and ".join(filed) + " in the secrets file"] if filed else []
    return "; ".join(said)


def connection_options(name: str, settings: Mapping[str, object], *, primary: bool) -> dict[str, object]:
    """The options for provider ``name``, keys resolved: see the module docstring for the order."""
    return resolve_key_env(name, raw_connection_options(name, settings, primary=primary))


def raw_connection_options(name: str, settings: Mapping[str, object], *, primary: bool) -> dict[str, object]:
    """As :func:`connection_options`, with ``api_key_env`` not yet read from the environment."""
    table = provider_table(settings)
    own = table.get(name)
    if own is not None and not isinstance(own, Mapping):
        raise ProviderConfigError(f"[provider.{name}] must be a table")
    if own:
        unknown = set(own) - set(CONNECTION_KEYS)
        if unknown:
            raise ProviderConfigError(
                f"[provider.{name}]: unknown keys {', '.join(sorted(unknown))} (known: {', '.join(CONNECTION_KEYS)})"
            )
    layers = [table, own or {}, settings] if primary else [own or {}]
    options: dict[str, object] = {}
    for layer in layers:
        found = {k: v for k, v in layer.items() if k in CONNECTION_KEYS}
        if "api_key" in found or "api_key_env" in found:  # a later layer's key replaces an earlier one's
            options.pop("api_key", None)
            options.pop("api_key_env", None)
        options.update(found)
    return options


def resolve_key_env(name: str, options: Mapping[str, object]) -> dict[str, object]:
    """``api_key_env = "VAR"`` replaced by the key read from ``$VAR``."""
    options = dict(options)
    env = options.pop("api_key_env", None)
    if env and not options.get("api_key"):
        value = read_secret(str(env))
        if not value:
            raise MissingCredentialsError(
                f"no API key for {name}: set {env} (named by api_key_env in semif.toml) in the environment "
                f"or the secrets file {secrets_file()}"
            )
        options["api_key"] = value
    return options


def provider_arguments(settings: Mapping[str, object]) -> tuple[str, dict[str, Any]]:
    """``(model, kwargs)`` for ``create_provider(model, **kwargs)`` from engine settings."""
    table = provider_table(settings)
    model = configured_model(settings)
    name, _ = parse_model_ref(model)
    kwargs = connection_options(name, settings, primary=True)

    retry_settings = {k: table[k] for k in RETRY_KEYS if k in table}
    retry_settings.update({k: settings[k] for k in RETRY_KEYS if k in settings})
    if retry_settings:
        kwargs["retry"] = RetryPolicy.from_settings(retry_settings)

    pricing: dict[str, object] = {}
    for given in (table.get("pricing"), settings.get("pricing")):
        if isinstance(given, Mapping):
            pricing.update(given)
        elif given:
            raise ProviderConfigError("pricing must be a table of model names and their prices")
    if pricing:
        kwargs["pricing"] = pricing

    fallbacks = settings["fallbacks"] if "fallbacks" in settings else table.get("fallbacks")
    if fallbacks:
        if isinstance(fallbacks, str) or not isinstance(fallbacks, (list, tuple)):
            raise ProviderConfigError("fallbacks must be a list of provider/model names (or tables)")
        kwargs["fallbacks"] = [_fallback(spec, settings, kwargs) for spec in fallbacks]
    return model, kwargs


def _fallback(spec: object, settings: Mapping[str, object], primary: Mapping[str, object]) -> object:
    if isinstance(spec, str):
        name, _ = parse_model_ref(spec)
        own = connection_options(name, settings, primary=False)
        if not own:
            return spec  # create_provider decides what it inherits
        if "timeout" in primary:
            own.setdefault("timeout", primary["timeout"])
        if "pricing" in primary:
            own["pricing"] = primary["pricing"]
        return {"model": spec, **own}
    if isinstance(spec, Mapping):
        if "model" not in spec:
            raise ProviderConfigError(f"a fallback table needs a model (provider/model): {dict(spec)!r}")
        name, _ = parse_model_ref(str(spec["model"]))
        return {"model": spec["model"], **resolve_key_env(name, {k: v for k, v in spec.items() if k != "model"})}
    raise ProviderConfigError(f"cannot use {spec!r} as a fallback")
