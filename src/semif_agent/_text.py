"""Text cut to fit a line or an excerpt: :func:`clip` (standard library only; the kernel may import it)."""

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
