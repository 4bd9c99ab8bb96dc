"""Text cut to fit a line or an excerpt (:func:`clip`), made inert on a terminal (:func:`inert`), figures as
percentages (:func:`percent`, :func:`percent_figure`) and counts with their noun (:func:`plural`); standard library
only, so the kernel may import it."""

from __future__ import annotations

import re

_BIDI = "\u061c\u200e\u200f\u202a\u202b\u202c\u202d\u202e\u2066\u2067\u2068\u2069"
_SURROGATES = "\ud800-\udfff"  # alone, no text: no encoding can write one (a YAML "\\ud800" escape makes one)
_CONTROLS = re.compile(f"[\x00-\x08\x0b-\x1f\x7f-\x9f{_BIDI}{_SURROGATES}]")
_OUR_COLOUR = re.compile(r"\x1b\[[0-9;]*m")


def _escaped(match: re.Match[str]) -> str:
    code = ord(match.group())
    return f"\\x{code:02x}" if code < 0x20 else f"\\u{code:04x}"


def inert(text: str) -> str:
    """``text`` safe to print on a terminal: every control character and escape sequence shown escaped.

    C0 controls but the line break and the tab (ESC, BEL, backspace, carriage
    return...) become ``\\x1b``-style text; DEL, the C1 controls (``\\u009b``,
    a one-character CSI) and the bidirectional overrides become ``\\u202e``-style
    text, and so does a lone surrogate (which no encoding could write). So an ANSI sequence, an OSC 52 "set the clipboard" or a line that
    rewrites itself is printed as letters, never obeyed. The escapes are valid
    JSON escapes too, so JSON stays JSON.
    """
    return _CONTROLS.sub(_escaped, text)


def inert_but_colour(text: str) -> str:
    """:func:`inert`, but keeping plain colour and weight sequences (SGR, ``ESC [ ... m``): our own styling."""
    kept = _OUR_COLOUR.split(text)
    colours = _OUR_COLOUR.findall(text)
    return "".join(inert(part) + (colours[i] if i < len(colours) else "") for i, part in enumerate(kept))


def clip(text: str, limit: int, *, one_line: bool = True) -> str:
    """``text`` in at most ``limit`` characters, ending in "…" when it was cut.

    ``one_line`` (the default) first makes every run of white space, line
    breaks included, one space; ``one_line=False`` keeps the text's lines.
    A cut falls after the last whole word when that keeps more than half of
    ``limit``, else mid-word.
    """
    text = " ".join(text.split()) if one_line else text.strip()
    if len(text) <= limit:
        return text
    if limit <= 1:
        return "…"[:limit]
    cut = text[: limit - 1]
    before_word = cut.rsplit(None, 1)[0]
    return (before_word if len(before_word) > limit // 2 else cut).rstrip() + "…"


def percent(probability: float | None) -> str:
    """A probability as a whole percentage: "82%", and "<1%" / ">99%" rather than a misleading 0% or 100%; "-" for none."""
    if probability is None:
        return "-"
    if 0 < probability < 0.005:
        return "<1%"
    if 0.995 <= probability < 1:
        return ">99%"
    return f"{probability:.0%}"


def percent_figure(value: float | None) -> str:
    """A measured share to one decimal ("81.6%"); "-" when there is none."""
    return "-" if value is None else f"{value:.1%}"


def plural(count: int, one: str, many: str | None = None) -> str:
    """``1 decision row``, ``2 decision rows`` (``many``: the plural when it is not ``one`` + "s")."""
    return f"{count} {one if count == 1 else (many or one + 's')}"


def text_key(text: str) -> str:
    """``text`` as two requests are the same request: case and spacing aside."""
    return " ".join(text.casefold().split())
