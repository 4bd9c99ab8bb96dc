"""What model calls cost: a price table users can override.

Prices are US dollars per million tokens, looked up by ``"provider/model"``
first, then by the bare model name. The built-in figures are list prices at
the time of writing; override them when they change or for your own models::

    from semif_agent.llm import pricing
    pricing.set_price("openai/my-finetune", input=0.3, output=1.2)

or per provider, without touching the process-wide table::

    create_provider("openai/my-finetune", pricing={"openai/my-finetune": {"input": 0.3, "output": 1.2}})

or in ``semif.toml``::

    [provider.pricing."openai/my-finetune"]
    input = 0.3
    output = 1.2

What one call costs is decided in this order (:func:`price_usage`):

1. the cost the provider billed, when its answer reports one (OpenRouter's
   ``usage.cost``, a ``cost`` field in any provider's usage);
2. the provider's own ``pricing``, then :data:`MODEL_PRICING`;
3. the `genai-prices <https://pypi.org/project/genai-prices/>`_ package's
   figures, when it is installed (``pip install 'semif-agent[prices]'``);
4. otherwise the cost is unknown (``None``): a usage limit counts it as $0,
   and a warning says so once per model on the ``semif_agent.llm`` logger.

No tokens cost 0 whatever the model.
"""

from __future__ import annotations

import logging
from collections.abc import Mapping
from dataclasses import dataclass

from ..errors import check_number
from .errors import ProviderConfigError
from .usage import Usage

log = logging.getLogger("semif_agent.llm")


@dataclass(frozen=True, kw_only=True)
class ModelPrice:
    """Dollars per million tokens. Cache prices default to the input price when not given."""

    input: float
    output: float
    cache_write: float | None = None
    cache_read: float | None = None

    def __post_init__(self) -> None:
        for name in ("input", "output", "cache_write", "cache_read"):
            check_number(f"the {name} price", getattr(self, name), optional=name.startswith("cache"))

    @classmethod
    def coerce(cls, value: ModelPrice | Mapping[str, object]) -> ModelPrice:
        if isinstance(value, ModelPrice):
            return value
        unknown = set(value) - {"input", "output", "cache_write", "cache_read"}
        if unknown:
            raise ProviderConfigError(
                f"unknown price fields: {', '.join(sorted(unknown))} (input, output, cache_write, cache_read)"
            )
        try:
            return cls(
                input=_dollars(value["input"]),
                output=_dollars(value["output"]),
                cache_write=None if value.get("cache_write") is None else _dollars(value["cache_write"]),
                cache_read=None if value.get("cache_read") is None else _dollars(value["cache_read"]),
            )
        except (KeyError, TypeError, ValueError) as exc:
            raise ProviderConfigError(
                f"a price needs numbers for input and output (dollars per million tokens): {exc}"
            ) from exc

    def cost(self, usage: Usage) -> float:
        """The cost of ``usage`` in dollars."""
        cache_write = self.input if self.cache_write is None else self.cache_write
        cache_read = self.input if self.cache_read is None else self.cache_read
        return (
            usage.input_tokens * self.input
            + usage.output_tokens * self.output
            + usage.cache_write_tokens * cache_write
            + usage.cache_read_tokens * cache_read
        ) / 1_000_000


PriceEntry = ModelPrice | Mapping[str, float | None]
"""A price as a table holds it: a :class:`ModelPrice`, or a plain dict of its fields (``{"input": .., "output": ..}``)."""


def _dollars(value: object) -> float:
    """A price field as a number (numbers and numeric text are; anything else raises ``TypeError``)."""
    if isinstance(value, (int, float, str)):
        return float(value)
    raise TypeError(f"{value!r} is not a number")


# The process-wide table: runtime-overridable (set_price, or assign entries directly, as a ModelPrice or a plain dict).
MODEL_PRICING: dict[str, PriceEntry] = {
    "anthropic/claude-haiku-4-5": ModelPrice(input=1.0, output=5.0, cache_write=1.25, cache_read=0.10),
    "anthropic/claude-sonnet-4-5": ModelPrice(input=3.0, output=15.0, cache_write=3.75, cache_read=0.30),
    "anthropic/claude-opus-4-1": ModelPrice(input=15.0, output=75.0, cache_write=18.75, cache_read=1.50),
    "openai/gpt-4o-mini": ModelPrice(input=0.15, output=0.60, cache_read=0.075),
    "openai/gpt-4o": ModelPrice(input=2.50, output=10.0, cache_read=1.25),
    "openai/gpt-4.1-mini": ModelPrice(input=0.40, output=1.60, cache_read=0.10),
    "openai/gpt-4.1-nano": ModelPrice(input=0.10, output=0.40, cache_read=0.025),
    "openai/gpt-4.1": ModelPrice(input=2.0, output=8.0, cache_read=0.50),
}

_reported_unpriced: set[str] = set()


def set_price(
    model: str,
    *,
    input: float,
    output: float,
    cache_write: float | None = None,
    cache_read: float | None = None,
) -> None:
    """Set (or replace) the process-wide price of ``model`` (``"provider/model"`` or a bare name)."""
    MODEL_PRICING[model] = ModelPrice(input=input, output=output, cache_write=cache_write, cache_read=cache_read)


def coerce_table(table: Mapping[str, ModelPrice | Mapping[str, object]] | None) -> dict[str, ModelPrice]:
    """A price table from settings (``{"provider/model": {"input": .., "output": ..}}``)."""
    return {str(k): ModelPrice.coerce(v) for k, v in (table or {}).items()}


def find_price(provider: str, model: str, overrides: Mapping[str, PriceEntry] | None = None) -> ModelPrice | None:
    """The price of ``provider/model``: ``overrides`` first, then :data:`MODEL_PRICING`.

    Dated model names (``claude-haiku-4-5-20251001``) match their undated entry. An entry may be a
    :class:`ModelPrice` or a plain dict of its fields; a dict that is not a price raises
    :class:`~.errors.ProviderConfigError` naming the entry.
    """
    tables: tuple[tuple[str, Mapping[str, PriceEntry]], ...] = (
        ("pricing", overrides or {}),
        ("MODEL_PRICING", MODEL_PRICING),
    )
    for name, table in tables:
        for key in _candidates(provider, model):
            if key in table:
                try:
                    return ModelPrice.coerce(table[key])
                except ProviderConfigError as exc:
                    raise ProviderConfigError(f"{name}[{key!r}]: {exc}") from None
    return None


def _candidates(provider: str, model: str) -> list[str]:
    keys = [f"{provider}/{model}", model]
    base = model.rsplit("-", 1)
    if len(base) == 2 and base[1].isdigit() and len(base[1]) == 8:
        keys += [f"{provider}/{base[0]}", base[0]]
    return keys


def price_usage(usage: Usage, provider: str, model: str, overrides: Mapping[str, PriceEntry] | None = None) -> Usage:
    """``usage`` with its ``cost_usd`` filled in, in the module's order (``None`` when nobody prices the model).

    A ``cost_usd`` already set is the provider's billed cost and is kept.
    """
    if usage.cost_usd is not None:
        return usage
    price = find_price(provider, model, overrides)
    if price is not None:
        return usage.with_cost(price.cost(usage))
    if usage.total_tokens == 0:
        return usage.with_cost(0.0)
    listed = listed_cost(usage, provider, model)
    if listed is not None:
        return usage.with_cost(listed)
    ref = f"{provider}/{model}"
    if ref not in _reported_unpriced:
        _reported_unpriced.add(ref)
        log.warning(
            "no price known for model %s: its cost counts as $0; set MODEL_PRICING[%r] "
            "(semif_agent.llm.pricing.set_price) or install semif-agent[prices]",
            ref,
            ref,
        )
    return usage.with_cost(None)


def listed_cost(usage: Usage, provider: str, model: str) -> float | None:
    """What genai-prices lists ``usage`` of ``provider/model`` at; ``None`` when it is not installed or has no price."""
    try:
        import genai_prices
    except ImportError:
        return None
    counts = genai_prices.Usage(
        input_tokens=usage.prompt_tokens,  # genai-prices counts the cached tokens inside the input
        output_tokens=usage.output_tokens,
        cache_write_tokens=usage.cache_write_tokens,
        cache_read_tokens=usage.cache_read_tokens,
    )
    try:
        return float(genai_prices.calc_price(counts, model, provider_id=provider).total_price)
    except (LookupError, ValueError):
        return None
