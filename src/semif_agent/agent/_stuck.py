"""Stuck detection: the same tool call, with the same result, round after round.

A call's key is its tool, its arguments and a digest of its full result
(before any cap) and error flag, so polling that sees a changing result
never counts. When one key has been in :data:`REPEATS` consecutive rounds,
the model gets one nudge; if the round right after the nudge repeats it
again, the turn is stuck: it gets a wrap-up round and ends with
``stopped_by="stuck"``. A round that moves on re-arms the nudge.
"""

from __future__ import annotations

import json
from collections.abc import Iterable
from typing import Literal

from ._execution import Outcome

REPEATS = 3

_Key = tuple[str, str, int, bool]

NUDGE = (
    "[system] You have called {name} with the same arguments {count} rounds in a row and got the same "
    "{what} each time. Repeating it will not help: change the arguments, try another approach, or answer."
)


class StuckDetector:
    """Follows one turn's rounds of tool calls; says when to nudge and when the turn is stuck."""

    def __init__(self, repeats: int = REPEATS) -> None:
        self.repeats = repeats
        self._counts: dict[_Key, int] = {}
        self._nudged: _Key | None = None
        self.nudge_text = ""

    def observe(self, outcomes: Iterable[Outcome]) -> Literal["ok", "nudge", "stuck"]:
        """Record a round's outcomes; ``nudge`` (see :attr:`nudge_text`), ``stuck`` or ``ok``."""
        counts: dict[_Key, int] = {}
        for outcome in outcomes:
            call = outcome.call
            key = (call.name, json.dumps(call.arguments, sort_keys=True, default=str), outcome.digest, outcome.is_error)
            counts[key] = self._counts.get(key, 0) + 1
        self._counts = counts
        if self._nudged is not None:
            if self._nudged in counts:
                return "stuck"
            self._nudged = None
        for key, count in counts.items():
            if count >= self.repeats:
                self._nudged = key
                self.nudge_text = NUDGE.format(name=key[0], count=count, what="error" if key[3] else "result")
                return "nudge"
        return "ok"

    def reset(self) -> None:
        """A round without tool calls: nothing repeats across it."""
        self._counts = {}
        self._nudged = None
