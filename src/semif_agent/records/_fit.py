"""Rows cut to fit: no row of the log is larger than :data:`ROW_BYTES`, whatever a skill returned or printed.

A row over the cap keeps every field and every key; its largest values are
cut, the smallest kept whole: each value in turn, smallest first, gets an
equal share of what is left. A cut text ends with a marker saying how much
was cut (``… [40,000,123 bytes cut]``); a cut list keeps its first items.
"""

from __future__ import annotations

from typing import Any

from .._json import json_line

ROW_BYTES = 256 * 1024
"""The largest row written to the log, in bytes of JSON (256 KiB)."""


def size_of(value: Any) -> int:
    """``value``'s size in bytes as the log writes it (JSON, UTF-8)."""
    return len(json_line(value).encode("utf-8"))


def fit_row(row: dict[str, Any], limit: int = ROW_BYTES) -> dict[str, Any]:
    """``row`` as it is when it fits in ``limit`` bytes, else with its largest values cut to fit."""
    if size_of(row) <= limit:
        return row
    return _fit_mapping(row, limit)


def _fit(value: Any, budget: int) -> Any:
    if size_of(value) <= budget:
        return value
    if isinstance(value, str):
        return clip_text(value, budget)
    if isinstance(value, dict):
        return _fit_mapping(value, budget)
    if isinstance(value, (list, tuple)):
        return _fit_items(list(value), budget)
    return value  # a number or a flag: nothing to cut


def _fit_mapping(mapping: dict[str, Any], budget: int) -> dict[str, Any]:
    """Every key kept; each value, smallest first, cut to an equal share of what the others left."""
    left = budget - size_of({key: None for key in mapping})
    sizes = {key: size_of(value) for key, value in mapping.items()}
    fitted: dict[str, Any] = {}
    for done, key in enumerate(sorted(mapping, key=sizes.__getitem__)):
        share = max(0, left // (len(mapping) - done))
        fitted[key] = _fit(mapping[key], share + 4)  # + the "null" the key's own size counted
        left -= size_of(fitted[key]) - 4
    return {key: fitted[key] for key in mapping}


def _fit_items(items: list[Any], budget: int) -> list[Any]:
    """The first items that fit in ``budget`` (the last one cut to what is left)."""
    kept: list[Any] = []
    left = budget - 2
    for item in items:
        if left <= 2:
            break
        item = _fit(item, left - 2)
        left -= size_of(item) + 2
        if left < 0:
            break
        kept.append(item)
    return kept


def clip_text(text: str, budget: int) -> str:
    """``text`` cut so that, as JSON, it takes at most ``budget`` bytes, ending in how much was cut."""
    whole = len(text.encode("utf-8"))
    keep = min(len(text), max(0, budget))
    while True:
        cut = whole - len(text[:keep].encode("utf-8"))
        clipped = f"{text[:keep]}… [{cut:,} bytes cut]"
        over = size_of(clipped) - budget
        if over <= 0 or keep == 0:
            return clipped
        keep = max(0, keep - max(1, over))
