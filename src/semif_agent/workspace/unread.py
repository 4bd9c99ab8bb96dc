"""Names in ``semif.toml`` that semif does not read: a misspelt table or key is a warning, not a setting ignored unsaid.

A key a known table does not have (``[routing] act_treshold``) is one
warning naming the file, the table and the key, with the known key it is
close to (``did you mean act_threshold?``). A table semif does not know is
a plug-in's, kept without a word, unless its name is close to a known
table's (``[skils]``): then it is most likely a misspelling, and warned of
the same way. Tables whose other keys belong to someone else (``[engine]``'s
to the engine, ``[paths]`` and ``[config]``'s to the user) say so
(:data:`Others`).
"""

from __future__ import annotations

import difflib
import warnings
from collections.abc import Iterator, Mapping
from typing import Literal

Others = Literal["warned", "near", "kept"]
"""What a key a table does not know is: ``warned``, a misspelling (every one is warned of); ``near``, another
layer's (warned of only when close to a known key); ``kept``, a name of the user's own (never warned of)."""

_CLOSE = 0.8
"""How alike (difflib's ratio) a name must be to a known one to be taken for its misspelling when it may be meant."""


class SettingsWarning(UserWarning):
    """A name in ``semif.toml`` that semif does not read (a misspelt table or key): its setting is ignored."""


def warn_unread(raw: Mapping[str, object], tables: Mapping[str, tuple[frozenset[str], Others]], where: str) -> None:
    """One :class:`SettingsWarning` for each name of ``raw`` that is not read (see :func:`unread`)."""
    for line in unread(raw, tables):
        warnings.warn(f"{where}: {line}", SettingsWarning, stacklevel=2)


def unread(raw: Mapping[str, object], tables: Mapping[str, tuple[frozenset[str], Others]]) -> Iterator[str]:
    """What ``raw`` (a parsed semif.toml) names that is not read, in words, one line each.

    ``tables`` maps each known table to its known keys and what its other keys are.
    """
    for name, value in raw.items():
        if name not in tables:
            near = _near(name, tables, _CLOSE)
            if near:
                yield f"[{name}] is not a table semif reads; did you mean [{near}]?"
            continue
        keys, others = tables[name]
        if others == "kept" or not isinstance(value, Mapping):
            continue
        for key in value:
            if key in keys:
                continue
            near = _near(key, keys, _CLOSE if others == "near" else 0.6)
            if near:
                yield f"[{name}] {key} is not a setting semif reads; did you mean {near}?"
            elif others == "warned":
                yield f"[{name}] {key} is not a setting semif reads (it reads {', '.join(sorted(keys))})"


def _near(name: str, known: Mapping[str, object] | frozenset[str], cutoff: float) -> str | None:
    close = difflib.get_close_matches(str(name), list(known), n=1, cutoff=cutoff)
    return close[0] if close else None
