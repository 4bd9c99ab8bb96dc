"""What a round costs, over the wire: the provider's billed cost, then the price table, then genai-prices, then a warning."""

from __future__ import annotations

import logging
import sys

import genai_prices
import pytest
from support.wire_server import APIS, WireReply

from semif_agent.agent import Agent, UsageLimits, tool
from semif_agent.llm import MODEL_PRICING, Usage
from semif_agent.llm.pricing import listed_cost, price_usage

from ._support import of_type

TABLE_PRICED = {"openai": "gpt-4o-mini", "anthropic": "claude-haiku-4-5"}
"""A model each API's provider finds in MODEL_PRICING."""

LISTED_ONLY = {"openai": "o3-mini", "anthropic": "claude-3-5-haiku-20241022"}
"""A model MODEL_PRICING does not price and genai-prices does."""


@tool(read_only=True)
def look(page: int) -> str:
    """Read one page.

    Args:
        page: Which page.
    """
    return f"page {page}: nothing new"


@pytest.fixture(autouse=True)
def _warnings_afresh(monkeypatch):
    """Each test sees the one-time warning about an unpriced model as if for the first time."""
    monkeypatch.setattr("semif_agent.llm.pricing._reported_unpriced", set())


def _pages(wire, rounds: int, tokens: int, **reply) -> None:
    usage = {"input": tokens, "output": 10}
    wire.queue(
        *(WireReply.tool_call("look", {"page": n}, usage=usage, **reply) for n in range(rounds)),
        WireReply(text="Nothing new anywhere.", usage=usage, **reply),
    )


def _turn(agent: Agent) -> list:
    return list(agent.with_tools([look]).stream("Read the pages."))


@pytest.mark.parametrize("api", APIS)
def test_a_table_priced_model_trips_the_cost_limit(api, wire, provider_for):
    model = TABLE_PRICED[api]
    assert f"{api}/{model}" in MODEL_PRICING
    _pages(wire, rounds=3, tokens=1_000_000)
    round_cost = price_usage(Usage(input_tokens=1_000_000, output_tokens=10), api, model).cost_usd
    agent = Agent(llm=provider_for(api, model=model)).with_usage_limits(UsageLimits(cost_limit=1.5 * round_cost))
    events = _turn(agent)
    [breach] = of_type(events, "usage_limit_reached")
    assert breach.kind == "cost" and breach.used == pytest.approx(2 * round_cost)
    assert events[-1].diagnostics.stopped_by == "usage_limit"
    assert [r.cost_usd for r in events[-1].diagnostics.rounds][:2] == [pytest.approx(round_cost)] * 2


@pytest.mark.parametrize("api", APIS)
def test_a_model_only_genai_prices_lists_trips_the_cost_limit(api, wire, provider_for, caplog):
    model = LISTED_ONLY[api]
    assert f"{api}/{model}" not in MODEL_PRICING and model not in MODEL_PRICING
    listed = genai_prices.calc_price(
        genai_prices.Usage(input_tokens=1_000_000, output_tokens=10), model, provider_id=api
    )
    round_cost = float(listed.total_price)
    assert round_cost > 0
    _pages(wire, rounds=3, tokens=1_000_000)
    agent = Agent(llm=provider_for(api, model=model)).with_usage_limits(UsageLimits(cost_limit=1.5 * round_cost))
    with caplog.at_level(logging.WARNING, logger="semif_agent.llm"):
        events = _turn(agent)
    [breach] = of_type(events, "usage_limit_reached")
    assert breach.kind == "cost" and breach.used == pytest.approx(2 * round_cost)
    assert events[-1].diagnostics.stopped_by == "usage_limit"
    assert "no price known" not in caplog.text


@pytest.mark.parametrize("api", APIS)
@pytest.mark.parametrize("streamed", [True, False], ids=["streamed", "whole"])
def test_a_provider_billed_cost_goes_before_any_price(api, streamed, wire, provider_for):
    provider = provider_for(api, model=TABLE_PRICED[api])
    wire.queue(WireReply(text="Billed.", usage={"input": 1_000_000, "output": 10}, billed_cost=0.0042))
    if streamed:
        [stop] = [chunk for chunk in provider.stream("Hi") if chunk.type == "stop"]
        response = stop.response
    else:
        response = provider.invoke("Hi")
    assert response.usage.cost_usd == pytest.approx(0.0042)
    assert response.usage.input_tokens == 1_000_000


@pytest.mark.parametrize("api", APIS)
def test_a_billed_cost_trips_the_cost_limit_of_a_model_nobody_prices(api, wire, provider_for, caplog):
    _pages(wire, rounds=3, tokens=100, billed_cost=0.02)
    agent = Agent(llm=provider_for(api, model="house-model")).with_usage_limits(UsageLimits(cost_limit=0.03))
    with caplog.at_level(logging.WARNING, logger="semif_agent.llm"):
        events = _turn(agent)
    [breach] = of_type(events, "usage_limit_reached")
    assert breach.kind == "cost" and breach.used == pytest.approx(0.04)
    assert "no price known" not in caplog.text


@pytest.mark.parametrize("api", APIS)
def test_a_model_nobody_prices_warns_once_and_counts_as_zero(api, wire, provider_for, caplog):
    _pages(wire, rounds=2, tokens=1_000_000)
    agent = Agent(llm=provider_for(api, model="house-model")).with_usage_limits(UsageLimits(cost_limit=0.01))
    with caplog.at_level(logging.WARNING, logger="semif_agent.llm"):
        events = _turn(agent)
    assert of_type(events, "usage_limit_reached") == []
    assert events[-1].diagnostics.stopped_by == "stop" and events[-1].diagnostics.total_cost_usd == 0.0
    assert events[-1].diagnostics.total_tokens == 3 * 1_000_010
    warned = [r.getMessage() for r in caplog.records if "no price known" in r.getMessage()]
    assert warned == [
        f"no price known for model {api}/house-model: its cost counts as $0; "
        f"set MODEL_PRICING['{api}/house-model'] (semif_agent.llm.pricing.set_price) "
        "or install semif-agent[prices]"
    ]


def test_without_genai_prices_a_model_outside_the_table_warns(monkeypatch, caplog):
    monkeypatch.setitem(sys.modules, "genai_prices", None)  # as if the extra were not installed
    usage = Usage(input_tokens=1000, output_tokens=10)
    assert listed_cost(usage, "openai", "o3-mini") is None
    with caplog.at_level(logging.WARNING, logger="semif_agent.llm"):
        assert price_usage(usage, "openai", "o3-mini").cost_usd is None
    assert "no price known for model openai/o3-mini" in caplog.text


def test_genai_prices_counts_cached_tokens_at_their_rate():
    plain = listed_cost(Usage(input_tokens=1_000_000), "openai", "o3-mini")
    cached = listed_cost(Usage(input_tokens=500_000, cache_read_tokens=500_000), "openai", "o3-mini")
    assert plain is not None and cached is not None and 0 < cached < plain
    assert listed_cost(Usage(input_tokens=10), "scripted", "scripted") is None
