"""Folders left out of a search for skills or of a load, each with why: the first :data:`MAX_NAMED` by name, the
rest counted by reason.

A skills folder is untrusted content: it can hold hundreds of thousands of
links out of it or broken skills. Each is left out with a reason, but only
the first few are named, so no folder tree can make a load report, the
stored tree or a listing large; the others are still counted, by reason,
so nothing is left out without one.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Mapping
from typing import Generic, TypeVar

from .._text import plural

MAX_NAMED = 200
"""The most folders a search, or a load report, names as left out; the others are counted by reason."""
SEARCH_STOPPED = "the search stops after"
"""Words of the reason given where a search stopped at one of its bounds: that folder is always named, so a report
says where the rest of a collection was not searched."""

Item = TypeVar("Item")


class LeftOut(Generic[Item]):
    """What was left out: ``named`` (the first :data:`MAX_NAMED` items, in the order met), and ``more`` (how many
    others, by reason)."""

    def __init__(self, limit: int | None = None) -> None:
        self.limit = MAX_NAMED if limit is None else limit
        self.named: list[Item] = []
        self.more: Counter[str] = Counter()

    def add(self, item: Item, why: str) -> None:
        """Note ``item``, left out for ``why``: by name while there is room (where a search stopped, always), else
        counted."""
        if len(self.named) < self.limit or SEARCH_STOPPED in why:
            self.named.append(item)
        else:
            self.more[why] += 1

    def has_room(self) -> bool:
        """Whether the next item left out would still be named."""
        return len(self.named) < self.limit

    def count(self, more: Mapping[str, int]) -> None:
        """Add the folders another search counted without naming them."""
        self.more.update({why: number for why, number in more.items() if number > 0})

    def __len__(self) -> int:
        return len(self.named) + sum(self.more.values())


def more_lines(more: Mapping[str, int]) -> list[str]:
    """``3 more folders left out, not named: why`` for each reason of ``more``, most first."""
    ordered = sorted(more.items(), key=lambda pair: (-pair[1], pair[0]))
    return [f"{plural(number, 'more folder')} left out, not named: {why}" for why, number in ordered]


def counts_from(value: object) -> dict[str, int]:
    """Reason counts read back from JSON (``{"why": number}``); anything else reads as none."""
    if not isinstance(value, Mapping):
        return {}
    return {str(why): number for why, number in value.items() if isinstance(number, int) and number > 0}
