"""Charts drawn on the server as inline SVG: no script and no chart library, so they work offline.

Every text in a chart is escaped; shapes are sized with attributes, never
inline styles (the pages' Content-Security-Policy allows no inline style).
"""

from __future__ import annotations

from html import escape

from markupsafe import Markup

OUTCOME_COLOURS = {"success": "#2e8b57", "failure": "#c0392b", "unclear": "#d4a017", "none": "#9aa0a6"}
INK, GRID, ACCENT = "#333333", "#dddddd", "#3b6fb6"


def _svg(width: int, height: int, body: list[str], title: str) -> Markup:
    return Markup(
        f'<svg class="chart" viewBox="0 0 {width} {height}" width="{width}" height="{height}" role="img" '
        f'aria-label="{escape(title)}" xmlns="http://www.w3.org/2000/svg"><title>{escape(title)}</title>'
        + "".join(body)
        + "</svg>"
    )


def _text(x: float, y: float, text: str, *, anchor: str = "start", size: int = 11, fill: str = INK) -> str:
    return (
        f'<text x="{x:.1f}" y="{y:.1f}" font-size="{size}" text-anchor="{anchor}" fill="{fill}" '
        f'font-family="sans-serif">{escape(text)}</text>'
    )


def probability_bar(probability: float | None, *, chosen: bool = False, width: int = 160) -> Markup:
    """A bar as long as ``probability`` (of ``width`` pixels), filled darker for the chosen option."""
    filled = 0 if probability is None else max(0.0, min(1.0, probability)) * width
    colour = ACCENT if chosen else "#9bb5dc"
    return Markup(
        f'<svg class="pbar" width="{width}" height="12" viewBox="0 0 {width} 12" aria-hidden="true">'
        f'<rect x="0" y="0" width="{width}" height="12" fill="#eef1f6"/>'
        f'<rect x="0" y="0" width="{filled:.1f}" height="12" fill="{colour}"/></svg>'
    )


def line_chart(points: list[tuple[str, float]], title: str, *, width: int = 640, height: int = 220) -> Markup:
    """Values between 0 and 1 over labelled periods, as a line with dots."""
    left, right, top, bottom = 40, 10, 10, 40
    inner_w, inner_h = width - left - right, height - top - bottom
    body = _axes_0_to_1(left, top, inner_w, inner_h)
    if not points:
        body.append(_text(width / 2, height / 2, "no labelled runs yet", anchor="middle"))
        return _svg(width, height, body, title)
    step = inner_w / max(1, len(points) - 1)
    xy = [
        (left + (i * step if len(points) > 1 else inner_w / 2), top + inner_h * (1 - value))
        for i, (_, value) in enumerate(points)
    ]
    if len(xy) > 1:
        body.append(
            f'<polyline fill="none" stroke="{ACCENT}" stroke-width="2" points="'
            + " ".join(f"{x:.1f},{y:.1f}" for x, y in xy)
            + '"/>'
        )
    shown_every = max(1, len(points) // 8)
    for i, ((label, value), (x, y)) in enumerate(zip(points, xy)):
        body.append(
            f'<circle cx="{x:.1f}" cy="{y:.1f}" r="3.5" fill="{ACCENT}"><title>{escape(label)}: '
            f"{value:.0%}</title></circle>"
        )
        if i % shown_every == 0 or i == len(points) - 1:
            body.append(_text(x, height - bottom + 16, label, anchor="middle", size=10))
    return _svg(width, height, body, title)


def reliability_diagram(
    bins: list[tuple[float, float, int, float | None, float | None]], title: str, *, size: int = 300
) -> Markup:
    """Accuracy per bin of stated probability, beside the diagonal a calibrated engine would follow."""
    left, top, inner = 40, 10, size - 60
    body = _axes_0_to_1(left, top, inner, inner)
    body.append(
        f'<line x1="{left}" y1="{top + inner}" x2="{left + inner}" y2="{top}" stroke="{INK}" '
        'stroke-dasharray="4 3" stroke-width="1"/>'
    )
    width = inner / max(1, len(bins))
    for number, (low, high, count, _, accuracy) in enumerate(bins):
        if not count or accuracy is None:
            continue
        bar = inner * accuracy
        body.append(
            f'<rect x="{left + number * width + 1:.1f}" y="{top + inner - bar:.1f}" width="{width - 2:.1f}" '
            f'height="{bar:.1f}" fill="{ACCENT}" fill-opacity="0.75"><title>{low:.0%}-{high:.0%}: '
            f"{accuracy:.0%} right of {count}</title></rect>"
        )
    body.append(_text(left + inner / 2, size - 14, "probability the engine gave its choice", anchor="middle", size=10))
    return _svg(size, size, body, title)


def bar_chart(items: list[tuple[str, int]], title: str, *, width: int = 640) -> Markup:
    """Horizontal bars, one per labelled count."""
    row, label_w = 20, 260
    height = max(1, len(items)) * row + 10
    body: list[str] = []
    most = max((n for _, n in items), default=0) or 1
    if not items:
        body.append(_text(10, 16, "none yet"))
    for i, (label, count) in enumerate(items):
        y = 5 + i * row
        length = (width - label_w - 50) * count / most
        body.append(_text(label_w - 6, y + 13, label, anchor="end"))
        body.append(f'<rect x="{label_w}" y="{y + 3}" width="{length:.1f}" height="{row - 6}" fill="{ACCENT}"/>')
        body.append(_text(label_w + length + 4, y + 13, str(count)))
    return _svg(width, height, body, title)


def stacked_bars(items: list[tuple[str, dict[str, int]]], title: str, *, width: int = 640) -> Markup:
    """One horizontal bar per label, split by outcome (success, failure, unclear, not assessed)."""
    row, label_w = 20, 200
    height = max(1, len(items)) * row + 30
    body: list[str] = []
    most = max((sum(counts.values()) for _, counts in items), default=0) or 1
    for i, (label, counts) in enumerate(items):
        y = 5 + i * row
        x = float(label_w)
        body.append(_text(label_w - 6, y + 13, label, anchor="end"))
        for outcome, count in counts.items():
            if not count:
                continue
            length = (width - label_w - 50) * count / most
            body.append(
                f'<rect x="{x:.1f}" y="{y + 3}" width="{length:.1f}" height="{row - 6}" '
                f'fill="{OUTCOME_COLOURS.get(outcome, GRID)}"><title>{escape(outcome)}: {count}</title></rect>'
            )
            x += length
        body.append(_text(x + 4, y + 13, str(sum(counts.values()))))
    legend_y = height - 8
    for i, (outcome, colour) in enumerate(OUTCOME_COLOURS.items()):
        body.append(f'<rect x="{label_w + i * 100}" y="{legend_y - 9}" width="10" height="10" fill="{colour}"/>')
        body.append(_text(label_w + i * 100 + 14, legend_y, outcome if outcome != "none" else "not assessed", size=10))
    return _svg(width, height, body, title)


def _axes_0_to_1(left: float, top: float, width: float, height: float) -> list[str]:
    body = []
    for tick in (0, 0.25, 0.5, 0.75, 1):
        y = top + height * (1 - tick)
        body.append(f'<line x1="{left}" y1="{y:.1f}" x2="{left + width:.1f}" y2="{y:.1f}" stroke="{GRID}"/>')
        body.append(_text(left - 4, y + 4, f"{tick:.0%}", anchor="end", size=10))
    body.append(f'<line x1="{left}" y1="{top}" x2="{left}" y2="{top + height:.1f}" stroke="{INK}"/>')
    return body
