"""What a call's child says to the worker, read as untrusted data: :func:`decode_line` and :class:`Heard`.

The child holds the write end of its channel, and the code it runs can write
there whatever it likes: a forged value, a second one, a value for another
call, an error report meant to change how the call is judged, a line nested
100,000 deep or 50 MB long, bytes that are not text. So the worker reads
each line as data about the call, never as an instruction to itself:

- a line is at most the call's ``max_message`` bytes (default
  :data:`~.channel.MAX_LINE_BYTES`) and its JSON nests at most
  :data:`MAX_DEPTH` deep, which a linear scan checks before the parser
  (whose recursion a deeper line would exhaust) sees it; it is UTF-8 text
  and strict JSON (no ``NaN``, no lone surrogate, which the worker could not
  pass on);
- each kind of line has one shape, and its place: the confinement report
  first, one value (for this call), one error report (``memory`` or
  ``exception``), one question at a time;
- what a line may change is the child's own outcome: its value, the error
  type its failure is filed under. The worker's watch over the call (its
  deadline, its disk allowance, its limits, its verdict of ``disk``,
  ``channel`` or ``timeout``) is set from the call's spec before the fork,
  and nothing the child writes reaches it.

A line that breaks these rules raises ``ValueError`` saying how; the worker
then kills that call alone, as a ``channel`` failure. Standard library only.
"""

from __future__ import annotations

import json
import re
from array import array
from collections.abc import Collection
from itertools import accumulate
from typing import Any, Literal

MAX_DEPTH = 64
"""How deep the JSON of a line from a call's child may nest (arrays and objects)."""
CLAIMS = frozenset({"memory", "exception"})
"""The error types a child may report for itself (what it ran out of, that its function raised)."""
Said = (
    tuple[Literal["ask"], dict[str, Any]]
    | tuple[Literal["held"], dict[str, str]]
    | tuple[Literal["warm"], list[str]]
    | tuple[Literal["done"], tuple[int, bool]]
)
"""What a line asks of the worker: a question to relay, the confinement that held, standard modules the
zygote may import, the end of a call in a warm process (its exit status, whether it asks to stay)."""
_STRING = re.compile(rb'"[^"\\]*(?:\\.[^"\\]*)*"')
_KINDS = frozenset({b"A", b"V", b"E", b"C", b"W", b"D"})  # a question, the value, an error type,
# confinement, warm modules, the end of a call in a warm process
_SURROGATE_ESCAPE = re.compile(r"\\u[dD][89a-fA-F]")
_STEPS = bytes.maketrans(b"[{]}", b"\x01\x01\xff\xff")  # opening: +1, closing: -1 (signed bytes)
_NOT_BRACKET = bytes(sorted(set(range(256)) - set(b"[]{}")))


def nesting_depth_exceeds(text: bytes, limit: int) -> bool:
    """Whether the JSON ``text`` nests deeper than ``limit`` (arrays and objects; strings skipped).

    Linear and without recursion: the strings removed, the brackets kept as
    steps of +1 and -1, the deepest running total.
    """
    if text.count(b"[") + text.count(b"{") <= limit:
        return False
    steps = array("b")
    steps.frombytes(_STRING.sub(b"", text).translate(_STEPS, _NOT_BRACKET))
    return max(accumulate(steps), default=0) > limit


def _refuse_constant(name: str) -> object:
    raise ValueError(f"{name} is not JSON")


def decode_line(line: bytes, max_bytes: int) -> tuple[bytes, object]:
    """``(kind letter, data)`` of one line from a call's child; ``ValueError`` saying what is wrong with it."""
    kind, body = line[:1], line[1:]
    if kind not in _KINDS:
        raise ValueError("a line of a kind the channel does not know")
    if len(body) > max_bytes:
        raise ValueError(f"a line larger than {max_bytes} bytes")
    if nesting_depth_exceeds(body, MAX_DEPTH):
        raise ValueError(f"a line nested deeper than {MAX_DEPTH} levels")
    try:
        text = body.decode("utf-8")  # strict: json.loads would let encoded lone surrogates through
    except UnicodeDecodeError:
        raise ValueError("a line that is not UTF-8 text") from None
    try:
        data = json.loads(text, parse_constant=_refuse_constant)
    except (ValueError, RecursionError):
        raise ValueError("a line that is not JSON") from None
    if _SURROGATE_ESCAPE.search(text):  # rare: then check that no escape left half a character
        try:
            json.dumps(data, ensure_ascii=False).encode("utf-8")
        except UnicodeEncodeError:
            raise ValueError("a line with half a character (a lone surrogate)") from None
    return kind, data


class Heard:
    """What one call's child has said so far, each line checked (see the module's documentation)."""

    __slots__ = (
        "call_id",
        "max_bytes",
        "lines",
        "asking",
        "value",
        "has_value",
        "claimed",
        "warmed",
        "may_end",
    )

    def __init__(self, call_id: int, max_bytes: int, *, may_end: bool = False, confined: bool = False) -> None:
        """For call ``call_id``, lines of at most ``max_bytes``; ``may_end``: the call runs in a process that
        may serve more (:mod:`._resident`), which ends it with a ``D`` line; ``confined``: that process told
        its confinement for an earlier call (a ``C`` line is refused then)."""
        self.call_id, self.max_bytes, self.may_end = call_id, max_bytes, may_end
        self.lines = 1 if confined else 0
        self.asking = self.has_value = self.warmed = False
        self.value: object = None
        self.claimed = ""  # the error type the child reported for itself: one of CLAIMS, or nothing

    def take(self, line: bytes, warm_later: Collection[str]) -> Said | None:
        """Check one line and keep what it says of the call.

        Returns what the worker acts on, or None: ``("ask", message)`` a
        question to relay, ``("held", {name: how})`` the confinement the child
        set up (only as its first line), ``("warm", [module, ...])`` modules of
        ``warm_later`` the call imported, ``("done", (status, asks to stay))`` the end of a call that
        ``may_end`` (no question open). Raises ``ValueError`` for a line that breaks the channel's rules.
        """
        kind, data = decode_line(line, self.max_bytes)
        self.lines += 1
        if kind == b"A":
            if not isinstance(data, dict):
                raise ValueError("a question that is not a JSON object")
            if self.asking:
                raise ValueError("a question before the last one was answered")
            self.asking = True
            return "ask", data
        if kind == b"V":
            self._take_value(data)
            return None
        if kind == b"E":
            if not isinstance(data, str) or data not in CLAIMS or self.claimed:
                raise ValueError(f"an error report that is not one of {', '.join(sorted(CLAIMS))}, once")
            self.claimed = str(data)
            return None
        if kind == b"C":
            if self.lines != 1 or not isinstance(data, dict):
                raise ValueError("a confinement report that is not the call's first line")
            held = {key: how for key, how in data.items() if isinstance(key, str) and isinstance(how, str)}
            if len(held) != len(data):
                raise ValueError("a confinement report that is not names and words")
            return "held", held
        if kind == b"W":
            names = (
                [name for name in data if isinstance(name, str) and name in warm_later]
                if isinstance(data, list)
                else []
            )
            if self.warmed or not isinstance(data, list) or len(names) != len(data):
                raise ValueError("a list of warm modules the worker does not keep")
            self.warmed = True
            return "warm", names
        if kind == b"D":
            if not self.may_end or self.asking or not isinstance(data, dict) or set(data) != {"call", "code", "keep"}:
                raise ValueError("an end of call that is not {call, code, keep} from a warm process, no question open")
            if data["call"] != self.call_id or isinstance(data["call"], bool):
                raise ValueError("an end of another call")
            code, keep = data["code"], data["keep"]
            if type(code) is not int or type(keep) is not bool:
                raise ValueError("an end of call whose status is not a whole number")
            return "done", (code, keep)
        raise ValueError("a line of a kind the channel does not know")

    def _take_value(self, data: object) -> None:
        if not isinstance(data, dict) or set(data) != {"call", "value"}:
            raise ValueError('a result that is not {"call": id, "value": ...}')
        if data["call"] != self.call_id or isinstance(data["call"], bool):
            raise ValueError("a result for another call")
        if self.has_value:
            raise ValueError("a second result")
        self.value, self.has_value = data["value"], True
