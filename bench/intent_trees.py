"""Untrained intent trees against a flat argmax over the same texts, with out-of-scope recall beside accuracy.

    python bench/intent_trees.py [--sets hwu64 hwu64-oos bfcl] [--shots 10] [--draws 3] [--tune]
    python bench/intent_trees.py --leaf-text [--sets hwu64 bfcl]

For each set, at 0 shots (the skills' names and descriptions only) and at
``--shots`` examples per skill drawn from the train split (``--draws``
draws, each with its own seed; the figures are their mean), on the test
split:

- flat argmax: each request to the skill whose text is nearest by cosine
  (the same encoder), over its description (the name in words, for HWU64),
  over its name in words (BFCL, beside ``best_leaf`` over the same names),
  and at 10 shots over the centroid of its examples. A flat argmax never
  says ``none``;
- every untrained strategy of ``semif_agent.routing`` over the set's tree,
  at its defaults: in-scope accuracy (an answer of ``none`` counts as
  wrong) and out-of-scope recall beside it, never one without the other.
  Where the tree has ``none_examples``, ``examples`` is also measured as
  ``semif run`` routes: its route, ended at ``none`` where the act gate finds
  the request out of scope (nearer to a ``none`` example than to the skills
  the route weighed).
  ``--tune`` also tunes each strategy's ``none`` threshold on a validation
  split drawn from the train split (never the test split, nor the tree's
  ``none_examples``), for the best balanced accuracy.

Then a summary: each flat argmax beside the untrained strategy at its
defaults over the same texts, with its out-of-scope recall and the gain in
in-scope points. Every setting of the strategies was chosen on train splits
or validation splits drawn from them. Last run (``--draws 3 --tune``, test
splits), in-scope accuracy against the flat argmax, out-of-scope recall
after it:

- hwu64: 0 shots best_leaf 53.8% (flat 53.6%); 10 shots examples 81.7%
  (flat centroid 80.7%);
- hwu64-oos: 0 shots best_leaf 52.9% (flat 52.4%), 3.5%; 10 shots examples
  83.5% (flat centroid 83.2%), 0.8%, and as ``semif run`` ends it 83.0%,
  46.7%; best_leaf 53.3% (flat 52.4%), 1.7%;
- bfcl: 0 shots best_leaf 67.2% (flat 65.3%), 0.7%, over names 29.4% (flat
  28.3%); 10 shots examples 80.4% (flat centroid 77.1%), 15.1%, and as
  ``semif run`` ends it 79.6%, 24.3%.

``--leaf-text`` measures, on the train splits only, what embedding a leaf
as ``leaf_text`` makes it (the name's words its description lacks, then the
description) does against the description alone, as the flat argmax embeds
it. Last run, best_leaf at 0 shots: BFCL descriptions 62.0% against 64.4%
(flat 60.4%), BFCL names 24.5% against 25.0% (flat 27.0%); HWU64, whose
descriptions say their names' words, 55.2% either way (flat 54.9%).

The sets:

- ``hwu64``: ``../shared/datasets/hwu64`` (``--hwu DIR``, CC BY 4.0): 64 intents
  in 18 scenarios, test 1,076 requests, all in scope.
- ``hwu64-oos``: the same with 16 of its intents taken out of the tree
  (drawn with a fixed seed, never a scenario's last): their test requests are
  out of scope, and at 10 shots 100 of their train requests are the tree's
  ``none_examples`` (as CLINC150 gives 100 out-of-scope train requests). No
  public intent set with out-of-scope requests could be had from a package
  registry; this stands in for one, and says so.
- ``bfcl``: ``bench/bfcl_datasets.py``'s dataset (built when missing, from the
  ``bfcl-eval`` wheel, Apache-2.0): 699 functions grouped by ``semif tree
  build``, their requests in users' words and the irrelevance set as out of
  scope, split in halves by a hash of the text (train, test).
"""

from __future__ import annotations

import argparse
import random
import statistics
import sys
from dataclasses import replace
from pathlib import Path

import numpy as np
from learning import BFCL, HWU, folded, load_bfcl, load_hwu, per_skill

from semif_agent._sync import run_sync
from semif_agent.engine import create_engine
from semif_agent.loop.gate import DEFAULT_ACT_THRESHOLD, gate_route
from semif_agent.routing import create_strategy
from semif_agent.routing.evaluate import Example, route_all
from semif_agent.routing.tune import tune_threshold
from semif_agent.tree import SkillTree

STRATEGIES = ("chain", "best_leaf", "beam", "shortlist", "examples")
HELD_OUT_INTENTS = 16
NONE_EXAMPLES = 100
VALIDATION_PER_SKILL = 5


def without_intents(
    tree: SkillTree, train: list[Example], test: list[Example], count: int, seed: int = 0
) -> tuple[SkillTree, list[Example], list[Example], list[Example]]:
    """``tree`` less ``count`` intents (never a category's last): the tree, its train and test rows (the held-out
    intents' test rows as out of scope), and the held-out intents' train rows."""
    by_category: dict[str, list[str]] = {}
    for name, skill in tree.skills.items():
        by_category.setdefault(skill.category, []).append(name)
    draw = random.Random(seed)
    names = sorted(tree.skills)
    draw.shuffle(names)
    out: set[str] = set()
    for name in names:
        siblings = by_category[tree.skills[name].category]
        if len(out) < count and sum(s not in out for s in siblings) > 1:
            out.add(name)
    kept = {n: s for n, s in tree.skills.items() if n not in out}
    categories = {c: v for c, v in tree.categories.items() if any(s.category == c for s in kept.values())}
    smaller = SkillTree(categories, kept)
    return (
        smaller,
        [e for e in train if e.skill not in out],
        [e if e.skill not in out else Example(e.text, None) for e in test],
        [Example(e.text, None) for e in train if e.skill in out],
    )


def by_name(tree: SkillTree) -> SkillTree:
    """``tree`` with each skill described by its name in words only (HWU64's descriptions are that already)."""
    words = {n: n.split(".")[-1].replace("_", " ").replace("-", " ") for n in tree.skills}
    return SkillTree(tree.categories, {n: replace(s, description=words[n]) for n, s in tree.skills.items()})


def flat_predictions(engine, tree: SkillTree, test: list[Example], centroid: bool) -> list[str | None]:
    """A flat cosine: each request to the skill whose description (or examples' centroid) is nearest.

    A skill without examples stands as its description in the centroid's matrix too (BFCL's functions have one or
    two requests each, some none in the train half)."""
    names = list(tree.skills)
    if centroid:
        texts = [list(tree.skills[n].examples) or [tree.skills[n].description] for n in names]
        matrix = np.stack([np.asarray(engine.embed(t)).mean(axis=0) for t in texts])
    else:
        matrix = np.asarray(engine.embed([tree.skills[n].description for n in names]))
    matrix = matrix / np.linalg.norm(matrix, axis=1, keepdims=True)
    queries = np.asarray(engine.embed([e.text for e in test]))
    return [names[i] for i in (queries @ matrix.T).argmax(axis=1)]


def scored(predicted: list[str | None], test: list[Example]) -> tuple[float, float | None]:
    """In-scope accuracy (``none`` wrong) and out-of-scope recall (``None`` without out-of-scope requests)."""
    inside = [p == e.skill for p, e in zip(predicted, test) if e.skill is not None]
    outside = [p is None for p, e in zip(predicted, test) if e.skill is None]
    return sum(inside) / len(inside), (sum(outside) / len(outside) if outside else None)


def routed(strategy, test: list[Example], gated: bool = False) -> list[str | None]:
    """Where ``strategy`` routes each request; ``gated``: ``none`` too where the act gate finds the request out of
    scope (nearer to one of the tree's ``none_examples`` than to the skills it weighed), as ``semif run`` does."""
    if not gated:
        return [o.predicted for o in run_sync(route_all(strategy, test))]
    found = []
    for example in test:
        route = run_sync(strategy.aroute(example.text))
        route, _ = gate_route(route, example.text, strategy.tree, strategy.engine, threshold=DEFAULT_ACT_THRESHOLD)
        found.append(route.skill.name if route.skill else None)
    return found


def validation_rows(train: list[Example], shots: list[Example], seed: int) -> list[Example]:
    """``VALIDATION_PER_SKILL`` train requests of each skill not among its shots (and the out-of-scope ones given:
    those the tree does not hold as ``none_examples``)."""
    used = {e.text for e in shots}
    return per_skill([e for e in train if e.text not in used], VALIDATION_PER_SKILL, seed=1000 + seed)


def tuned_threshold(name: str, tree: SkillTree, engine, validation: list[Example]) -> float:
    """The ``none`` cut of ``tune_threshold`` (best balanced accuracy on ``validation``); one strategy is built and
    its cut moved, so the tree's calibration is fitted once."""
    strategy = create_strategy(name, tree, engine)

    def at(threshold: float):
        strategy.threshold = threshold
        return strategy

    found, _ = run_sync(tune_threshold(at, validation, tree, measure="balanced"))
    return found


def cell(
    engine, label: str, tree: SkillTree, train: list[Example], test: list[Example], args, none_pool: list[Example]
) -> list[tuple[str, float, float | None]]:
    """Every row of one set at one setting: (what, in-scope accuracy, out-of-scope recall), means over the draws."""
    draws = range(args.draws) if label != "0-shot" else range(1)
    rows: dict[str, list[tuple[float, float | None]]] = {}
    for draw in draws:
        shots = per_skill([e for e in train if e.skill is not None], args.shots, seed=draw) if label != "0-shot" else []
        with_shots = folded(tree, shots)
        if none_pool and label != "0-shot":
            pool = random.Random(draw).sample(none_pool, min(NONE_EXAMPLES, len(none_pool)))
            with_shots = replace(with_shots, none_examples=tuple(e.text for e in pool))
        rows.setdefault("flat cosine, descriptions", []).append(
            scored(flat_predictions(engine, tree, test, False), test)
        )
        named = by_name(tree)
        if not shots and any(named.skills[n].description != s.description for n, s in tree.skills.items()):
            rows.setdefault("flat cosine, names", []).append(scored(flat_predictions(engine, named, test, False), test))
            strategy = create_strategy("best_leaf", named, engine)
            rows.setdefault("best_leaf, names", []).append(scored(routed(strategy, test), test))
        if shots:
            rows.setdefault(f"flat {args.shots}-shot centroid", []).append(
                scored(flat_predictions(engine, with_shots, test, True), test)
            )
        for name in STRATEGIES:
            if name == "examples" and not shots:
                continue
            strategy_tree = with_shots if name == "examples" or shots else tree
            strategy = create_strategy(name, strategy_tree, engine)
            rows.setdefault(name, []).append(scored(routed(strategy, test), test))
            if name == "examples" and strategy_tree.none_examples:
                rows.setdefault("examples, then the gate's none rule", []).append(
                    scored(routed(strategy, test, gated=True), test)
                )
            if args.tune and name in ("best_leaf", "examples"):
                told = set(strategy_tree.none_examples)
                validation = validation_rows(train + [e for e in none_pool if e.text not in told], shots, draw)
                cut = tuned_threshold(name, strategy_tree, engine, validation)
                strategy = create_strategy(name, strategy_tree, engine, threshold=cut)
                rows.setdefault(f"{name}, none tuned on validation", []).append(scored(routed(strategy, test), test))
        sys.stdout.flush()
    return [
        (
            what,
            statistics.mean(a for a, _ in results),
            None if results[0][1] is None else statistics.mean(r for _, r in results if r is not None),
        )
        for what, results in rows.items()
    ]


def load_set(name: str, args) -> tuple[SkillTree, list[Example], list[Example], list[Example]]:
    """A set's tree, train rows, test rows and the pool its ``none_examples`` are drawn from."""
    if name == "bfcl":
        tree, train, test = load_bfcl(args.bfcl)
        return tree, [e for e in train if e.skill is not None], test, [e for e in train if e.skill is None]
    tree, train, test = load_hwu(args.hwu)
    if name == "hwu64":
        return tree, train, test, []
    return without_intents(tree, train, test, HELD_OUT_INTENTS)


def leaf_text_on_train(engine, args) -> None:
    """``best_leaf`` at 0 shots on each set's train split (development data: no test request), its leaves embedded as
    ``leaf_text`` makes them (the name's words the description lacks, then the description) and as the description
    alone (what the flat argmax embeds), over the descriptions and over the names in words."""
    from unittest import mock

    from semif_agent.routing import scoring

    print(f"{'set (train)':<24}{'texts':<14}{'flat argmax':>12}{'leaf_text':>11}{'description':>13}")
    for name in args.sets:
        if name == "hwu64-oos":
            continue
        tree, train, _, none_pool = load_set(name, args)
        rows = random.Random(0).sample(train, min(3000, len(train))) + none_pool
        for texts, described in (("descriptions", tree), ("names", by_name(tree))):
            flat, _ = scored(flat_predictions(engine, described, rows, False), rows)
            found = []
            for embedded_as in (scoring.leaf_text, lambda _name, description: description):
                with mock.patch.object(scoring, "leaf_text", embedded_as):
                    found.append(scored(routed(create_strategy("best_leaf", described, engine), rows), rows)[0])
            print(f"{name:<24}{texts:<14}{flat:>12.1%}{found[0]:>11.1%}{found[1]:>13.1%}")
            sys.stdout.flush()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sets", nargs="+", default=["hwu64", "hwu64-oos", "bfcl"])
    parser.add_argument("--hwu", type=Path, default=HWU)
    parser.add_argument("--bfcl", type=Path, default=BFCL)
    parser.add_argument("--shots", type=int, default=10)
    parser.add_argument("--draws", type=int, default=3)
    parser.add_argument("--tune", action="store_true", help="also tune each strategy's none threshold on validation")
    parser.add_argument(
        "--leaf-text", action="store_true", help="only measure leaf_text against the bare description on train splits"
    )
    args = parser.parse_args()
    engine = create_engine("local")
    if args.leaf_text:
        leaf_text_on_train(engine, args)
        return
    print(f"{'set':<11}{'setting':<9}{'router':<40}{'in-scope acc':>13}{'oos recall':>12}")
    summary = []
    for name in args.sets:
        tree, train, test, none_pool = load_set(name, args)
        for label in ("0-shot", f"{args.shots}-shot"):
            rows = cell(engine, label, tree, train, test, args, none_pool)
            for what, accuracy, recall in rows:
                print(f"{name:<11}{label:<9}{what:<40}{accuracy:>13.1%}{percent(recall):>12}")
                sys.stdout.flush()
            summary += compared(name, label, {what: (accuracy, recall) for what, accuracy, recall in rows}, args.shots)
    print()
    print("untrained routing at its defaults against the flat argmax over the same texts (test split):")
    print(f"{'set':<11}{'setting':<9}{'texts':<14}{'flat argmax':>12}{'untrained':>27}{'oos recall':>12}{'gain':>7}")
    for name, label, texts, flat, (what, accuracy, recall) in summary:
        print(
            f"{name:<11}{label:<9}{texts:<14}{flat:>12.1%}{what:>19}{accuracy:>8.1%}{percent(recall):>12}"
            f"{100 * (accuracy - flat):>+7.1f}"
        )


def percent(value: float | None) -> str:
    return "-" if value is None else f"{value:.1%}"


def compared(
    name: str, label: str, rows: dict[str, tuple[float, float | None]], shots: int
) -> list[tuple[str, str, str, float, tuple[str, float, float | None]]]:
    """The summary's lines for one set at one setting: each flat argmax beside the untrained strategy that routes
    over the same texts at its defaults (``best_leaf`` over descriptions or names; ``examples`` over the examples,
    as routed and as ``semif run`` ends it where the tree has ``none_examples``)."""
    pairs = [
        ("descriptions", "flat cosine, descriptions", "best_leaf"),
        ("names", "flat cosine, names", "best_leaf, names"),
    ]
    pairs += [
        ("examples", f"flat {shots}-shot centroid", "examples"),
        ("examples", f"flat {shots}-shot centroid", "examples, then the gate's none rule"),
    ]
    lines = []
    for texts, flat, strategy in pairs:
        if flat in rows and strategy in rows:
            shown = "examples + gate" if "gate" in strategy else strategy.split(",")[0]
            lines.append((name, label, texts, rows[flat][0], (shown, *rows[strategy])))
    return lines


if __name__ == "__main__":
    main()
