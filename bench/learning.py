"""The learned router against the untrained strategies and a logistic regression, on HWU64 and BFCL.

    python bench/learning.py [--datasets hwu64 bfcl] [--speed]

For each dataset and for 10 example requests per skill and for the whole
train split, it measures on the test split:

- the untrained strategies: ``best_leaf`` and ``chain`` (the skills' names and
  descriptions only) and ``examples`` (the train requests folded into the
  skills as examples, centroid);
- ``learned``: ``semif train``'s router fitted on the train requests;
- a logistic regression fitted by scikit-learn (default settings) on the same
  embeddings, in its own virtual environment under ``.bench/``; requests that
  fit no skill are its ``none`` class.

Leaf accuracy is over the in-scope test requests (an answer of ``none``
counts as wrong); where the dataset has out-of-scope requests, their recall
is reported beside it, never one without the other.

- HWU64: ``../shared/datasets/hwu64`` (``--hwu DIR``): 64 intents in 18
  scenarios, train 9,960 and test 1,076 requests; the anchors measured on this
  split with the same encoder are in its README.
- BFCL: ``bench/bfcl_datasets.py``'s dataset (built when missing): 699
  functions, their requests and the irrelevance set, split in two halves by a
  hash of the text (most functions have one or two requests, so "10 per skill"
  keeps nearly all of them).

``--speed`` also times ``semif train`` on 15,000 labelled requests in a fresh
process with an empty embedding cache, and the routing time the learned
router adds per request.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import os
import random
import statistics
import subprocess
import sys
import tempfile
import time
from dataclasses import replace
from pathlib import Path

import numpy as np

from semif_agent._sync import run_sync
from semif_agent.engine import create_engine
from semif_agent.routing import create_strategy
from semif_agent.routing.evaluate import Example, load_dataset
from semif_agent.routing.learned import Learned, LearnedScorer
from semif_agent.routing.training import examples_from_dataset, train
from semif_agent.tree import SkillTree

ROOT = Path(__file__).resolve().parents[1]
HWU = ROOT.parent / "shared" / "datasets" / "hwu64"
BFCL = ROOT / ".bench" / "bfcl"
PEER_VENV = ROOT / ".bench" / "venv-sklearn"
SHOTS = 10
PEER = """
import json, sys
import numpy as np
from sklearn.linear_model import LogisticRegression
data = np.load(sys.argv[1])
model = LogisticRegression(max_iter=2000).fit(data["train_x"], data["train_y"])
print(json.dumps(model.predict(data["test_x"]).tolist()))
"""


def peer_python() -> Path:
    python = PEER_VENV / "bin" / "python"
    if not python.exists():
        print("installing scikit-learn into", PEER_VENV, file=sys.stderr)
        subprocess.run([sys.executable, "-m", "venv", str(PEER_VENV)], check=True)
        subprocess.run([str(python), "-m", "pip", "install", "-q", "scikit-learn", "numpy"], check=True)
    return python


def load_hwu(folder: Path) -> tuple[SkillTree, list[Example], list[Example]]:
    return (
        SkillTree.load(folder / "tree.json", folder),
        load_dataset(folder / "train.jsonl"),
        load_dataset(folder / "test.jsonl"),
    )


def load_bfcl(folder: Path) -> tuple[SkillTree, list[Example], list[Example]]:
    if not (folder / "dataset.jsonl").is_file():
        subprocess.run([sys.executable, str(ROOT / "bench" / "bfcl_datasets.py"), "--out", str(folder)], check=True)
    rows = load_dataset(folder / "dataset.jsonl")
    half = [int(hashlib.sha256(e.text.encode()).hexdigest()[:8], 16) % 2 for e in rows]
    return (
        SkillTree.load(folder / "tree.json", folder),
        [e for e, h in zip(rows, half) if h == 0],
        [e for e, h in zip(rows, half) if h == 1],
    )


def per_skill(rows: list[Example], shots: int, seed: int = 7) -> list[Example]:
    """``shots`` requests of each skill (all of the out-of-scope ones), drawn with a fixed seed."""
    rng = random.Random(seed)
    by_skill: dict[str | None, list[Example]] = {}
    for row in rows:
        by_skill.setdefault(row.skill, []).append(row)
    picked = []
    for skill in sorted(by_skill, key=str):
        group = by_skill[skill]
        picked += group if skill is None else rng.sample(group, min(shots, len(group)))
    return picked


def folded(tree: SkillTree, rows: list[Example]) -> SkillTree:
    """``tree`` with the train requests as its skills' examples (what the ``examples`` strategy learns from)."""
    extra: dict[str, list[str]] = {}
    for row in rows:
        if row.skill is not None:
            extra.setdefault(row.skill, []).append(row.text)
    skills = {n: replace(s, examples=tuple(s.examples) + tuple(extra.get(n, ()))) for n, s in tree.skills.items()}
    return SkillTree(tree.categories, skills)


def measure(predicted: list[str | None], test: list[Example]) -> dict[str, float | None]:
    inside = [(p, e.skill) for p, e in zip(predicted, test) if e.skill is not None]
    outside = [p for p, e in zip(predicted, test) if e.skill is None]
    return {
        "leaf": sum(p == t for p, t in inside) / len(inside),
        "oos_recall": sum(p is None for p in outside) / len(outside) if outside else None,
    }


def route_all(strategy, test: list[Example]) -> list[str | None]:
    return [(r.skill.name if (r := run_sync(strategy.aroute(e.text))).skill else None) for e in test]


def logistic(engine, rows: list[Example], test: list[Example]) -> list[str | None]:
    names = sorted({str(e.skill) for e in rows})
    index = {n: i for i, n in enumerate(names)}
    train_x = engine.embedder.embed([e.text for e in rows])
    test_x = engine.embedder.embed([e.text for e in test])
    with tempfile.TemporaryDirectory() as tmp:
        data = Path(tmp) / "data.npz"
        np.savez(data, train_x=train_x, train_y=np.array([index[str(e.skill)] for e in rows]), test_x=test_x)
        script = Path(tmp) / "peer.py"
        script.write_text(PEER)
        out = subprocess.run([str(peer_python()), str(script), str(data)], capture_output=True, text=True, check=True)
    return [None if names[i] == "None" else names[i] for i in json.loads(out.stdout.strip().splitlines()[-1])]


def cell(name: str, tree: SkillTree, rows: list[Example], test: list[Example], engine) -> list[tuple[str, dict]]:
    results = []
    for strategy in ("best_leaf", "chain"):
        results.append(
            (f"untrained {strategy}", measure(route_all(create_strategy(strategy, tree, engine), test), test))
        )
    results.append(
        ("examples", measure(route_all(create_strategy("examples", folded(tree, rows), engine), test), test))
    )
    started = time.perf_counter()
    router, _ = train(tree, examples_from_dataset(rows, tree), engine)
    trained = time.perf_counter() - started
    learned = Learned(tree, engine, LearnedScorer(tree, engine, router))
    results.append((f"learned ({trained:.0f} s to train)", measure(route_all(learned, test), test)))
    results.append(("logistic regression (sklearn)", measure(logistic(engine, rows, test), test)))
    return results


def speed(engine) -> None:
    """``semif train`` on 15,000 labelled requests in a fresh process, and the routing cost the learned router adds."""
    tree, rows, test = load_hwu(HWU)
    rows = rows + test
    rows += [Example(f"could you {e.text}", e.skill) for e in rows[: 15_000 - len(rows)]]
    with tempfile.TemporaryDirectory() as tmp:
        ws = Path(tmp) / "ws"
        (ws / "data").mkdir(parents=True)
        (ws / "data" / "categories.json").write_text((HWU / "tree.json").read_text())
        (ws / "semif.toml").write_text('[paths]\ndata = "data"\n[skills]\nuser_skills = false\n')
        data = Path(tmp) / "requests.jsonl"
        data.write_text("".join(json.dumps({"text": e.text, "skill": e.skill}) + "\n" for e in rows))
        env = {**os.environ, "SEMIF_CACHE_DIR": str(Path(tmp) / "cache")}
        started = time.perf_counter()
        out = subprocess.run(
            [sys.executable, "-m", "semif_agent", "train", str(data), "-w", str(ws), "--json"],
            capture_output=True,
            text=True,
            env=env,
            check=True,
        )
        wall = time.perf_counter() - started
        report = json.loads(out.stdout)
        print(
            f"\nsemif train on {len(rows):,} labelled requests: {wall:.1f} s in all "
            f"({report['seconds']['embedding']} s embedding, {report['seconds']['fitting']} s fitting, "
            f"the rest starting up and reading); held-out in-scope accuracy "
            f"{report['before']['in_scope_accuracy']:.1%} -> {report['after']['in_scope_accuracy']:.1%}, "
            f"calibration error {report['calibration']['calibration_error_after']}"
        )
    small = per_skill(load_hwu(HWU)[1], SHOTS)
    router, _ = train(tree, examples_from_dataset(small, tree), engine)
    texts = [e.text for e in test[:300]]
    engine.embedder.embed(texts)
    for name, strategy in (
        ("examples", create_strategy("examples", folded(tree, small), engine)),
        ("learned", Learned(tree, engine, LearnedScorer(tree, engine, router))),
    ):
        times = []
        for text in texts:
            started = time.perf_counter()
            run_sync(strategy.aroute(text))
            times.append((time.perf_counter() - started) * 1000)
        print(f"routing one request (encoding excluded), {name}: p50 {statistics.median(times):.3f} ms")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--datasets", nargs="+", default=["hwu64", "bfcl"], choices=["hwu64", "bfcl"])
    parser.add_argument("--hwu", type=Path, default=HWU)
    parser.add_argument("--bfcl", type=Path, default=BFCL)
    parser.add_argument("--speed", action="store_true")
    args = parser.parse_args()
    engine = create_engine("local")
    verdicts = []
    print(f"{'dataset':<8}{'train':<15}{'router':<34}{'leaf acc':>9}{'oos recall':>12}")
    for dataset in args.datasets:
        tree, rows, test = load_hwu(args.hwu) if dataset == "hwu64" else load_bfcl(args.bfcl)
        for setting, chosen in ((f"{SHOTS} per skill", per_skill(rows, SHOTS)), ("full", rows)):
            results = cell(dataset, tree, chosen, test, engine)
            for name, metrics in results:
                oos = "-" if metrics["oos_recall"] is None else f"{metrics['oos_recall']:.1%}"
                print(f"{dataset:<8}{setting:<15}{name:<34}{metrics['leaf']:>9.1%}{oos:>12}")
            mine, theirs = results[3][1], results[4][1]
            verdicts.append((dataset, setting, mine["leaf"] >= theirs["leaf"], mine["leaf"] - theirs["leaf"]))
    for dataset, setting, ok, gap in verdicts:
        print(
            f"{dataset} {setting}: learned {'matches or beats' if ok else 'is BELOW'} the logistic regression "
            f"({gap * 100:+.1f} points of leaf accuracy)"
        )
    if args.speed:
        speed(engine)


if __name__ == "__main__":
    main()
