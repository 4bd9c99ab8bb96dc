"""The learned router against a same-encoder logistic regression, per dataset, at 10 per skill and on the whole train split.

    python bench/learning_large.py [--set NAME=DIR ...] [--settings 10 full] [--no-hwu]

Each dataset is a folder in the layout of ``../shared/datasets/hwu64``:
``tree.json`` (the skills), ``train.jsonl`` and ``test.jsonl`` (``{"text",
"skill"}`` rows, ``skill: null`` for a request no skill serves). HWU64 is
always measured unless ``--no-hwu``; ``--set`` adds others (a tool or intent
set converted to that layout). For each set and each training size it
prints, on the test split:

- ``learned``: ``semif train``'s router fitted on the train rows (with the
  seconds the training took: embedding, untrained scoring and fitting);
- ``LR``: scikit-learn's logistic regression (default settings) on the same
  embeddings, in the environment ``bench/learning.py`` installs under
  ``.bench/``; requests of no skill are its ``none`` class;

as in-scope accuracy (an answer of ``none`` counts as wrong) and, where the
set has out-of-scope requests, their recall beside it. Embeddings are
computed once per text and kept in the local engine's embedding store, so a
second run (the code before a change, say, with another ``PYTHONPATH``) only
fits. Run one at a time: the fits use a core each.
"""

from __future__ import annotations

import argparse
import time
from pathlib import Path

from learning import HWU, SHOTS, load_hwu, logistic, measure, per_skill, route_all

from semif_agent.engine import create_engine
from semif_agent.routing.learned import Learned, LearnedScorer
from semif_agent.routing.training import examples_from_dataset, train


def cells(name: str, folder: Path, settings: list[str], engine) -> list[tuple[str, str, dict, dict, float]]:
    tree, rows, test = load_hwu(folder)
    skills = len({r.skill for r in rows if r.skill is not None})
    print(f"\n{name}: {skills} skills, {len(rows):,} train rows, {len(test):,} test rows", flush=True)
    out = []
    for setting in settings:
        chosen = rows if setting == "full" else per_skill(rows, int(setting))
        label = "full" if setting == "full" else f"{setting} per skill"
        started = time.perf_counter()
        router, _ = train(tree, examples_from_dataset(chosen, tree), engine)
        seconds = time.perf_counter() - started
        learned = measure(route_all(Learned(tree, engine, LearnedScorer(tree, engine, router)), test), test)
        peer = measure(logistic(engine, chosen, test), test)
        out.append((name, label, learned, peer, seconds))
        print(row(name, label, learned, peer, seconds), flush=True)
    return out


def share(value: float | None) -> str:
    return "-" if value is None else f"{value:.1%}"


def row(name: str, label: str, learned: dict, peer: dict, seconds: float) -> str:
    gap = (learned["leaf"] - peer["leaf"]) * 100
    return (
        f"{name:<10}{label:<14}{share(learned['leaf']):>9}{share(learned['oos_recall']):>9}"
        f"{share(peer['leaf']):>9}{share(peer['oos_recall']):>9}{gap:>+8.1f}{seconds:>8.0f}"
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--set", action="append", default=[], metavar="NAME=DIR", help="another dataset folder")
    parser.add_argument("--settings", nargs="+", default=[str(SHOTS), "full"], help="requests per skill, or full")
    parser.add_argument("--no-hwu", action="store_true")
    args = parser.parse_args()
    sets = [] if args.no_hwu else [("hwu64", HWU)]
    sets += [(spec.split("=", 1)[0], Path(spec.split("=", 1)[1])) for spec in args.set]
    engine = create_engine("local")
    results = []
    for name, folder in sets:
        results += cells(name, folder, args.settings, engine)
    print(f"\n{'set':<10}{'train':<14}{'learned':>9}{'oos':>9}{'LR':>9}{'LR oos':>9}{'gap':>8}{'train s':>8}")
    for result in results:
        print(row(*result))


if __name__ == "__main__":
    main()
