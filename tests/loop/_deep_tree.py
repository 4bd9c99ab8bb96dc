"""A starter workspace whose skills hang four levels deep among 300 other skills (for the route probability tests)."""

from __future__ import annotations

import json
from pathlib import Path

from semif_agent.starter import create_workspace

SUBJECTS = (
    "invoices",
    "Kubernetes clusters",
    "PDF documents",
    "spreadsheets",
    "photos",
    "SQL databases",
    "pull requests",
    "blog posts",
    "marketing campaigns",
    "flight bookings",
    "recipes",
    "customer support tickets",
    "server logs",
    "unit tests",
    "slide decks",
    "podcast episodes",
    "tax returns",
    "job candidates",
    "sales leads",
    "legal contracts",
)
TASKS = (
    "Summarise",
    "Translate",
    "Audit",
    "Convert the format of",
    "Analyse trends in",
    "Design templates for",
    "Optimise",
    "Validate",
    "Migrate",
    "Benchmark",
    "Document",
    "Monitor",
    "Review",
    "Archive",
    "Forecast costs of",
)
AREAS = ("business", "engineering", "content", "operations")


def deep_workspace(root: Path) -> Path:
    """The starter at ``root``, its categories moved under ``personal`` > ``organising``, beside 300 skills (20
    subjects of 15 tasks, each subject in one of four areas): the starter's skills are the fourth decision down."""
    create_workspace(root)
    path = root / "data" / "categories.json"
    doc = json.loads(path.read_text(encoding="utf-8"))
    for category in doc["categories"]:
        category["parent"] = "organising"
    added = [
        {"name": "personal", "description": "Personal organising: mail, notes, calendar, to-dos and files."},
        {"name": "organising", "description": "Organising my day.", "parent": "personal"},
    ]
    for area in AREAS:
        added.append({"name": area, "description": f"Skills for {area}."})
    for at, subject in enumerate(SUBJECTS):
        category = subject.split()[-1].lower() + f"_{at}"
        added.append({"name": category, "description": f"Work on {subject}.", "parent": AREAS[at % len(AREAS)]})
        for task in TASKS:
            doc["skills"].append(
                {
                    "name": f"{category}.{task.split()[0].lower()}",
                    "category": category,
                    "description": f"{task} {subject} and report what was found.",
                    "effects": "read",
                }
            )
    doc["categories"] = added + doc["categories"]
    path.write_text(json.dumps(doc, indent=2), encoding="utf-8")
    return root
