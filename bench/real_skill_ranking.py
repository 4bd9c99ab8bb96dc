"""The right skill first, on real skills: ``Router.find``, ``semif run``'s choice and the simple baselines in one table.

    .venv/bin/python bench/real_skill_ranking.py [--requests FILE] [--pool distinct|installed|both]

For each request of ``--requests`` (JSON lines: ``text``, the ``skill`` it is
for, optionally ``also``: other names that serve it), every way of finding a
skill ranks the pool, and the table gives top-1, top-5 and MRR@10 (a hit is a
skill of a wanted name; a request whose skill is not in the pool is left out
and counted):

- ``router``: ``semif_agent.Router.find`` (what a client's ``find_skills``
  returns), untrained, on a workspace of the pool (10 shown);
- ``run``: ``semif run``'s choice, the leaf the runner's route ends at (no
  acting; ``none`` is a miss; one pick, so its top-5 and MRR are its top-1);
- ``bm25``: BM25 over each skill's name and description, stopwords removed;
- ``cosine``: the embedded model's cosine with the same texts;
- ``rrf``: their reciprocal rank fusion (k = 60).

After each table: for how many requests ``semif run``'s route ends at the
skill ``find`` puts first (and how many end at ``none``).

Two pools, over the public collections ``bench/skill_collections.py`` fetches:

- ``distinct``: every distinct (name, description) of the collections (about
  4,000), each its own SKILL.md in a folder of the workspace's ``skills/``;
- ``installed``: a workspace listing the collections below
  :data:`INSTALLED_MAX` skills each in ``[skills] folders``, laid out as their
  packages ship them (about 1,600 skills, bodies and repeats included); the
  baselines rank the skills the workspace loaded.

``--starter`` keeps the starter's code skills in the ``installed`` workspace
(its tree and table count only the SKILL.md skills) and says for how many
requests one of them is in ``find``'s top 3: none of the requests is for them.

The ``low overlap`` rows keep the requests sharing at most two content words
(stemmed, stopwords removed) with their skill's description: people describe
their task, not the skill. Embeddings are cached by the engine, so a second
run costs the requests and the tree builds (about 6 minutes on two busy cores the first time, 1 after).

Measured on ``bench/data/real_skill_requests_dev.jsonl`` (120 requests in users' words; top-1 / top-5 / MRR@10):
on ``distinct`` (4,055 skills, 118 requests), ``router`` 46.6% / 66.9% / 0.555 and ``run`` 47.5% top-1, against
cosine 36.4% / 51.7% / 0.437, RRF 28.0% / 56.8% / 0.403, BM25 18.6% / 34.7% / 0.261 (``router`` was 28.0% / 52.5%
/ 0.379 before it used the bodies' "when to use" items and weighed BM25 at a quarter); on ``installed`` (1,476
skills, the 45 requests whose skill it holds), ``router`` 28.9% / 64.4% / 0.451 against RRF 33.3% / 53.3% / 0.432.
"""

from __future__ import annotations

import argparse
import asyncio
import shutil
import sys
import tempfile
import time
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

import numpy as np

from semif_agent import Router
from semif_agent.catalog.loader import find_skill_md
from semif_agent.engine.lexical import terms
from semif_agent.engine.local import LocalEngine
from semif_agent.routing._bm25 import BM25Index
from semif_agent.routing.scoring import leaf_text
from semif_agent.starter import create_workspace

BENCH = Path(__file__).resolve().parent
sys.path.insert(0, str(BENCH))
from skill_collections import DEST  # noqa: E402 (sibling scripts, found once their folder is on the path)
from skill_retrieval import RRF_K, load_requests, ranks, router_workspace, written_name  # noqa: E402 (as above)
from tree_scale import real_skill_folders  # noqa: E402 (as above)

MRR_CUTOFF = 10
LOW_OVERLAP = 2
INSTALLED_MAX = 500
"""Collections with fewer skills than this make the ``installed`` workspace (the three largest, over 650 each, do not)."""
ACT_THRESHOLD = 0.5  # set, so that no run measures one: the bench routes, it never acts
Ranking = Callable[[str], list[str]]


def collections(dest: Path = DEST) -> list[Path]:
    """The fetched collections, one folder per source."""
    if not dest.is_dir():
        sys.exit(f"no collections at {dest}: run bench/skill_collections.py first")
    return sorted(p for p in dest.iterdir() if p.is_dir() and not p.name.startswith("."))


def installed_collections(found: Sequence[Path]) -> list[Path]:
    return [p for p in found if sum(1 for _ in p.rglob("SKILL.md")) < INSTALLED_MAX]


def baselines(skills: list[tuple[str, str]], engine: LocalEngine) -> dict[str, Ranking]:
    """BM25, cosine and their RRF over ``skills`` (name, description), each giving names best first."""
    names = [name for name, _ in skills]
    keywords = BM25Index([f"{name} {description}" for name, description in skills], numpy=np)
    vectors = engine.embedder.embed([leaf_text(name, description) for name, description in skills])

    def bm25(text: str) -> Any:
        return keywords.scores(text)

    def cosine(text: str) -> Any:
        return vectors @ engine.embedder.embed([text])[0]

    def rrf(text: str) -> Any:
        return 1 / (RRF_K + ranks(bm25(text))) + 1 / (RRF_K + ranks(cosine(text)))

    def ranking(score: Callable[[str], Any]) -> Ranking:
        return lambda text: [names[i] for i in np.argsort(-np.asarray(score(text)), kind="stable")[:MRR_CUTOFF]]

    return {"bm25": ranking(bm25), "cosine": ranking(cosine), "rrf": ranking(rrf)}


def router_rankings(router: Router) -> dict[str, Ranking]:
    """``Router.find``'s names, and ``semif run``'s one choice (the route's leaf, nothing acts)."""

    def find(text: str) -> list[str]:
        return [written_name(router, c.name) for c in router.find(text, MRR_CUTOFF).skills]

    def run(text: str) -> list[str]:
        route = asyncio.run(router.runner.strategy.aroute(text))
        return [written_name(router, route.skill.name)] if route.skill is not None else []

    return {"router": find, "run": run}


def agreement(pool: str, router: Router, asked: list[dict]) -> None:
    """How many requests ``semif run``'s route takes to the skill ``find`` puts first, and how many end at none."""
    same = nothing = 0
    for item in asked:
        route = asyncio.run(router.runner.strategy.aroute(item["text"]))
        shown = router.find(item["text"], 1).skills
        nothing += route.skill is None
        same += route.skill is not None and bool(shown) and route.skill.name == shown[0].name
    print(f"\n{pool}: run goes to find's first skill for {same} of {len(asked)} requests ({nothing} end at none)")


def first_hit(found: list[str], wanted: set[str]) -> int | None:
    """The 1-based rank of the first wanted name among ``found`` (None: none in the first :data:`MRR_CUTOFF`)."""
    return next((i + 1 for i, name in enumerate(found[:MRR_CUTOFF]) if name in wanted), None)


def metrics(hits: list[int | None]) -> tuple[float, float, float]:
    """Top-1, top-5 and MRR@10 of first-hit ranks."""
    if not hits:
        return 0.0, 0.0, 0.0
    n = len(hits)
    return (
        sum(h == 1 for h in hits) / n,
        sum(h is not None and h <= 5 for h in hits) / n,
        sum(1 / h for h in hits if h is not None) / n,
    )


def wanted_of(item: dict) -> set[str]:
    return {item["skill"], *item.get("also", [])}


def low_overlap(item: dict, descriptions: dict[str, str]) -> bool:
    """Whether the request shares at most :data:`LOW_OVERLAP` content words with its skill's description."""
    said = set(terms(descriptions.get(item["skill"], "")))
    return len(set(terms(item["text"])) & said) <= LOW_OVERLAP


def table(pool: str, size: int, asked: list[dict], skills: list[tuple[str, str]], rankings: dict[str, Ranking]) -> None:
    descriptions: dict[str, str] = {}
    for name, description in skills:
        descriptions.setdefault(name, description)
    subsets = {"all": asked, "low overlap": [r for r in asked if low_overlap(r, descriptions)]}
    hits = {label: [first_hit(rank(r["text"]), wanted_of(r)) for r in asked] for label, rank in rankings.items()}
    for subset, rows in subsets.items():
        keep = [i for i, r in enumerate(asked) if r in rows]
        print(f"\n{pool}: {size} skills, {len(rows)} requests ({subset})")
        print(f"  {'':<8} {'top-1':>7} {'top-5':>7} {'MRR@10':>7}")
        for label, found in hits.items():
            top1, top5, mrr = metrics([found[i] for i in keep])
            print(f"  {label:<8} {top1:7.1%} {top5:7.1%} {mrr:7.3f}")


def in_pool(requests: list[dict], names: set[str], pool: str) -> list[dict]:
    asked = [r for r in requests if wanted_of(r) & names]
    if len(asked) < len(requests):
        print(
            f"{pool}: {len(requests) - len(asked)} requests left out (their skill is not in the pool)", file=sys.stderr
        )
    return asked


def distinct_pool(requests: list[dict], engine: LocalEngine, found: list[Path], tmp: Path) -> None:
    folders = real_skill_folders(found)
    skills = [(name, description) for name, description, _ in folders]
    asked = in_pool(requests, {name for name, _ in skills}, "distinct")
    root = router_workspace([], tmp / "distinct")
    for n, (_, _, folder) in enumerate(folders):  # each skill's own SKILL.md, without the files beside it
        (root / "skills" / f"s{n:05d}").mkdir(parents=True)
        shutil.copyfile(find_skill_md(folder), root / "skills" / f"s{n:05d}" / "SKILL.md")
    with_threshold(root)
    router = Router(root, client="bench")
    started = time.perf_counter()
    router.find("warm up", 1)
    print(f"distinct: tree built and first find in {time.perf_counter() - started:.0f} s", file=sys.stderr)
    table("distinct", len(skills), asked, skills, {**router_rankings(router), **baselines(skills, engine)})
    agreement("distinct", router, asked)


def installed_pool(
    requests: list[dict], engine: LocalEngine, found: list[Path], tmp: Path, *, starter: bool = False
) -> None:
    chosen = installed_collections(found)
    root = router_workspace([], tmp / "installed")
    if starter:  # the starter's code skills beside the collections, as `semif init` (without --empty) leaves them
        create_workspace(root, force=True)
    settings = root / "semif.toml"
    folders = ", ".join(f'"{p}"' for p in chosen)
    settings.write_text(
        settings.read_text(encoding="utf-8").replace("[skills]\n", f"[skills]\nfolders = [{folders}]\n", 1),
        encoding="utf-8",
    )
    with_threshold(root)
    router = Router(root, client="bench")
    started = time.perf_counter()
    router.find("warm up", 1)
    print(f"installed: tree built and first find in {time.perf_counter() - started:.0f} s", file=sys.stderr)
    leaves = [leaf for leaf in router.runner.tree.skills.values() if leaf.is_skill_md]
    skills = [(leaf.source_name or leaf.name, leaf.description) for leaf in leaves]
    asked = in_pool(requests, {name for name, _ in skills}, "installed")
    table("installed", len(skills), asked, skills, {**router_rankings(router), **baselines(skills, engine)})
    agreement("installed", router, asked)
    if starter:
        code = sum(any(c.kind == "code" for c in router.find(r["text"], 3).skills) for r in requests)
        print(
            f"\ninstalled with the starter's code skills: {code} of {len(requests)} requests have one in find's top 3"
        )


def with_threshold(root: Path) -> None:
    settings = root / "semif.toml"
    settings.write_text(
        settings.read_text(encoding="utf-8") + f"\n[routing]\nact_threshold = {ACT_THRESHOLD}\n", encoding="utf-8"
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--requests", type=Path, default=BENCH / "data" / "skill_requests.jsonl")
    parser.add_argument("--pool", choices=("distinct", "installed", "both"), default="both")
    parser.add_argument(
        "--starter",
        action="store_true",
        help="the installed workspace keeps the starter's code skills (and counts them)",
    )
    args = parser.parse_args()
    requests = load_requests(args.requests)
    found = collections()
    engine = LocalEngine()
    with tempfile.TemporaryDirectory() as tmp:
        if args.pool in ("distinct", "both"):
            distinct_pool(requests, engine, found, Path(tmp))
        if args.pool in ("installed", "both"):
            installed_pool(requests, engine, found, Path(tmp), starter=args.starter)


if __name__ == "__main__":
    main()
