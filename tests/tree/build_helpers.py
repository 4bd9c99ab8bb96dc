"""Catalogs and checks shared by the tree-builder tests."""

from __future__ import annotations

import random
import re
from collections import Counter
from pathlib import Path

from semif_agent.tree.build import LeafSpec

CORPUS = Path(__file__).resolve().parents[1] / "fixtures" / "skills-corpus"  # copies of real skills

DOMAINS = {
    "music": ["play a song", "pause the playlist", "skip the track", "like an album", "shuffle the radio"],
    "travel": ["book a flight", "find a hotel", "rent a car", "check in for the trip", "cancel the booking"],
    "money": ["pay an invoice", "transfer money", "check the bank balance", "split the bill", "track a budget"],
    "cooking": ["find a recipe", "plan the meals", "make a grocery list", "convert oven temperature", "time the pasta"],
    "health": ["log a workout", "count the steps", "track the sleep", "book a doctor visit", "refill a prescription"],
    "weather": [
        "forecast the rain",
        "show the temperature",
        "warn about storms",
        "report the wind",
        "track the humidity",
    ],
    "garden": ["water the plants", "prune the roses", "plant tomato seeds", "mow the lawn", "compost the leaves"],
}


def catalog(n: int, seed: int = 7) -> list[LeafSpec]:
    """``n`` skills from a few domains, each named for its domain (valid code-skill names)."""
    rng = random.Random(seed)
    skills = []
    for i in range(n):
        domain = list(DOMAINS)[i % len(DOMAINS)]
        action = rng.choice(DOMAINS[domain])
        skills.append(LeafSpec(f"{domain}_tool_{i}", f"{action.capitalize()} in the {domain} app, variant {i}."))
    return skills


def children_counts(built: dict) -> Counter:
    counts = Counter({c["name"]: 0 for c in built["categories"]})
    counts.update(c["parent"] for c in built["categories"] if "parent" in c)
    counts.update(s["category"] for s in built["skills"])
    return counts


def depth(built: dict) -> int:
    """Decisions from the top down to the deepest skill."""
    parents = {c["name"]: c.get("parent", "") for c in built["categories"]}

    def level(name: str) -> int:
        return 1 + (level(parents[name]) if parents[name] else 0)

    return max(level(s["category"]) + 1 for s in built["skills"])


def least_depth(n: int, limit: int, top: int) -> int:
    """The fewest decisions a tree of ``n`` skills can have with these limits."""
    d = 2
    while top * limit ** (d - 1) < n:
        d += 1
    return d


def check_tree(
    built: dict, skills: list[LeafSpec], *, limit: int = 15, top: int | None = None, reserved: tuple[str, ...] = ()
) -> None:
    """Every skill once; no category over the limit, empty or with a single child; names valid, unique, free."""
    top = limit if top is None else top
    names = [s["name"] for s in built["skills"]]
    assert sorted(names) == sorted(s.name for s in skills)
    categories = [c["name"] for c in built["categories"]]
    assert len(set(categories)) == len(categories)
    assert all(re.fullmatch(r"[a-z0-9_]+", c) for c in categories)
    assert not set(categories) & (set(names) | set(reserved) | {"none"})
    counts = children_counts(built)
    assert max(counts.values()) <= limit
    if len(skills) > 1:
        assert min(counts.values()) >= 2
    assert all(s["category"] in counts for s in built["skills"])
    tops = [c for c in built["categories"] if "parent" not in c]
    assert 1 <= len(tops) <= top
    assert all(c["description"] for c in built["categories"])
