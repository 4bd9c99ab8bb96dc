"""The 10-shot learned router against a logistic regression and the untrained ``examples`` strategy, and the README check.

    python bench/learning_vs_lr.py [--seeds 7 1 2 3] [--hwu DIR] [--skip-readme]

For each seed, 10 requests per HWU64 intent are drawn from the train split
(``bench/learning.py``'s draw, whose seed is 7) and three routers
learn from them, measured on the whole test split (leaf accuracy):

- ``examples``: the untrained strategy with the requests folded into the skills;
- ``learned``: ``semif train``'s router fitted on them (:func:`~semif_agent.routing.training.train`);
- ``logistic regression``: scikit-learn's (default settings) on the same embeddings
  (``bench/learning.py`` installs it in its own environment under ``.bench/``).

Then the README's first hour on a fresh starter workspace, through the
command line: where "Do I have any unsent emails?" and "Email Grace that I
accept the offer" go before and after one label and ``semif train``, and what
``semif train`` decided.
"""

from __future__ import annotations

import argparse
import json
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

from learning import HWU, SHOTS, folded, load_hwu, logistic, measure, per_skill, route_all

from semif_agent.engine import create_engine
from semif_agent.routing import create_strategy
from semif_agent.routing.learned import Learned, LearnedScorer
from semif_agent.routing.training import examples_from_dataset, train

GRACE = "Email Grace that I accept the offer"
UNSENT = "Do I have any unsent emails?"


def hwu(folder: Path, seeds: list[int]) -> None:
    engine = create_engine("local")
    tree, rows, test = load_hwu(folder)
    print(f"HWU64, {SHOTS} requests per skill, leaf accuracy on {len(test)} test requests")
    print(f"{'seed':>5}{'examples':>10}{'learned':>9}{'logistic':>10}{'learned - LR':>14}")
    gaps = []
    for seed in seeds:
        small = per_skill(rows, SHOTS, seed)
        untrained = measure(route_all(create_strategy("examples", folded(tree, small), engine), test), test)["leaf"]
        router, _ = train(tree, examples_from_dataset(small, tree), engine)
        learned = measure(route_all(Learned(tree, engine, LearnedScorer(tree, engine, router)), test), test)["leaf"]
        lr = measure(logistic(engine, small, test), test)["leaf"]
        gaps.append(learned - lr)
        print(f"{seed:>5}{untrained:>10.1%}{learned:>9.1%}{lr:>10.1%}{(learned - lr) * 100:>+13.1f}", flush=True)
    if len(gaps) > 1:
        print(f"mean gap {statistics.mean(gaps) * 100:+.2f} points (spread {statistics.stdev(gaps) * 100:.2f})")


def semif(*args: str) -> str:
    done = subprocess.run([sys.executable, "-m", "semif_agent", *args], capture_output=True, text=True, check=True)
    return done.stdout


def readme() -> None:
    with tempfile.TemporaryDirectory() as tmp:
        ws = str(Path(tmp) / "ws")
        semif("init", ws)

        def where(text: str) -> str:
            return json.loads(semif("route", text, "-w", ws, "--json"))["skill"]

        before = {text: where(text) for text in (UNSENT, GRACE)}
        run = json.loads(semif("run", GRACE, "-w", ws, "--json"))["run_id"]
        semif("label", run, "--skill", "email.compose", "-w", ws)
        decision = json.loads(semif("train", "-w", ws, "--json"))["decision"]
        print("\nThe README's first hour: one label (email.compose), then semif train")
        for text, was in before.items():
            print(f"  {text!r}: {was} -> {where(text)}")
        print(f"  {decision['reason']}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seeds", nargs="+", type=int, default=[7])
    parser.add_argument("--hwu", type=Path, default=HWU)
    parser.add_argument("--skip-readme", action="store_true")
    args = parser.parse_args()
    hwu(args.hwu, args.seeds)
    if not args.skip_readme:
        readme()


if __name__ == "__main__":
    main()
