"""create_provider, register_provider, keys and endpoints, overrides, and settings resolution."""

from __future__ import annotations

import sys

import pytest
from support.wire_server import APIS, WireReply

from semif_agent.errors import EngineConfigError, UserError
from semif_agent.llm import (
    FallbackProvider,
    MissingCredentialsError,
    MissingExtraError,
    ProviderConfigError,
    RetryingProvider,
    ScriptedProvider,
    UnknownProviderError,
    create_provider,
    override_provider,
    parse_model_ref,
    provider_names,
    register_provider,
)
from semif_agent.llm.settings import provider_arguments

KEY_VARS = {"openai": "OPENAI_API_KEY", "anthropic": "ANTHROPIC_API_KEY"}
URL_VARS = {"openai": "OPENAI_BASE_URL", "anthropic": "ANTHROPIC_BASE_URL"}


def test_model_refs():
    assert parse_model_ref("openai/gpt-4o-mini") == ("openai", "gpt-4o-mini")
    assert parse_model_ref("openrouter/anthropic/claude-haiku-4-5") == ("openrouter", "anthropic/claude-haiku-4-5")
    assert parse_model_ref("claude-haiku-4-5-20251001") == ("anthropic", "claude-haiku-4-5-20251001")
    assert parse_model_ref("gpt-4o-mini") == ("openai", "gpt-4o-mini")
    with pytest.raises(ProviderConfigError, match="provider/model"):
        parse_model_ref("llama3.2")


def test_unknown_provider_lists_the_known_ones():
    with pytest.raises(UnknownProviderError, match="known: .*anthropic.*openai"):
        create_provider("nosuch/model")


@pytest.mark.parametrize("api", APIS)
def test_missing_key_is_one_line_naming_the_variable(api):
    with pytest.raises(MissingCredentialsError) as caught:
        create_provider(f"{api}/some-model")
    message = str(caught.value)
    assert KEY_VARS[api] in message and "\n" not in message
    assert isinstance(caught.value, (UserError, EngineConfigError))


@pytest.mark.parametrize("api", APIS)
def test_missing_extra_is_one_line_naming_the_extra(api, monkeypatch):
    monkeypatch.setitem(sys.modules, api, None)  # as if the SDK were not installed
    with pytest.raises(MissingExtraError) as caught:
        create_provider(f"{api}/some-model", api_key="k")
    assert f"pip install 'semif-agent[{api}]'" in str(caught.value)
    assert "\n" not in str(caught.value)


@pytest.mark.parametrize("api", APIS)
def test_key_and_endpoint_from_the_environment(api, wire, monkeypatch):
    monkeypatch.setenv(KEY_VARS[api], "key-from-env")
    monkeypatch.setenv(URL_VARS[api], wire.base_url(api))
    wire.queue(WireReply(text="env works"))
    assert create_provider(f"{api}/m").invoke("hi").text == "env works"
    assert "key-from-env" in " ".join(wire.posts()[0].headers.values())


def test_compatible_server_by_base_url_needs_no_key(wire, monkeypatch):
    wire.queue(WireReply(text="local"), WireReply(text="ollama"))
    assert create_provider("openai/llama3", base_url=wire.base_url("openai")).invoke("hi").text == "local"
    monkeypatch.setenv("OLLAMA_BASE_URL", wire.base_url("openai"))
    response = create_provider("ollama/llama3").invoke("hi")
    assert (response.text, response.provider) == ("ollama", "ollama")


def test_openrouter_needs_its_key():
    with pytest.raises(MissingCredentialsError, match="OPENROUTER_API_KEY"):
        create_provider("openrouter/anthropic/claude-haiku-4-5")


def test_providers_are_wrapped_in_retries_and_fallbacks():
    provider = create_provider("scripted/a", fallbacks=["scripted/b"])
    assert isinstance(provider, FallbackProvider)
    assert all(isinstance(p, RetryingProvider) for p in provider.providers)
    assert (provider.provider_name, provider.model_id) == ("scripted", "a")
    assert not isinstance(create_provider("scripted/a", retry=False), RetryingProvider)


def test_string_fallbacks_inherit_credentials_only_from_the_same_provider(wire):
    same = create_provider("openai/a", api_key="k", base_url=wire.base_url("openai"), fallbacks=["openai/b"])
    assert same.providers[1].inner.api_key == "k"
    with pytest.raises(MissingCredentialsError, match="ANTHROPIC_API_KEY"):
        create_provider("openai/a", api_key="k", fallbacks=["anthropic/b"])


def test_register_a_provider_of_your_own(monkeypatch):
    monkeypatch.setattr("semif_agent.llm.registry.PROVIDERS._registered", {})
    built = {}

    def factory(model_id, **options):
        built.update(options, model=model_id)
        return ScriptedProvider(["custom"], model=model_id, name="mine")

    register_provider("mine", factory)
    assert "mine" in provider_names()
    assert create_provider("mine/x", colour="blue").invoke("hi").text == "custom"
    assert built == {"colour": "blue", "model": "x"}
    with pytest.raises(ProviderConfigError):
        register_provider("bad/name", factory)


def test_unknown_option_is_a_config_error():
    with pytest.raises(ProviderConfigError, match="cannot take these options"):
        create_provider("openai/m", api_key="k", colour="blue")


def test_override_swaps_what_create_provider_returns():
    fake = ScriptedProvider(["overridden"])
    with override_provider(fake):
        assert create_provider("anthropic/claude-haiku-4-5") is fake  # no key needed: nothing is built
    with pytest.raises(MissingCredentialsError):
        create_provider("anthropic/claude-haiku-4-5")


# -- settings -----------------------------------------------------------------


def test_engine_model_wins_over_the_provider_default(monkeypatch):
    monkeypatch.setenv("MY_OPENAI_KEY", "secret")
    settings = {
        "model": "openai/from-engine",
        "temperature": 0.0,
        "provider": {
            "model": "anthropic/from-provider",
            "base_url": "http://127.0.0.1:9/v1",
            "timeout": 5,
            "max_retries": 4,
            "openai": {"api_key_env": "MY_OPENAI_KEY"},
            "anthropic": {"api_key": "anthropic-key", "base_url": "http://127.0.0.1:8"},
            "pricing": {"openai/from-engine": {"input": 1, "output": 2}},
            "fallbacks": ["anthropic/backup", {"model": "openai/other", "api_key": "other-key"}],
        },
    }
    model, kwargs = provider_arguments(settings)
    assert model == "openai/from-engine"
    assert kwargs["api_key"] == "secret" and kwargs["base_url"] == "http://127.0.0.1:9/v1" and kwargs["timeout"] == 5
    assert kwargs["retry"].max_retries == 4
    assert kwargs["pricing"] == {"openai/from-engine": {"input": 1, "output": 2}}
    first, second = kwargs["fallbacks"]
    assert first["model"] == "anthropic/backup" and first["api_key"] == "anthropic-key"
    assert first["base_url"] == "http://127.0.0.1:8" and first["timeout"] == 5
    assert second == {"model": "openai/other", "api_key": "other-key"}
    assert "temperature" not in kwargs


def test_settings_without_a_model_say_how_to_set_one():
    with pytest.raises(ProviderConfigError, match=r'model = "openai/gpt-4o-mini".*--model'):
        provider_arguments({"provider": {}})


def test_pricing_that_is_not_a_table_is_a_one_line_config_error():
    with pytest.raises(ProviderConfigError, match="pricing must be a table"):
        provider_arguments({"model": "openai/m", "provider": {"api_key": "k", "pricing": "cheap"}})


def test_api_key_env_that_is_unset_names_it():
    with pytest.raises(MissingCredentialsError, match="MISSING_VAR"):
        provider_arguments({"model": "openai/m", "provider": {"api_key_env": "MISSING_VAR"}})


def test_unknown_keys_in_a_provider_table():
    with pytest.raises(ProviderConfigError, match=r"\[provider.openai\]: unknown keys colour"):
        provider_arguments({"model": "openai/m", "provider": {"openai": {"colour": "blue"}}})
