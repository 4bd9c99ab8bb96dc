"""Token usage, normalised so every token is counted once whatever the provider.

Providers count differently:

- Anthropic's ``input_tokens`` *excludes* cache writes
  (``cache_creation_input_tokens``) and cache reads (``cache_read_input_tokens``).
- OpenAI's ``prompt_tokens`` *includes* the cached tokens
  (``prompt_tokens_details.cached_tokens``), and reports no cache writes.

Here ``input_tokens`` is always the uncached input, so
``input_tokens + cache_write_tokens + cache_read_tokens`` is the whole prompt
and :attr:`Usage.total_tokens` adds the output once.

Some providers also bill the call in their answer (OpenRouter's
``usage.cost``, in US dollars); :func:`billed_cost` reads it, and a usage
whose ``cost_usd`` a provider set keeps it (see :mod:`.pricing`).

>>> Usage.from_openai(prompt_tokens=100, completion_tokens=5, cached_tokens=80)
Usage(input_tokens=20, output_tokens=5, cache_write_tokens=0, cache_read_tokens=80, cost_usd=None)
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass, replace


@dataclass(frozen=True, kw_only=True)
class Usage:
    """Tokens one or more model calls used, and what they cost (``None``: unpriced)."""

    input_tokens: int = 0
    output_tokens: int = 0
    cache_write_tokens: int = 0
    cache_read_tokens: int = 0
    cost_usd: float | None = None

    @classmethod
    def from_anthropic(
        cls,
        *,
        input_tokens: int | None,
        output_tokens: int | None,
        cache_creation_input_tokens: int | None = None,
        cache_read_input_tokens: int | None = None,
    ) -> Usage:
        """Anthropic's counts: ``input_tokens`` already excludes both cache counts."""
        return cls(
            input_tokens=input_tokens or 0,
            output_tokens=output_tokens or 0,
            cache_write_tokens=cache_creation_input_tokens or 0,
            cache_read_tokens=cache_read_input_tokens or 0,
        )

    @classmethod
    def from_openai(
        cls,
        *,
        prompt_tokens: int | None,
        completion_tokens: int | None,
        cached_tokens: int | None = None,
    ) -> Usage:
        """OpenAI's counts: ``prompt_tokens`` includes ``cached_tokens``, so they are taken out."""
        prompt = prompt_tokens or 0
        cached = min(cached_tokens or 0, prompt)
        return cls(input_tokens=prompt - cached, output_tokens=completion_tokens or 0, cache_read_tokens=cached)

    @property
    def prompt_tokens(self) -> int:
        """The whole prompt: uncached input plus cache writes and reads."""
        return self.input_tokens + self.cache_write_tokens + self.cache_read_tokens

    @property
    def total_tokens(self) -> int:
        """Every token, each counted once."""
        return self.prompt_tokens + self.output_tokens

    def __add__(self, other: Usage) -> Usage:
        if not isinstance(other, Usage):
            return NotImplemented
        if self.cost_usd is None and other.cost_usd is None:
            cost = None
        else:
            cost = (self.cost_usd or 0.0) + (other.cost_usd or 0.0)
        return Usage(
            input_tokens=self.input_tokens + other.input_tokens,
            output_tokens=self.output_tokens + other.output_tokens,
            cache_write_tokens=self.cache_write_tokens + other.cache_write_tokens,
            cache_read_tokens=self.cache_read_tokens + other.cache_read_tokens,
            cost_usd=cost,
        )

    def with_cost(self, cost_usd: float | None) -> Usage:
        return replace(self, cost_usd=cost_usd)

    def to_dict(self) -> dict[str, object]:
        """A JSON-ready dict (what decision-log rows carry under ``usage``)."""
        return {
            "input_tokens": self.input_tokens,
            "output_tokens": self.output_tokens,
            "cache_write_tokens": self.cache_write_tokens,
            "cache_read_tokens": self.cache_read_tokens,
            "total_tokens": self.total_tokens,
            "cost_usd": None if self.cost_usd is None else round(self.cost_usd, 8),
        }


def billed_cost(reported: object) -> float | None:
    """The US dollars a provider billed, from the ``cost`` its usage report carries; ``None`` when it carries none."""
    value = reported.get("cost") if isinstance(reported, Mapping) else getattr(reported, "cost", None)
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        return None
    return float(value) if math.isfinite(value) and value >= 0 else None
