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

``--speed`` also times ``semif train`` on 15,000 labelled requests
(``--speed-size``) in a fresh process with an empty embedding cache; then,
on the same embeddings, ours against the logistic regression (scikit-learn
pinned at 1.9.1, in a child process of the bench), the sides taking turns
(``bench/_fair.py``, ``--speed-rounds`` rounds): the seconds each takes to
learn from all of them, and the time to route one request once embedded
(the untrained ``examples`` beside them: what learning adds), as medians with
their spread and the load.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import os
import random
import subprocess
import sys
import tempfile
import time
from dataclasses import replace
from pathlib import Path

import numpy as np
from _fair import Load, PeerProcess, interleave, peer_venv, table

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
SHOTS = 10
PEER_PINS = {"scikit-learn": "1.9.1", "numpy": "2.4.6"}
PEER = """
import json, sys
import numpy as np
from sklearn.linear_model import LogisticRegression
data = np.load(sys.argv[1])
model = LogisticRegression(max_iter=2000).fit(data["train_x"], data["train_y"])
probabilities = model.predict_proba(data["test_x"])
print(json.dumps(probabilities.max(axis=1).round(6).tolist()))
print(json.dumps(model.classes_[probabilities.argmax(axis=1)].tolist()))
"""
"""The logistic regression fitted once: its top probability for each test vector, then (the last line) its answers."""
PEER_SERVER = """
import time
import numpy as np
from sklearn.linear_model import LogisticRegression
data = np.load(sys.argv[1])
model = None

def handle(ask):
    global model
    if ask["op"] == "fit":
        started = time.perf_counter()
        model = LogisticRegression(max_iter=2000).fit(data["train_x"], data["train_y"])
        return (time.perf_counter() - started) * 1000
    times = []
    for row in data["test_x"]:
        started = time.perf_counter()
        model.predict_proba(row[None, :])
        times.append((time.perf_counter() - started) * 1000)
    return times

serve(handle)
"""
"""The logistic regression as a child process (``_fair.PeerProcess``): ``fit`` fits it on the train vectors and
returns the ms it took; ``route`` scores each test vector on its own (one request at a time, as a router does)."""


def peer_python() -> Path:
    return peer_venv("venv-sklearn", PEER_PINS)


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
    return logistic_scored(engine, rows, test)[0]


def logistic_scored(engine, rows: list[Example], test: list[Example]) -> tuple[list[str | None], list[float]]:
    """The logistic regression's answer for each test request (``None``: out of scope) and its probability."""
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
    lines = out.stdout.strip().splitlines()
    answers = [None if names[i] == "None" else names[i] for i in json.loads(lines[-1])]
    return answers, json.loads(lines[-2])


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


def many_requests(rows: list[Example], size: int) -> list[Example]:
    """``size`` labelled requests: ``rows``, then as many as needed of them again prefixed "could you"."""
    rows = rows + [Example(f"could you {e.text}", e.skill) for e in rows[: size - len(rows)]]
    return rows[:size]


def hwu_workspace(ws: Path, folder: Path = HWU) -> Path:
    """A workspace at ``ws`` whose skill tree is HWU64's (no SKILL.md skills of the user's)."""
    (ws / "data").mkdir(parents=True)
    (ws / "data" / "categories.json").write_text((folder / "tree.json").read_text())
    (ws / "semif.toml").write_text('[paths]\ndata = "data"\n[skills]\nuser_skills = false\n')
    return ws


def write_dataset(path: Path, rows: list[Example]) -> Path:
    """``rows`` as a DATASETS file of ``semif train`` (JSON lines ``{"text", "skill"}``)."""
    path.write_text("".join(json.dumps({"text": e.text, "skill": e.skill}) + "\n" for e in rows))
    return path


def speed(engine, rounds: int, size: int) -> None:
    """``semif train`` on ``size`` labelled requests in a fresh process; then, on the same embeddings, learning
    and routing ours against the logistic regression, the sides taking turns."""
    tree, rows, test = load_hwu(HWU)
    rows = many_requests(rows + test, size)
    with tempfile.TemporaryDirectory() as tmp:
        ws = hwu_workspace(Path(tmp) / "ws")
        data = write_dataset(Path(tmp) / "requests.jsonl", rows)
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
    load = Load()
    examples = examples_from_dataset(rows, tree)
    names = sorted({str(e.skill) for e in rows})
    texts = [e.text for e in test[:300]]
    train_x, test_x = engine.embedder.embed([e.text for e in rows]), engine.embedder.embed(texts)
    learned: list[Learned] = []
    untrained = create_strategy("examples", folded(tree, per_skill(load_hwu(HWU)[1], SHOTS)), engine)

    def fit_ours() -> float:  # seconds, as the peer's below
        router, fitted = train(tree, examples, engine)  # the embeddings come from the engine's memory
        learned[:] = [Learned(tree, engine, LearnedScorer(tree, engine, router))]
        return fitted.seconds["fitting"]

    with tempfile.TemporaryDirectory() as tmp:
        arrays = Path(tmp) / "data.npz"
        labels = np.array([names.index(str(e.skill)) for e in rows])
        np.savez(arrays, train_x=train_x, train_y=labels, test_x=test_x)
        with PeerProcess(peer_python(), "import sys\n" + PEER_SERVER, str(arrays)) as peer:
            fits = interleave(
                {
                    "semif train (learned)": fit_ours,
                    "logistic regression (sklearn)": lambda: peer.ask({"op": "fit"}) / 1000,
                },
                rounds,
                warmup=0,
            )
            routes = interleave(
                {
                    "examples (untrained, 10 per skill)": lambda: time_routes(untrained, texts),
                    "learned": lambda: time_routes(learned[0], texts),
                    "logistic regression (sklearn)": lambda: peer.ask({"op": "route"}),
                },
                rounds,
            )
    print(
        f"learning from the same {len(rows):,} embedded requests ({rounds} rounds, the sides taking turns; "
        "semif chooses its settings over folds and measures a held-out part, the regression fits once):"
    )
    print(table(fits, reference="logistic regression (sklearn)", unit="s", digits=1))
    print(f"routing one request once embedded ({len(texts)} requests x {rounds} rounds):")
    print(table(routes, reference="logistic regression (sklearn)", digits=3))
    print(f"({load.text()})")


def time_routes(strategy, texts: list[str]) -> list[float]:
    times = []
    for text in texts:
        started = time.perf_counter()
        run_sync(strategy.aroute(text))
        times.append((time.perf_counter() - started) * 1000)
    return times


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument(
        "--datasets",
        nargs="*",
        default=["hwu64", "bfcl"],
        choices=["hwu64", "bfcl"],
        help="the accuracy datasets (both unless told); given with no name, none: only --speed runs",
    )
    parser.add_argument("--hwu", type=Path, default=HWU)
    parser.add_argument("--bfcl", type=Path, default=BFCL)
    parser.add_argument("--speed", action="store_true")
    parser.add_argument("--speed-rounds", type=int, default=3, help="timed rounds per side for --speed")
    parser.add_argument("--speed-size", type=int, default=15_000, help="labelled requests for --speed")
    args = parser.parse_args()
    engine = create_engine("local")
    verdicts = []
    if args.datasets:
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
        speed(engine, args.speed_rounds, args.speed_size)


if __name__ == "__main__":
    main()
