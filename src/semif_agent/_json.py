"""Type names for JSON as :mod:`json` reads and writes it: :data:`JsonValue` for any value, :data:`JsonObject` for
an object being built. Standard library only, so the kernel may import it; a value of a known shape gets a
``TypedDict`` of its own instead.

The type checker sees the recursive definition. At run time, where dataclass fields are read by
:func:`typing.get_type_hints` and pydantic, a JSON value is an ``object``: a recursive alias would not resolve from
the modules that use it, and any value is taken there as it is, as before.

JSON lines (one value a line, the logs and the skill trace) are written by :func:`json_line` and split by
:func:`split_json_lines`: a line ends at ``"\\n"`` only. Text kept as it is (not ``\\u``-escaped) may hold
characters other readers take for a line break (U+2028 and U+2029 for JavaScript and :meth:`str.splitlines`,
U+0085 and the separators ``\\x1c`` to ``\\x1e`` for :meth:`str.splitlines` too): those the writer does not escape
(U+0085, U+2028, U+2029; JSON escapes the control characters already) it escapes, and the reader never splits at any."""

from __future__ import annotations

import json
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


_LINE_BREAKS = (("\x85", "\\u0085"), ("\u2028", "\\u2028"), ("\u2029", "\\u2029"))
"""The characters JSON leaves raw that a reader may take for a line break, and their escapes."""


def json_line(value: object) -> str:
    """``value`` as the text of one JSON line (without its ``"\\n"``): any other text kept as it is, but for
    U+0085, U+2028 and U+2029, escaped, so a reader that splits at them too still reads one line. Values JSON
    cannot write are written as their ``str``."""
    text = json.dumps(value, ensure_ascii=False, default=str)
    for raw, escaped in _LINE_BREAKS:
        if raw in text:  # only ever inside a string, where the escape reads back as the same character
            text = text.replace(raw, escaped)
    return text


def split_json_lines(text: str) -> list[str]:
    """The lines of a JSON-lines text: split at ``"\\n"`` only, never at the other characters
    :meth:`str.splitlines` takes for a line break (a line's strings may hold them raw)."""
    return text.split("\n")
