"""What a client of `semif mcp` holds to reach 100 to 10,000 skills, how often `find_skills` is right, and how fast.

    .venv/bin/python bench/mcp.py [--sizes 100 1000 10000] [--requests N] [--no-collections]

Skills: the real SKILL.md skills of the test fixtures and of the public
collections ``bench/skill_collections.py`` fetches (each distinct name and
description once), topped up to each size by variants of them
(``bench/tree_scale.py``'s generator: a real description rephrased or joined
with another's, under a distinct name).

1. **Characters a client holds**, at each size:

   - ``flat``: a listing of every skill's name and description, one
     ``- name: description`` line each (what a client that lists every skill,
     as Claude Code does, puts in its context), and how many skills fit in
     Claude Code's budget for it (about 1% of a 200k-token context, taken as
     8,000 characters);
   - ``ours``: the five tools' definitions (``find_skills``, ``load_skill``,
     ``read_skill_file``, ``run_skill``, ``report_outcome``: names,
     descriptions, input schemas, as JSON) plus the largest output of one
     ``find_skills`` call (the five best skills of a request, each with its
     probability, one-line description and choice id, as JSON) over the
     request set. The tool texts are this script's own estimate, written as
     short as a model still reads them.

2. **Accuracy**: top-1 and top-5 of ``semif_agent.Router.find`` (what
   ``find_skills`` returns) over a workspace holding the pool as SKILL.md
   folders, on ``bench/data/skill_requests.jsonl`` (see
   ``bench/skill_retrieval.py``, which compares the ranking with BM25 and the
   dense encoder alone): the corpus pool and the collections pool.

   - untrained, on every request;
   - **after implicit labels**: the requests split in two, alternately. For
     each request of the first half a client calls ``find`` and then
     ``load``s the right skill (one implicit label, logged as the MCP server
     logs it); ``semif train -w WS --json`` then fits the router from them
     (switching to it only when its guard allows; when it keeps the routing
     in use, a second ``--force`` training is measured too). Top-1 / top-5 on
     the other half, before and after.

3. **Latency**: one ``Router.find`` (the request embedded, scored against
   every skill, its five best taken and the decision logged) at the largest
   size, warm (the skills embedded and one request found first): p50 and p95
   over ``--requests`` requests never seen before (none in the embedding
   cache).
"""

from __future__ import annotations

import argparse
import json
import math
import statistics
import subprocess
import sys
import tempfile
import time
import uuid
from pathlib import Path

from semif_agent import Router
from semif_agent.engine.local import LocalEngine
from semif_agent.errors import UnknownSkillError
from semif_agent.routing.scoring import LeafScorer

BENCH = Path(__file__).resolve().parent
sys.path.insert(0, str(BENCH))
from skill_retrieval import load_requests, pools, router_accuracy, router_workspace, skill_tree, written_name  # noqa: E402 (sibling scripts, found once their folder is on the path)
from tree_scale import catalog, default_corpora, real_skills  # noqa: E402 (as above)

CLAUDE_CODE_BUDGET = 8_000
"""Characters Claude Code gives its skill listing: about 1% of a 200k-token context."""
K = 5
DESCRIPTION_CHARS = 160
"""A ``find_skills`` result's description is its first line, cut to this many characters."""

TOOLS = [
    {
        "name": "find_skills",
        "description": "Find the skills that fit a request, best first, with the probability each is right. "
        "Call it before any task, then load_skill the one you use.",
        "inputSchema": {
            "type": "object",
            "properties": {
                "request": {"type": "string", "description": "What the user asked, in their words."},
                "k": {"type": "integer", "minimum": 1, "maximum": 16, "default": 5},
            },
            "required": ["request"],
        },
    },
    {
        "name": "load_skill",
        "description": "A skill's instructions (and the files it holds), to follow them.",
        "inputSchema": {"type": "object", "properties": {"name": {"type": "string"}}, "required": ["name"]},
    },
    {
        "name": "read_skill_file",
        "description": "A file of a skill's folder, by its path inside it.",
        "inputSchema": {
            "type": "object",
            "properties": {"name": {"type": "string"}, "path": {"type": "string"}},
            "required": ["name", "path"],
        },
    },
    {
        "name": "run_skill",
        "description": "Run a skill on a request, confined; returns its result, the files it changed and the run id.",
        "inputSchema": {
            "type": "object",
            "properties": {"name": {"type": "string"}, "request": {"type": "string"}},
            "required": ["name", "request"],
        },
    },
    {
        "name": "report_outcome",
        "description": "Say how a found or run skill did (good, bad, or the skill that should have been used).",
        "inputSchema": {
            "type": "object",
            "properties": {
                "id": {"type": "string"},
                "outcome": {"type": "string", "enum": ["good", "bad"]},
                "skill": {"type": "string"},
                "note": {"type": "string"},
            },
            "required": ["id", "outcome"],
        },
    },
]


def flat_listing(skills: list[tuple[str, str]]) -> str:
    return "".join(f"- {name}: {description}\n" for name, description in skills)


def fit_in_budget(skills: list[tuple[str, str]], budget: int = CLAUDE_CODE_BUDGET) -> int:
    """How many skills' lines fit in ``budget`` characters, listed in order."""
    used = count = 0
    for name, description in skills:
        used += len(f"- {name}: {description}\n")
        if used > budget:
            break
        count += 1
    return count


def find_output(scorer: LeafScorer, text: str) -> str:
    """What one ``find_skills`` call returns: the ``K`` best skills as JSON."""
    top = scorer.find(text, K)
    temperature = scorer.calibration().temperature
    weights = [math.exp((score - top[0][1]) / temperature) for _, score in top]
    total = sum(weights)
    described = {name: skill.description for name, skill in scorer.tree.skills.items()}
    results = [
        {
            "name": name,
            "probability": round(weight / total, 3),
            "description": described[name].split("\n", 1)[0][:DESCRIPTION_CHARS],
            "choice": f"c-{index:012x}",
        }
        for index, ((name, _), weight) in enumerate(zip(top, weights))
    ]
    return json.dumps({"skills": results}, ensure_ascii=False)


def pick_right_skill(router: Router, item: dict) -> bool:
    """A client's ``find`` for ``item``'s request, then a ``load`` of its right skill: an implicit label.

    The client loads a shortlisted skill of the right name, else the skill of that name; False when the
    name is not one skill's (two skills write it and neither was shortlisted).
    """
    wanted = {item["skill"], *item.get("also", [])}
    found = router.find(item["text"], K)
    shown = [c.name for c in found.skills if written_name(router, c.name) in wanted]
    try:
        router.load(shown[0] if shown else item["skill"], choice_id=found.choice_id)
    except UnknownSkillError:
        return False
    return True


def train(root: Path, *extra: str) -> dict:
    """``semif train -w ROOT --json`` as a user runs it; its report."""
    done = subprocess.run(
        [sys.executable, "-m", "semif_agent", "train", "-w", str(root), "--json", *extra],
        capture_output=True,
        text=True,
        check=True,
    )
    return json.loads(done.stdout)


def after_implicit_labels(
    skills: list[tuple[str, str]], asked: list[dict], *flags: str, reports: list[dict] | None = None
) -> list[tuple[str, float, float]]:
    """Top-1 / top-5 on every other request, untrained and after implicit labels on the rest (see the docstring);
    ``flags`` are given to each ``semif train``, whose reports are appended to ``reports`` when given."""
    taught, held = asked[0::2], asked[1::2]
    with tempfile.TemporaryDirectory() as tmp:
        root = router_workspace(skills, Path(tmp) / "ws")
        router = Router(root, client="bench")
        found = [("untrained", *router_accuracy(router, held))]
        labels = sum(pick_right_skill(router, item) for item in taught)
        report = train(root, *flags)
        switched = report["saved_to"] is not None
        found.append((f"{labels} labels, {'switched' if switched else 'kept'}", *router_accuracy(Router(root), held)))
        if reports is not None:
            reports.append(report)
        if not switched:
            forced = train(root, *flags, "--force")
            if reports is not None:
                reports.append(forced)
            found.append((f"{labels} labels, forced", *router_accuracy(Router(root), held)))
    return found


def percentile(values: list[float], share: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, round(share * (len(ordered) - 1)))]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", type=int, nargs="+", default=[100, 1_000, 10_000])
    parser.add_argument("--requests", type=int, default=100, help="requests timed at the largest size")
    parser.add_argument("--no-collections", action="store_true", help="the fixtures' skills only")
    args = parser.parse_args()
    requests = load_requests()
    texts = [item["text"] for item in requests]
    real = real_skills(default_corpora()[:1] if args.no_collections else default_corpora())
    tools = len(json.dumps(TOOLS, ensure_ascii=False))

    print(f"Characters a client holds ({len(real)} real skills, topped up with variants)")
    print(f"{'skills':>7}  {'flat listing':>12}  {'fit in 8,000':>12}  {'ours':>6}  (tools {tools} + one call)")
    scorer: LeafScorer | None = None
    for size in args.sizes:
        skills = catalog(real, size)
        tree, _ = skill_tree(skills)
        scorer = LeafScorer(tree, LocalEngine())
        call = max(len(find_output(scorer, text)) for text in texts)
        print(f"{size:>7,}  {len(flat_listing(skills)):>12,}  {fit_in_budget(skills):>12,}  {tools + call:>6,}")

    print("\nfind_skills accuracy through the Router (top-1 / top-5)")
    for pool, skills, asked in pools(requests, not args.no_collections):
        with tempfile.TemporaryDirectory() as tmp:
            top1, top5 = router_accuracy(Router(router_workspace(skills, Path(tmp) / "ws")), asked)
        print(f"  {pool:<12} {len(skills):>6} skills  {len(asked):>4} requests  untrained {top1:6.1%} / {top5:6.1%}")
        for label, top1, top5 in after_implicit_labels(skills, asked):
            print(f"  {'':<12} {'':>6}         {len(asked) // 2:>4} held out  {label:<28} {top1:6.1%} / {top5:6.1%}")

    run = uuid.uuid4().hex[:8]  # requests never seen before: none is in the embedding cache
    asked = [f"{text} ({run}-{n})" for n, text in enumerate(texts * (args.requests // len(texts) + 1))]
    asked = asked[: args.requests]
    largest = catalog(real, args.sizes[-1])
    with tempfile.TemporaryDirectory() as tmp:
        router = Router(router_workspace(largest, Path(tmp) / "ws"), client="bench")
        router.find(asked[0], K)  # warm: the skills embedded, the calibration fitted
        timings = []
        for text in asked:
            start = time.perf_counter()
            router.find(text, K)
            timings.append((time.perf_counter() - start) * 1000)
        size = len(router.skills)
    print(
        f"\nfind latency at {size:,} skills, warm: p50 {percentile(timings, 0.5):.1f} ms, "
        f"p95 {percentile(timings, 0.95):.1f} ms (mean {statistics.mean(timings):.1f} ms, {len(timings)} requests)"
    )


if __name__ == "__main__":
    main()
