"""The routing requests for the starter tree: well-formed, covering every skill, with no-skill requests."""

from __future__ import annotations

import json
from collections import Counter
from pathlib import Path

from semif_agent.starter import TEMPLATE_DIR

REQUESTS = Path(__file__).resolve().parents[1] / "routing" / "starter_requests.jsonl"


def load():
    return [json.loads(line) for line in REQUESTS.read_text(encoding="utf-8").splitlines() if line.strip()]


def test_routing_requests_cover_every_skill():
    rows = load()
    doc = json.loads((TEMPLATE_DIR / "data" / "categories.json").read_text(encoding="utf-8"))
    names = {s["name"] for s in doc["skills"]}
    examples = {e.lower() for s in doc["skills"] for e in s["examples"]}
    assert len(rows) >= 48
    for row in rows:
        assert set(row) == {"text", "skill"} and row["text"].strip() == row["text"] and row["text"]
        assert row["skill"] is None or row["skill"] in names
        assert row["text"].lower() not in examples, "requests are not copies of the manifests' examples"
    texts = [r["text"].lower() for r in rows]
    assert len(set(texts)) == len(texts)
    counts = Counter(r["skill"] for r in rows)
    assert all(counts[name] >= 3 for name in names), counts
    assert counts[None] >= 6
