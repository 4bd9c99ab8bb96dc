"""Routing accuracy of each engine on the starter workspace's request set.

    python bench/routing_accuracy.py [--dataset tests/routing/starter_requests.jsonl] [--threshold X]

A request counts as right when the route ends at its labelled leaf, or ends
at no leaf when it is labelled null (fits no skill).
"""

from __future__ import annotations

import argparse
import json
import tempfile
from pathlib import Path

from semif_agent._sync import run_sync
from semif_agent.engine import create_engine, local_available
from semif_agent.starter import create_workspace
from semif_agent.tree import SkillTree, TreeWalker
from semif_agent.workspace import Workspace

ROOT = Path(__file__).resolve().parents[1]


def evaluate(router: TreeWalker, dataset: list[dict]) -> dict:
    right = in_scope_right = out_right = category_right = 0
    misses = []
    for item in dataset:
        route = run_sync(router.aroute(item["text"]))
        got = route.skill.name if route.skill else None
        want = item["skill"]
        right += got == want
        if want is None:
            out_right += got is None
        else:
            in_scope_right += got == want
            category_right += bool(route.decisions) and route.decisions[0].result.selected == want.split(".")[0]
        if got != want:
            misses.append((item["text"], want, got))
    n_in = sum(1 for i in dataset if i["skill"] is not None)
    n_out = len(dataset) - n_in
    return {
        "accuracy": right / len(dataset),
        "in_scope_leaf_accuracy": in_scope_right / max(n_in, 1),
        "category_accuracy": category_right / max(n_in, 1),
        "out_of_scope_recall": out_right / max(n_out, 1),
        "misses": misses,
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--dataset", type=Path, default=ROOT / "tests" / "routing" / "starter_requests.jsonl")
    parser.add_argument("--threshold", type=float, help="override the engines' none threshold")
    parser.add_argument("--misses", action="store_true", help="print the misrouted requests")
    args = parser.parse_args()
    dataset = [json.loads(line) for line in args.dataset.read_text().splitlines() if line.strip()]
    with tempfile.TemporaryDirectory() as tmp:
        ws = Workspace.load(create_workspace(Path(tmp) / "ws"))
        tree = SkillTree.load(ws.categories_path, ws.bodies_dir)
        names = (["local"] if local_available() else []) + ["lexical"]
        print(f"{len(dataset)} requests, {len(tree.skills)} skills in {len(tree.categories)} categories")
        print(f"{'engine':<10}{'overall':>9}{'leaf':>8}{'category':>10}{'out-of-scope recall':>21}")
        for name in names:
            settings = {"threshold": args.threshold} if args.threshold is not None else {}
            report = evaluate(TreeWalker(tree, create_engine(name, settings)), dataset)
            print(
                f"{name:<10}{report['accuracy']:>9.1%}{report['in_scope_leaf_accuracy']:>8.1%}"
                f"{report['category_accuracy']:>10.1%}{report['out_of_scope_recall']:>21.1%}"
            )
            if args.misses:
                for text, want, got in report["misses"]:
                    print(f"    {text!r}: want {want}, got {got}")


if __name__ == "__main__":
    main()
