"""Untrained routing: calibration error before/after the fitted temperature, and each strategy against a flat scorer.

    python bench/calibration.py [--hwu64 DIR] [--shots 0,10] [--parts calibration,flat]

Part ``calibration``: the expected calibration error (10 equal-width bins on
the probability of the chosen route) of each untrained strategy, with the old
fixed temperature (``before``: 0.05, what every strategy used) and with the
calibration fitted from the tree itself (``after``: the skills' examples
routed leave-one-out, or the default temperature when a tree has too few
examples). On HWU64 (its ``tree.json`` as the tree, ``test.jsonl`` as the
requests; at 0 shots and with 10 examples per skill from ``train.jsonl``,
drawn with a fixed seed) and on the starter workspace (its own examples; the
requests of ``tests/fixtures/first_hour.jsonl`` and
``tests/routing/starter_requests.jsonl``, out-of-scope ones included).

Part ``flat``: accuracy on the same HWU64 requests of a flat cosine over the
leaves' descriptions (at 10 shots also over the centroid of each skill's
examples) against every untrained strategy, on the same encoder.
"""

from __future__ import annotations

import argparse
import json
import random
import sys
import tempfile
from collections import defaultdict
from pathlib import Path

from semif_agent._sync import run_sync
from semif_agent.engine import create_engine
from semif_agent.engine.local import DEFAULT_TEMPERATURE
from semif_agent.routing import create_strategy
from semif_agent.routing.evaluate import Example, route_all, summarize
from semif_agent.starter import create_workspace
from semif_agent.tree import SkillTree
from semif_agent.workspace import Workspace

ROOT = Path(__file__).resolve().parents[1]
HWU64 = ROOT.parent / "shared" / "datasets" / "hwu64"
STRATEGIES = ("chain", "best_leaf", "beam", "shortlist", "examples")
SEED = 0


def read_rows(path: Path) -> list[dict]:
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines() if line.strip()]


def hwu64_tree(folder: Path, shots: int, scratch: Path) -> SkillTree:
    """HWU64's tree, each skill with ``shots`` examples drawn from the train split (fixed seed)."""
    tree = json.loads((folder / "tree.json").read_text(encoding="utf-8"))
    pool: dict[str, list[str]] = defaultdict(list)
    for row in read_rows(folder / "train.jsonl"):
        pool[row["skill"]].append(row["text"])
    draw = random.Random(SEED)
    for skill in tree["skills"]:
        texts = pool[skill["name"]]
        skill["examples"] = draw.sample(texts, min(shots, len(texts))) if shots else []
    path = scratch / f"hwu64-{shots}.json"
    path.write_text(json.dumps(tree), encoding="utf-8")
    return SkillTree.load(path, scratch / "skills")


def measure(tree: SkillTree, requests: list[Example], name: str, temperature: float | None) -> dict:
    strategy = create_strategy(name, tree, create_engine("local"), temperature=temperature)
    return summarize(run_sync(route_all(strategy, requests)), tree)


def flat_accuracy(tree: SkillTree, requests: list[Example], centroid: bool) -> float:
    """A flat cosine: every request to the skill whose description (or examples' centroid) is nearest."""
    embed = create_engine("local").embed
    names = list(tree.skills)
    if centroid:
        vectors = [embed(list(tree.skills[n].examples)).mean(axis=0) for n in names]
    else:
        vectors = list(embed([tree.skills[n].description for n in names]))
    import numpy as np

    matrix = np.stack(vectors)
    matrix /= np.linalg.norm(matrix, axis=1, keepdims=True)
    queries = embed([e.text for e in requests])
    chosen = (queries @ matrix.T).argmax(axis=1)
    return sum(names[i] == e.skill for i, e in zip(chosen, requests)) / len(requests)


def calibration_part(trees: dict[str, tuple[SkillTree, list[Example]]]) -> None:
    print("\nECE of the chosen route's probability, untrained (before: fixed temperature; after: fitted)")
    print(f"{'set':<18}{'strategy':<11}{'accuracy':>9}{'ECE before':>12}{'ECE after':>11}")
    for label, (tree, requests) in trees.items():
        for name in STRATEGIES:
            before = measure(tree, requests, name, DEFAULT_TEMPERATURE)
            after = measure(tree, requests, name, None)
            print(
                f"{label:<18}{name:<11}{after['accuracy']:>9.1%}"
                f"{before['calibration_error']:>12.3f}{after['calibration_error']:>11.3f}"
            )
            sys.stdout.flush()


def flat_part(trees: dict[str, tuple[SkillTree, list[Example]]]) -> None:
    print("\nHWU64 accuracy: flat cosine against each untrained strategy (same encoder)")
    for label, (tree, requests) in trees.items():
        if not label.startswith("hwu64"):
            continue
        shots = any(s.examples for s in tree.skills.values())
        line = f"{label:<18}flat descriptions {flat_accuracy(tree, requests, False):.1%}"
        if shots:
            line += f"  flat centroid {flat_accuracy(tree, requests, True):.1%}"
        print(line)
        for name in STRATEGIES:
            print(f"{'':<18}{name:<11}{measure(tree, requests, name, None)['accuracy']:.1%}")
        sys.stdout.flush()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--hwu64", type=Path, default=HWU64, help="the HWU64 folder (tree.json, train/test.jsonl)")
    parser.add_argument("--shots", default="0,10", help="examples per skill drawn from HWU64's train split")
    parser.add_argument("--parts", default="calibration,flat")
    args = parser.parse_args()
    parts = set(args.parts.split(","))
    with tempfile.TemporaryDirectory() as scratch:
        trees: dict[str, tuple[SkillTree, list[Example]]] = {}
        test = [Example(r["text"], r["skill"]) for r in read_rows(args.hwu64 / "test.jsonl")]
        for shots in (int(s) for s in args.shots.split(",")):
            trees[f"hwu64 {shots}-shot"] = (hwu64_tree(args.hwu64, shots, Path(scratch)), test)
        ws = Workspace.load(create_workspace(Path(scratch) / "ws"))
        starter = [
            Example(r["text"], r["skill"])
            for f in (
                ROOT / "tests" / "fixtures" / "first_hour.jsonl",
                ROOT / "tests" / "routing" / "starter_requests.jsonl",
            )
            for r in read_rows(f)
        ]
        trees["starter"] = (SkillTree.load(ws.categories_path, ws.bodies_dir), starter)
        print(
            f"HWU64: {len(test)} test requests; starter: {len(starter)} requests "
            f"({sum(e.skill is None for e in starter)} out of scope)"
        )
        if "calibration" in parts:
            calibration_part(trees)
        if "flat" in parts:
            flat_part(trees)


if __name__ == "__main__":
    main()
