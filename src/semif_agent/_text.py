"""Text cut to fit a line or an excerpt (:func:`clip`), and figures as percentages (:func:`percent`,
:func:`percent_figure`); standard library only, so the kernel may import it."""

from __future__ import annotations


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
