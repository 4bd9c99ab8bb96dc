"""``Any`` stays rare in the package: data between the parts has real types (TypedDicts, protocols, the concrete
classes, :data:`semif_agent._json.JsonObject`), so mypy can follow a renamed field or a wrong call."""

from __future__ import annotations

import re
from pathlib import Path

import semif_agent

PACKAGE = Path(semif_agent.__file__).resolve().parent
ANY_PER_THOUSAND_LINES = 12.0


def test_any_is_used_at_most_twelve_times_per_thousand_lines() -> None:
    uses = lines = 0
    for path in PACKAGE.rglob("*.py"):
        text = path.read_text(encoding="utf-8")
        uses += len(re.findall(r"\bAny\b", text))
        lines += text.count("\n")
    density = 1000 * uses / lines
    assert density <= ANY_PER_THOUSAND_LINES, f"Any {uses} times in {lines} lines: {density:.1f} per 1,000"
