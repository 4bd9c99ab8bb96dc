"""Usage normalised across providers, and prices users can override."""

from __future__ import annotations

import pytest

from semif_agent.llm import MODEL_PRICING, ProviderConfigError, Usage, set_price
from semif_agent.llm.pricing import ModelPrice, find_price, price_usage


def test_each_token_is_counted_once_whatever_the_convention():
    anthropic = Usage.from_anthropic(
        input_tokens=100, output_tokens=20, cache_creation_input_tokens=50, cache_read_input_tokens=300
    )
    openai = Usage.from_openai(prompt_tokens=400, completion_tokens=20, cached_tokens=300)
    assert (anthropic.input_tokens, anthropic.cache_read_tokens, anthropic.cache_write_tokens) == (100, 300, 50)
    assert (openai.input_tokens, openai.cache_read_tokens, openai.cache_write_tokens) == (100, 300, 0)
    assert anthropic.total_tokens == 470 and openai.total_tokens == 420
    assert openai.prompt_tokens == 400


def test_usage_adds_up():
    total = Usage(input_tokens=1, output_tokens=2, cost_usd=0.5) + Usage(input_tokens=3, cache_read_tokens=4)
    assert total == Usage(input_tokens=4, output_tokens=2, cache_read_tokens=4, cost_usd=0.5)
    assert (Usage() + Usage()).cost_usd is None
    assert Usage(input_tokens=1, cost_usd=0.25).to_dict()["total_tokens"] == 1


def test_prices_cache_tokens_at_their_own_rates():
    price = ModelPrice(input=3.0, output=15.0, cache_write=3.75, cache_read=0.3)
    usage = Usage(
        input_tokens=1_000_000, output_tokens=1_000_000, cache_write_tokens=1_000_000, cache_read_tokens=1_000_000
    )
    assert price.cost(usage) == pytest.approx(3.0 + 15.0 + 3.75 + 0.3)
    assert ModelPrice(input=2.0, output=1.0).cost(Usage(cache_read_tokens=1_000_000)) == pytest.approx(2.0)


def test_lookup_by_ref_then_bare_name_and_dated_names():
    assert find_price("anthropic", "claude-haiku-4-5-20251001") is MODEL_PRICING["anthropic/claude-haiku-4-5"]
    assert find_price("openai", "no-such-model") is None


def test_users_override_the_table(monkeypatch):
    monkeypatch.setattr("semif_agent.llm.pricing.MODEL_PRICING", dict(MODEL_PRICING))
    set_price("openai/gpt-4o-mini", input=1.0, output=1.0)
    usage = price_usage(Usage(input_tokens=1_000_000), "openai", "gpt-4o-mini")
    assert usage.cost_usd == pytest.approx(1.0)
    overrides = {"openai/gpt-4o-mini": ModelPrice(input=7.0, output=7.0)}
    assert price_usage(Usage(input_tokens=1_000_000), "openai", "gpt-4o-mini", overrides).cost_usd == pytest.approx(7.0)


def test_a_plain_dict_in_the_table_prices_as_a_price(monkeypatch):
    monkeypatch.setattr("semif_agent.llm.pricing.MODEL_PRICING", dict(MODEL_PRICING))
    from semif_agent.llm import pricing

    pricing.MODEL_PRICING["openai/my-finetune"] = {"input": 0.3, "output": 1.2}
    usage = price_usage(Usage(input_tokens=1_000_000, output_tokens=1_000_000), "openai", "my-finetune")
    assert usage.cost_usd == pytest.approx(1.5)
    pricing.MODEL_PRICING["openai/my-typo"] = {"inptu": 0.3, "output": 1.2}
    with pytest.raises(ProviderConfigError, match=r"^MODEL_PRICING\['openai/my-typo'\]: unknown price fields: inptu"):
        price_usage(Usage(input_tokens=10), "openai", "my-typo")


def test_unpriced_model_has_unknown_cost_but_counts_tokens(caplog):
    usage = price_usage(Usage(input_tokens=10), "openai", "unpriced-model-x")
    assert usage.cost_usd is None and usage.input_tokens == 10
    assert "no price known for model openai/unpriced-model-x: its cost counts as $0" in caplog.text
    assert price_usage(Usage(), "openai", "unpriced-model-y").cost_usd == 0.0


def test_bad_price_fields_are_refused():
    with pytest.raises(ProviderConfigError, match="unknown price fields: inptu"):
        ModelPrice.coerce({"inptu": 1, "output": 2})
