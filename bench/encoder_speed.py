"""A tuned encoder routes and re-embeds a tree as fast as the installed one: the same graph, other weights.

    python bench/encoder_speed.py --workspace WS [--requests 300] [--skills 10000]

``WS`` is a workspace that ``semif train --encoder`` tuned (its ``data/encoder``). Both encoders run with no
embedding cache, taking turns so a busy machine weighs on both alike:

- **routing**: one request embedded at a time (what a ``find`` or a ``semif run`` embeds), ``--requests``
  distinct requests (made of the first sentences of real skills' descriptions),
  p50 / p95 per request;
- **re-embedding a tree**: ``--skills`` skill texts (real descriptions, topped up with ``bench/tree_scale.py``'s
  variants) embedded in the engine's batches, as ``semif tree build`` embeds them, in seconds, once each.

Last run (2 cores shared with other work, load 3-5), see the end of this docstring when it is filled in.
"""

from __future__ import annotations

import argparse
import statistics
import sys
import time
from pathlib import Path

from semif_agent.engine.local import Embedder, model_file, tuned_model
from semif_agent.workspace import Workspace

sys.path.insert(0, str(Path(__file__).parent))
from tree_scale import catalog, default_corpora, real_skills


def timed(embedder: Embedder, texts: list[str]) -> float:
    started = time.perf_counter()
    embedder.embed(texts)
    return time.perf_counter() - started


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--workspace", required=True, type=Path)
    parser.add_argument("--requests", type=int, default=300)
    parser.add_argument("--skills", type=int, default=10_000)
    args = parser.parse_args()
    tuned_file = tuned_model(Workspace(args.workspace).data_dir / "encoder")
    encoders = {
        "installed": lambda: Embedder(model_file(), store=None),
        "tuned": lambda: Embedder(
            tuned_file.path, model_id=tuned_file.model_id, model_sha256=tuned_file.sha256, store=None
        ),
    }
    skills = catalog(real_skills(default_corpora()), args.skills)
    texts = [f"{name.replace('-', ' ')}: {description}" for name, description in skills]
    requests = [f"please help me {description.split('.')[0].lower()}" for _, description in skills[: args.requests]]
    built = {name: make() for name, make in encoders.items()}
    for embedder in built.values():
        embedder.embed(["warm up"])
    per_request: dict[str, list[float]] = {name: [] for name in built}
    for text in requests:
        for name, embedder in built.items():
            per_request[name].append(timed(embedder, [text]) * 1000)
    print(f"routing: one request embedded at a time, {len(requests)} requests, ms")
    for name, values in per_request.items():
        values.sort()
        p95 = values[int(0.95 * (len(values) - 1))]
        print(f"  {name:<10} p50 {statistics.median(values):6.2f}  p95 {p95:6.2f}", flush=True)
    print(f"re-embedding {len(texts):,} skill texts, in the engine's batches, s")
    fresh = {name: make() for name, make in encoders.items()}  # new memory caches
    for name, embedder in fresh.items():
        print(f"  {name:<10} {timed(embedder, texts):7.1f}", flush=True)


if __name__ == "__main__":
    main()
