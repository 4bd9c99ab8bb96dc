"""Per-decision latency of each SemIf engine, for 5 and for 16 options.

    python bench/engine_latency.py [--decisions 200]

Each decision has a fresh state (as a new request would). "warm" means the
options' embeddings are already cached (the normal case when routing over a
fixed tree); "cold" means every option text is new too.
"""

from __future__ import annotations

import argparse
import random
import statistics
import time

from semif_agent.engine import DecisionRequest, Option, ScriptedEngine, create_engine, local_available

VERBS = "add find list send write delete move schedule cancel archive rename share export import track".split()
NOUNS = "note email file event todo invoice contact photo report meeting reminder playlist budget recipe ticket".split()


def options(n: int, salt: str) -> list[Option]:
    rng = random.Random(n)
    opts = [
        Option(f"skill_{i}", f"{rng.choice(VERBS)} a {rng.choice(NOUNS)} {salt} and {rng.choice(VERBS)} its {rng.choice(NOUNS)}")
        for i in range(n - 1)
    ]
    return opts + [Option("none", "Nothing fits.")]


def state(i: int, salt: str = "") -> str:
    rng = random.Random(i)
    return f"please {rng.choice(VERBS)} the {rng.choice(NOUNS)} about {rng.choice(NOUNS)} number {i}{salt}"


def measure(engine, n_options: int, decisions: int, *, cold: bool) -> list[float]:
    fixed = options(n_options, "fixed")
    engine.call(DecisionRequest(state(-1), "Which?", fixed))  # warm-up: caches, lazy init
    times = []
    for i in range(decisions):
        opts = options(n_options, f"v{i}") if cold else fixed
        start = time.perf_counter()
        engine.call(DecisionRequest(state(i, f"{n_options}{cold}"), "Which skill?", opts))
        times.append((time.perf_counter() - start) * 1000)
    return times


def routing_among(n_skills: int, requests: int) -> None:
    """A whole routing decision (best leaf over every skill of a built tree), leaves already embedded."""
    import json
    import tempfile
    from pathlib import Path

    from semif_agent._sync import run_sync
    from semif_agent.routing import create_strategy
    from semif_agent.tree.build import FlatSkill, build_tree
    from semif_agent.tree import SkillTree

    skills = [FlatSkill(o.id, o.description) for o in options(n_skills + 1, "tree")[:-1]]
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "tree.json"
        path.write_text(json.dumps(build_tree(skills)))
        tree = SkillTree.load(path, Path(tmp))
    strategy = create_strategy("best_leaf", tree, create_engine("local"))
    run_sync(strategy.aroute(state(-1)))
    times = []
    for i in range(requests):
        start = time.perf_counter()
        run_sync(strategy.aroute(state(i, "route")))
        times.append((time.perf_counter() - start) * 1000)
    times.sort()
    print(f"routing among {n_skills} skills (best leaf, a new request each time, model call included): "
          f"median {statistics.median(times):.2f} ms, p90 {times[int(0.9 * (len(times) - 1))]:.2f} ms")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--decisions", type=int, default=200)
    args = parser.parse_args()
    engines = [("lexical", create_engine("lexical")), ("scripted", ScriptedEngine(default="first"))]
    if local_available():
        engines.insert(0, ("local", create_engine("local")))
    print(f"{'engine':<10}{'options':>8}{'cache':>7}{'median ms':>12}{'p90 ms':>10}")
    for name, engine in engines:
        for n in (5, 16):
            for cold in ((False, True) if name == "local" else (False,)):
                times = sorted(measure(engine, n, args.decisions, cold=cold))
                p90 = times[int(0.9 * (len(times) - 1))]
                print(f"{name:<10}{n:>8}{'cold' if cold else 'warm':>7}{statistics.median(times):>12.3f}{p90:>10.3f}")
    if local_available():
        routing_among(150, args.decisions)


if __name__ == "__main__":
    main()
