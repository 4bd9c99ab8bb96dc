"""Untrained routing: calibration error before/after the fitted temperature, and each strategy against a flat scorer.

    python bench/calibration.py [--hwu64 DIR] [--bfcl DIR] [--shots 0,10] [--parts calibration,flat]

Part ``calibration``: accuracy, out-of-scope recall and expected calibration
error (10 equal-width bins on the probability of the chosen route) of each
untrained strategy, ``before`` (the engine's fixed temperature 0.05, and for a
tree without examples the engine's ``none`` cut 0.35) and ``after`` (the
calibration the tree gets: fitted from the skills' examples routed
leave-one-out, or the scale-free zero-shot one when it has too few). On HWU64
(its ``tree.json`` as the tree, ``test.jsonl`` as the requests; at 0 shots and
with 10 examples per skill from ``train.jsonl``, drawn with a fixed seed), on
the starter workspace with its examples and stripped of them (skill examples
and ``none_examples``; the requests of ``tests/fixtures/first_hour.jsonl`` and
``tests/routing/starter_requests.jsonl``, out-of-scope ones included, and
stripped, its ``none_examples`` too, as requests out of scope), and on
BFCL at 0 shots when ``--bfcl`` holds it (``bench/bfcl_datasets.py``; its
irrelevant requests are out of scope).

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
from semif_agent.routing.scoring import BLENDED_THRESHOLD
from semif_agent.starter import create_workspace
from semif_agent.tree import SkillTree
from semif_agent.workspace import Workspace

ROOT = Path(__file__).resolve().parents[1]
HWU64 = ROOT.parent / "shared" / "datasets" / "hwu64"
BFCL = ROOT / ".bench" / "bfcl"
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


def stripped(path: Path, scratch: Path, name: str) -> Path:
    """A copy of the tree file at ``path`` without skill examples or ``none_examples``."""
    doc = json.loads(path.read_text(encoding="utf-8"))
    for skill in doc["skills"]:
        skill["examples"] = []
    doc.pop("none_examples", None)
    out = scratch / f"{name}.json"
    out.write_text(json.dumps(doc), encoding="utf-8")
    return out


def measure(
    tree: SkillTree, requests: list[Example], name: str, temperature: float | None, threshold: float | None = None
) -> dict:
    strategy = create_strategy(name, tree, create_engine("local"), temperature=temperature, threshold=threshold)
    return summarize(run_sync(route_all(strategy, requests)), tree)


def percent(value: float | None) -> str:
    return "-" if value is None else f"{value:.1%}"


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
    print("\nUntrained, before (engine temperature 0.05; none at 0.35 without examples) and after (the tree's own)")
    print(
        f"{'set':<18}{'strategy':<11}{'accuracy':>17}{'out-of-scope recall':>21}{'ECE':>15}\n"
        f"{'':<29}{'before':>8}{'after':>9}{'before':>12}{'after':>9}{'before':>8}{'after':>7}"
    )
    for label, (tree, requests) in trees.items():
        examples = any(s.examples for s in tree.skills.values())
        for name in STRATEGIES:
            before = measure(tree, requests, name, DEFAULT_TEMPERATURE, None if examples else BLENDED_THRESHOLD)
            after = measure(tree, requests, name, None)
            print(
                f"{label:<18}{name:<11}{before['accuracy']:>8.1%}{after['accuracy']:>9.1%}"
                f"{percent(before['out_of_scope_recall']):>12}{percent(after['out_of_scope_recall']):>9}"
                f"{before['calibration_error']:>8.3f}{after['calibration_error']:>7.3f}"
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
    parser.add_argument("--bfcl", type=Path, default=BFCL, help="BFCL as bench/bfcl_datasets.py writes it")
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
        full = SkillTree.load(ws.categories_path, ws.bodies_dir)
        trees["starter"] = (full, starter)
        bare = stripped(ws.categories_path, Path(scratch), "starter-0")
        unserved = [Example(text, None) for text in full.none_examples]  # stripped from the tree: out of scope
        trees["starter 0-shot"] = (SkillTree.load(bare, ws.bodies_dir), starter + unserved)
        if (args.bfcl / "tree.json").exists():
            bfcl = [Example(r["text"], r["skill"]) for r in read_rows(args.bfcl / "dataset.jsonl")]
            bare = stripped(args.bfcl / "tree.json", Path(scratch), "bfcl-0")
            trees["bfcl 0-shot"] = (SkillTree.load(bare, Path(scratch) / "skills"), bfcl)
        print(
            f"HWU64: {len(test)} test requests; starter: {len(starter)} requests "
            f"({sum(e.skill is None for e in starter)} out of scope; stripped of its examples, "
            f"{len(unserved)} more: its none_examples)"
        )
        if "calibration" in parts:
            calibration_part(trees)
        if "flat" in parts:
            flat_part(trees)


if __name__ == "__main__":
    main()
