"""Type names for JSON as :mod:`json` reads and writes it: :data:`JsonValue` for any value, :data:`JsonObject` for
an object being built. Standard library only, so the kernel may import it; a value of a known shape gets a
``TypedDict`` of its own instead.

The type checker sees the recursive definition. At run time, where dataclass fields are read by
:func:`typing.get_type_hints` and pydantic, a JSON value is an ``object``: a recursive alias would not resolve from
the modules that use it, and any value is taken there as it is, as before."""

from __future__ import annotations

from typing import TYPE_CHECKING, TypeAlias

if TYPE_CHECKING:
    from collections.abc import Mapping, Sequence

    JsonValue: TypeAlias = None | bool | int | float | str | Sequence["JsonValue"] | Mapping[str, "JsonValue"]
    """A value :func:`json.dumps` can write (and :func:`json.loads` return). Its arrays and objects are read-only
    views, so a ``list[str]`` or a ``dict[str, int]`` is one as it is."""
else:
    JsonValue = object

JsonObject: TypeAlias = dict[str, JsonValue]
"""A JSON object: a message, a payload or a row whose keys are read with checks."""
