"""Throughput of ``semif eval`` on 20,000 requests: here, and on a local Ray cluster with 1 and 2 workers.

    python bench/ray_scale.py [--requests 20000] [--rounds 3] [--strategy examples] [--workers 1,2] [--hwu DIR]

The requests are HWU64's (train and test, 11,036), then the same requests
again with " please" appended until there are ``--requests`` of them, so every
text is embedded once (a repeat would be served from the embedder's memory
cache). The tree is HWU64's 64 intents. Every configuration routes the same
requests with the same strategy and no disk cache of embeddings, so each text
is run through the model once per configuration:

- ``local``: :func:`semif_agent.routing.evaluate.route_all` in this process, as
  ``semif eval`` does without ``--ray``, on an embedder of its own each round
  (a fresh model session, an empty memory cache: what a worker starts with);
- ``ray N``: :func:`semif_agent.distributed.jobs.route_all` on ``N`` actors of a
  local cluster, as ``semif eval --ray`` does (batches of 64 requests, each
  embedded in one go, then routed one by one). The time includes building the
  actors and their engines; the cluster's own start is reported apart.

The configurations take turns, round by round (``bench/_fair.py``: local,
ray 1, ray 2, local, ...; ``--rounds`` rounds), so a change in the machine's
load falls on all of them; each is reported as the median round with its
quartiles and range. Each configuration's decisions are checked against those
of a local run made first (they must be the same). Then, to show where a worker's time goes, a model of one thread (as
a worker has) embeds a sample of 2,000 new texts in batches of 64 and routes
them once they are embedded: the two per-request costs a worker pays.

Prints requests per second (by the median round), the speed-up over local, and
the load average at the start and end (a figure taken under load above ~2.5 on
2 cores is low).
"""

from __future__ import annotations

import argparse
import os
import time
from functools import partial
from pathlib import Path

from _fair import Load, interleave, versus

from semif_agent._sync import run_sync
from semif_agent.engine.registry import create_engine
from semif_agent.routing import create_strategy
from semif_agent.routing.evaluate import Example, load_dataset, route_all
from semif_agent.tree import SkillTree

ROOT = Path(__file__).resolve().parents[1]
HWU = ROOT.parent / "shared" / "datasets" / "hwu64"


def requests(folder: Path, count: int) -> tuple[SkillTree, list[Example]]:
    tree = SkillTree.load(folder / "tree.json", folder)
    base = load_dataset(folder / "train.jsonl") + load_dataset(folder / "test.jsonl")
    rows, suffix = [], ""
    while len(rows) < count:
        rows += [Example(e.text + suffix, e.skill) for e in base[: count - len(rows)]]
        suffix += " please"
    return tree, rows


def strategy(tree: SkillTree, name: str) -> object:
    """The strategy as ``semif eval`` builds it, on a local engine that keeps no disk cache."""
    return create_strategy(name, tree, create_engine("local", {"cache": False}))


def fresh_strategy(tree: SkillTree, name: str) -> object:
    """The strategy on an embedder of its own (a fresh model session, an empty memory cache), as a worker has."""
    from semif_agent.engine.local import Embedder, LocalEngine, model_file

    return create_strategy(name, tree, LocalEngine(Embedder(model_file())))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--requests", type=int, default=20_000)
    parser.add_argument("--strategy", default="examples")
    parser.add_argument("--workers", default="1,2", help="comma-separated worker counts")
    parser.add_argument("--rounds", type=int, default=3, help="timed rounds per configuration (interleaved)")
    parser.add_argument("--hwu", type=Path, default=HWU)
    args = parser.parse_args()
    import ray

    from semif_agent.distributed import jobs
    from semif_agent.distributed.pool import RayPool

    load = Load()
    tree, examples = requests(args.hwu, args.requests)
    counts = [int(n) for n in args.workers.split(",")]
    print(
        f"{len(examples)} requests ({len({e.text for e in examples})} distinct), {len(tree.skills)} skills, "
        f"strategy {args.strategy}, {os.cpu_count()} cores"
    )
    make = partial(strategy, tree)
    reference = run_sync(route_all(fresh_strategy(tree, args.strategy), examples))  # the decisions to match
    started = time.perf_counter()
    ray.init(num_cpus=max(counts), include_dashboard=False, log_to_driver=False, logging_level="ERROR")
    print(f"(local cluster of {max(counts)} CPUs started in {time.perf_counter() - started:.1f} s)")
    same: dict[str, bool] = {}

    def local() -> None:
        outcomes = run_sync(route_all(fresh_strategy(tree, args.strategy), examples))
        same["local"] = same.get("local", True) and [o.predicted for o in outcomes] == [o.predicted for o in reference]

    def on_ray(count: int):
        def side() -> None:
            with RayPool(ray, count) as pool:
                outcomes = jobs.route_all(pool, make, (args.strategy,), examples)
            name = f"ray {count}"
            same[name] = same.get(name, True) and [o.predicted for o in outcomes] == [o.predicted for o in reference]

        return side

    try:
        sides = {"local": local, **{f"ray {count}": on_ray(count) for count in counts}}
        spreads = interleave(sides, args.rounds, warmup=0)
    finally:
        ray.shutdown()
    print(f"{args.rounds} rounds, the configurations taking turns (local, ray 1, ray 2, local, ...); one round:")
    for name, spread in spreads.items():
        rate = len(examples) / (spread.median / 1000)
        against = "" if name == "local" else f"  {versus(spread, spreads['local'], 'local')}"
        print(
            f"  {name:<8}{spread.text('ms', 0)}  {rate:>6.0f} requests/s{against}  "
            f"({'same decisions' if same.get(name) else 'DIFFERENT DECISIONS'})"
        )
    breakdown(tree, args.strategy, [Example(e.text + " thanks", e.skill) for e in examples[:2000]])
    print(f"({load.text()})")


def breakdown(tree: SkillTree, name: str, sample: list[Example]) -> None:
    """Per request on one core (a model of one thread, as a worker has): embedding in batches of 64, then routing."""
    from semif_agent.engine.local import Embedder, LocalEngine, model_file

    embedder = Embedder(model_file(), threads=1)
    routing = create_strategy(name, tree, LocalEngine(embedder))
    started = time.perf_counter()
    for start in range(0, len(sample), 64):
        embedder.embed([e.text for e in sample[start : start + 64]])
    embedding = (time.perf_counter() - started) * 1000 / len(sample)
    started = time.perf_counter()
    run_sync(route_all(routing, sample))
    routing_ms = (time.perf_counter() - started) * 1000 / len(sample)
    print(
        f"one core, per request: {embedding:.2f} ms embedding (batches of 64), {routing_ms:.2f} ms routing "
        f"once embedded; at most {1000 / (embedding + routing_ms):.0f} requests/s per worker"
    )


if __name__ == "__main__":
    main()
