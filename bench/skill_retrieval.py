"""Top-1 and top-5 of ways to find a skill for a request, on real skills: BM25, dense cosine, blends, fusion.

    .venv/bin/python bench/skill_retrieval.py [--requests bench/data/skill_requests.jsonl] [--no-collections]

The requests (``bench/data/skill_requests.jsonl``) were written for real
skills, in a user's words rather than their descriptions': three for each of
the 24 skills of ``tests/fixtures/skills-corpus`` (set ``corpus``) and one
for each of 36 skills of the public collections ``bench/skill_collections.py``
fetches (set ``collections``). Two pools:

- ``corpus``: the 24 corpus skills, with the corpus requests;
- ``collections``: every distinct (name, description) of the corpus and the
  collections (about 3,500), with every request. A hit is a skill of the
  requested name (or of a name listed in ``also``): collections repeat a
  skill under one name with other words.

Scorers, each over every skill's name and description (no examples):

- ``bm25``: BM25 alone (the ``lexical`` engine's scorer);
- ``dense``: the embedded model's cosine alone;
- ``blend``: :class:`~semif_agent.routing.scoring.LeafScorer` on the local
  engine as it stands (the cosine, with BM25 re-ranking near the best);
- ``rrf``: reciprocal rank fusion of ``bm25`` and ``dense`` (k = 60);
- ``sum``: the cosine plus BM25 at 0.25 over every skill (no window);
- ``find``: ``LeafScorer.find``: z-score fusion of the cosine and BM25
  over every skill (:func:`~semif_agent.routing.calibration.fuse`);
- ``router``: ``semif_agent.Router.find``, what a client's ``find_skills``
  returns: a workspace whose ``skills/`` folder holds the pool as SKILL.md
  folders (no code skills, no user skills), untrained.

``--hwu64 DIR`` adds HWU64's 64 intents (three-word descriptions, no
examples) with its test requests: not real skills, but where the fusion
that finds real skills best does worse than :func:`.blend`, which is why
routing keeps the blend.
"""

from __future__ import annotations

import argparse
import json
import sys
import tempfile
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np
import yaml

from semif_agent import Router
from semif_agent.engine.lexical import LexicalEngine
from semif_agent.engine.local import LocalEngine
from semif_agent.routing.scoring import LeafScorer
from semif_agent.starter import create_workspace
from semif_agent.tree.manifests import Category, SkillManifest
from semif_agent.tree.tree import SkillTree

BENCH = Path(__file__).resolve().parent
sys.path.insert(0, str(BENCH))
from tree_scale import FIXTURE_CORPUS, default_corpora, real_skills  # noqa: E402 (a sibling script, found once its folder is on the path)

REQUESTS = BENCH / "data" / "skill_requests.jsonl"
RRF_K = 60
SUM_WEIGHT = 0.25
Scores = Callable[[str], Any]


def load_requests(path: Path = REQUESTS) -> list[dict]:
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines() if line.strip()]


def skill_tree(skills: list[tuple[str, str]]) -> tuple[SkillTree, list[str]]:
    """A one-category tree of ``skills`` (ids kept distinct with ``~N``), and each id's skill name."""
    leaves: dict[str, SkillManifest] = {}
    names: list[str] = []
    for name, description in skills:
        leaf_id, n = name, 2
        while leaf_id in leaves:
            leaf_id, n = f"{name}~{n}", n + 1
        leaves[leaf_id] = SkillManifest(leaf_id, "skills", description)
        names.append(name)
    return SkillTree({"skills": Category("skills", "Skills.")}, leaves), names


def ranks(values: Any) -> Any:
    """Each entry's rank, 0 for the best (ties broken by position)."""
    order = np.argsort(-np.asarray(values), kind="stable")
    out = np.empty(len(order), dtype=np.float64)
    out[order] = np.arange(len(order))
    return out


def scorers(tree: SkillTree) -> dict[str, Scores]:
    bm25 = LeafScorer(tree, LexicalEngine())
    dense = LeafScorer(tree, LocalEngine(), lexical_weight=0.0)
    blend = LeafScorer(tree, LocalEngine())
    keywords = LeafScorer(tree, LocalEngine(), lexical_weight=1.0).current().keywords
    assert keywords is not None

    def rrf(text: str) -> Any:
        return 1 / (RRF_K + ranks(bm25.score_array(text))) + 1 / (RRF_K + ranks(dense.score_array(text)))

    def total(text: str) -> Any:
        return dense.score_array(text) + SUM_WEIGHT * keywords.scores(text)

    return {
        "bm25": bm25.score_array,
        "dense": dense.score_array,
        "blend": blend.score_array,
        "rrf": rrf,
        "sum": total,
        "find": blend.find_array,
    }


def accuracy(score: Scores, names: list[str], requests: list[dict]) -> tuple[float, float]:
    """Top-1 and top-5 hit rates of ``score`` on ``requests``."""
    top1 = top5 = 0
    for item in requests:
        wanted = {item["skill"], *item.get("also", [])}
        best = np.argsort(-np.asarray(score(item["text"])), kind="stable")[:5]
        hits = [names[i] in wanted for i in best]
        top1 += hits[0]
        top5 += any(hits)
    return top1 / len(requests), top5 / len(requests)


def router_workspace(skills: list[tuple[str, str]], dest: Path) -> Path:
    """A workspace at ``dest`` whose only skills are ``skills``, as SKILL.md folders under ``skills/``."""
    create_workspace(dest)
    categories = dest / "data" / "categories.json"
    tree = json.loads(categories.read_text(encoding="utf-8"))
    categories.write_text(json.dumps({**tree, "categories": [], "skills": []}), encoding="utf-8")
    settings = dest / "semif.toml"
    settings.write_text(
        settings.read_text(encoding="utf-8").replace("[skills]\n", "[skills]\nuser_skills = false\n", 1),
        encoding="utf-8",
    )
    for n, (name, description) in enumerate(skills):
        folder = dest / "skills" / f"s{n:05d}"
        folder.mkdir(parents=True)
        front = yaml.safe_dump({"name": name, "description": description}, allow_unicode=True, sort_keys=False)
        (folder / "SKILL.md").write_text(f"---\n{front}---\n\n{description}\n", encoding="utf-8")
    return dest


def written_name(router: Router, name: str) -> str:
    """The name a shortlisted skill was written under in its SKILL.md (the tree may have normalised it)."""
    leaf = router.skills[name]
    return leaf.source_name or leaf.name


def router_accuracy(router: Router, requests: list[dict], k: int = 5) -> tuple[float, float]:
    """Top-1 and top-``k`` hit rates of ``router.find`` on ``requests`` (a shortlist's ``none`` is not a miss)."""
    top1 = topk = 0
    for item in requests:
        wanted = {item["skill"], *item.get("also", [])}
        hits = [written_name(router, c.name) in wanted for c in router.find(item["text"], k).skills]
        top1 += bool(hits) and hits[0]
        topk += any(hits)
    return top1 / len(requests), topk / len(requests)


def hwu64_pool(folder: Path) -> tuple[str, list[tuple[str, str]], list[dict]]:
    tree = json.loads((folder / "tree.json").read_text(encoding="utf-8"))
    test = [json.loads(line) for line in (folder / "test.jsonl").read_text(encoding="utf-8").splitlines() if line]
    return "hwu64", [(s["name"], s["description"]) for s in tree["skills"]], [r for r in test if r["skill"]]


def pools(requests: list[dict], collections: bool) -> list[tuple[str, list[tuple[str, str]], list[dict]]]:
    found = [("corpus", real_skills([FIXTURE_CORPUS]), [r for r in requests if r["set"] == "corpus"])]
    if collections:
        corpora = default_corpora()
        if len(corpora) > 1:
            found.append(("collections", real_skills(corpora), requests))
        else:
            print("the public collections could not be fetched: the corpus pool only", file=sys.stderr)
    return found


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--requests", type=Path, default=REQUESTS)
    parser.add_argument("--no-collections", action="store_true", help="the corpus pool only")
    parser.add_argument("--hwu64", type=Path, help="HWU64's folder (tree.json, test.jsonl): a pool of intents too")
    args = parser.parse_args()
    requests = load_requests(args.requests)
    chosen = pools(requests, not args.no_collections) + ([hwu64_pool(args.hwu64)] if args.hwu64 else [])
    print(f"{'pool':<12} {'skills':>6} {'requests':>8}  " + "  ".join(f"{s:>13}" for s in ("top-1 / top-5",)))
    for pool, skills, asked in chosen:
        tree, names = skill_tree(skills)
        for label, score in scorers(tree).items():
            top1, top5 = accuracy(score, names, asked)
            print(f"{pool:<12} {len(skills):>6} {len(asked):>8}  {label:<6} {top1:6.1%} / {top5:6.1%}")
        with tempfile.TemporaryDirectory() as tmp:
            router = Router(router_workspace(skills, Path(tmp) / "ws"), client="bench")
            top1, top5 = router_accuracy(router, asked)
        print(f"{pool:<12} {len(skills):>6} {len(asked):>8}  {'router':<6} {top1:6.1%} / {top5:6.1%}")


if __name__ == "__main__":
    main()
