"""Check request files written for real skills: names, sources, repeats, and word overlap.

    python bench/data/check_requests.py [--collections DIR] bench/data/real_skill_requests_dev.jsonl [more.jsonl ...]

The pool is every skill of ``tests/fixtures/skills-corpus`` and of the public
collections ``bench/skill_collections.py`` fetches (``--collections``,
``.bench/skill-collections`` by default), loaded as the catalog
loads them. For each file it checks that every ``skill`` and ``also`` name
is a skill of the pool, that ``source`` is a folder of the pool holding a
skill of that name, and that no text repeats (within or across the files);
then it counts the requests that share at most two content words (stopwords
removed, a plural ``s`` dropped) with the target's description (with every
description the name carries, keeping the largest overlap). It ranks
nothing: it is safe to run on a set kept unseen. Exits 1 on any problem.
"""

from __future__ import annotations

import argparse
import json
import re
import sys
from collections import Counter
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
COLLECTIONS = ROOT / ".bench" / "skill-collections"
FIXTURES = ROOT / "tests" / "fixtures"
CORPUS = "skills-corpus"

STOPWORDS = frozenset(
    """a about above after again against all also am an and any are as at be because been before being
    below between both but by can could did do does doing don done down during each even every few for
    from further get gets got had has have having he her here hers him his how i if in into is it its
    just let like make me more most much must my need needs no nor not now of off on once one only or
    other our ours out over own per please same she should so some such than that the their theirs them
    then there these they this those through to too under until up us use used using very via want was
    we were what when where which while who whom why will with without would you your yours""".split()
)


def content_words(text: str) -> set[str]:
    """Lower-cased words of ``text`` without stopwords, a plural ``s`` dropped."""
    words = set()
    for word in re.findall(r"[a-z0-9]+", text.lower()):
        if word in STOPWORDS or len(word) < 2:
            continue
        words.add(word[:-1] if len(word) > 3 and word.endswith("s") and not word.endswith("ss") else word)
    return words


def load_pool(collections: Path) -> tuple[dict[str, list[str]], dict[str, set[str]]]:
    """Each skill name (lower-cased) with its descriptions, and each source folder with its names."""
    sys.path.insert(0, str(ROOT / "src"))
    from semif_agent.catalog.loader import find_skill_folders, load_skill

    descriptions: dict[str, list[str]] = {}
    sources: dict[str, set[str]] = {}
    for corpus, prefix in ((collections, ""), (FIXTURES / CORPUS, CORPUS + "/")):
        for _, folder in find_skill_folders(corpus, max_depth=12):
            descriptor = load_skill(folder, namespace="bench", source="custom", source_label="bench").descriptor
            if descriptor is None:
                continue
            name = descriptor.name.strip().lower()
            descriptions.setdefault(name, []).append(" ".join(descriptor.description.split()))
            sources.setdefault(prefix + folder.relative_to(corpus).as_posix(), set()).add(name)
    return descriptions, sources


def check(paths: list[Path], collections: Path = COLLECTIONS) -> int:
    descriptions, sources = load_pool(collections)
    print(f"pool: {sum(len(d) for d in descriptions.values())} skill folders, {len(descriptions)} names")
    problems = 0
    texts: Counter[str] = Counter()
    for path in paths:
        rows = [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines() if line.strip()]
        low, targets, overlaps = 0, set(), []
        for n, row in enumerate(rows, 1):
            texts[" ".join(row["text"].lower().split())] += 1
            name = row["skill"].strip().lower()
            targets.add(name)
            for wanted in [name, *(a.strip().lower() for a in row.get("also", []))]:
                if wanted not in descriptions:
                    print(f"{path.name}:{n}: no skill named {wanted!r} in the pool")
                    problems += 1
            if name not in sources.get(row.get("source", ""), set()):
                print(f"{path.name}:{n}: source {row.get('source')!r} holds no skill {row['skill']!r}")
                problems += 1
            if name in descriptions:
                shared = max(len(content_words(row["text"]) & content_words(d)) for d in descriptions[name])
                overlaps.append(shared)
                low += shared <= 2
        sets = Counter(row.get("set") for row in rows)
        with_also = sum(bool(row.get("also")) for row in rows)
        print(
            f"{path.name}: {len(rows)} requests, {len(targets)} distinct skills, sets {dict(sets)}, "
            f"{with_also} with `also`; <= 2 content words shared with the description: "
            f"{low}/{len(rows)} ({100 * low / max(len(rows), 1):.1f}%), overlap counts {sorted(Counter(overlaps).items())}"
        )
    for text, count in texts.items():
        if count > 1:
            print(f"repeated text ({count}x): {text!r}")
            problems += 1
    print("ok" if not problems else f"{problems} problem(s)")
    return 1 if problems else 0


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("files", nargs="+", type=Path)
    parser.add_argument("--collections", type=Path, default=COLLECTIONS)
    args = parser.parse_args()
    if not args.collections.is_dir():
        sys.exit(f"no collections at {args.collections}: run bench/skill_collections.py first")
    sys.exit(check(args.files, args.collections))
