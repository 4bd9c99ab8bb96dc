"""Throughput of ``semif eval`` on 20,000 requests: here, and on a local Ray cluster with 1 and 2 workers.

    python bench/ray_scale.py [--requests 20000] [--strategy examples] [--workers 1,2] [--hwu DIR]

The requests are HWU64's (train and test, 11,036), then the same requests
again with " please" appended until there are ``--requests`` of them, so every
text is embedded once (a repeat would be served from the embedder's memory
cache). The tree is HWU64's 64 intents. Every configuration routes the same
requests with the same strategy and no disk cache of embeddings, so each text
is run through the model once per configuration:

- ``local``: :func:`semif_agent.routing.evaluate.route_all` in this process, as
  ``semif eval`` does without ``--ray``;
- ``ray N``: :func:`semif_agent.distributed.jobs.route_all` on ``N`` actors of a
  local cluster, as ``semif eval --ray`` does (batches of 64 requests, each
  embedded in one go, then routed one by one). The time includes building the
  actors and their engines; the cluster's own start is reported apart.

Each configuration's decisions are checked against the local ones (they must be
the same). Then, to show where a worker's time goes, a model of one thread (as
a worker has) embeds a sample of 2,000 new texts in batches of 64 and routes
them once they are embedded: the two per-request costs a worker pays.

Prints requests per second, the speed-up over local, and the load average
before and after (a figure taken under load above ~2.5 on 2 cores is low).
"""

from __future__ import annotations

import argparse
import os
import time
from functools import partial
from pathlib import Path

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


def load() -> str:
    return os.getloadavg().__repr__()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--requests", type=int, default=20_000)
    parser.add_argument("--strategy", default="examples")
    parser.add_argument("--workers", default="1,2", help="comma-separated worker counts")
    parser.add_argument("--hwu", type=Path, default=HWU)
    args = parser.parse_args()
    import ray

    from semif_agent.distributed import jobs
    from semif_agent.distributed.pool import RayPool

    tree, examples = requests(args.hwu, args.requests)
    counts = [int(n) for n in args.workers.split(",")]
    print(
        f"{len(examples)} requests ({len({e.text for e in examples})} distinct), {len(tree.skills)} skills, "
        f"strategy {args.strategy}, {os.cpu_count()} cores; load before {load()}"
    )
    make = partial(strategy, tree)

    started = time.perf_counter()
    local = run_sync(route_all(make(args.strategy), examples))
    seconds = time.perf_counter() - started
    rates = {"local": len(examples) / seconds}
    print(f"{'local':<8}{seconds:>8.1f} s {rates['local']:>8.0f} requests/s")

    started = time.perf_counter()
    ray.init(num_cpus=max(counts), include_dashboard=False, log_to_driver=False, logging_level="ERROR")
    print(f"(local cluster of {max(counts)} CPUs started in {time.perf_counter() - started:.1f} s)")
    try:
        for count in counts:
            started = time.perf_counter()
            with RayPool(ray, count) as pool:
                outcomes = jobs.route_all(pool, make, (args.strategy,), examples)
            seconds = time.perf_counter() - started
            same = [o.predicted for o in outcomes] == [o.predicted for o in local]
            name = f"ray {count}"
            rates[name] = len(examples) / seconds
            print(
                f"{name:<8}{seconds:>8.1f} s {rates[name]:>8.0f} requests/s  x{rates[name] / rates['local']:.2f} "
                f"local  ({'same decisions' if same else 'DIFFERENT DECISIONS'})"
            )
    finally:
        ray.shutdown()
    breakdown(tree, args.strategy, [Example(e.text + " thanks", e.skill) for e in examples[:2000]])
    print(f"load after {load()}")


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
