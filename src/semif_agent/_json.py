"""Type names for JSON as :mod:`json` reads and writes it: :data:`JsonValue` for any value, :data:`JsonObject` for
an object. Standard library only, so the kernel may import it; a value of a known shape gets a ``TypedDict`` of its
own instead."""

from __future__ import annotations

from typing import TypeAlias

JsonValue: TypeAlias = "None | bool | int | float | str | list[JsonValue] | dict[str, JsonValue]"
"""A value :func:`json.loads` can return (and :func:`json.dumps` can write)."""

JsonObject: TypeAlias = "dict[str, JsonValue]"
"""A JSON object: a message, a payload or a row whose keys are read with checks."""
