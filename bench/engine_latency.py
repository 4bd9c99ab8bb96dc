"""Per-decision latency of each SemIf engine, for 5 and for 16 options, and the local embedder's start and bulk work.

    python bench/engine_latency.py [--decisions 200] [--part all|decisions|embedder]
                                   [--texts 10000] [--before REV] [--before-texts 500]

Each decision has a fresh state (as a new request would). "warm" means the
options' embeddings are already cached (the normal case when routing over a
fixed tree); "cold" means every option text is new too.

The embedder part measures, each in a new process, building the embedder
with an empty cache folder (cold start) and again with the folder the first
start filled (warm start), and throughput and peak memory (RSS) while
embedding ``--texts`` skill descriptions (the real SKILL.md corpus from
``../shared/skills-corpus`` when it is beside the repository, topped up with
variants; generated otherwise); then, in this process, spinning onnxruntime
threads against sleeping ones. ``--before REV`` measures the same with the code of git
revision REV (checked out in a temporary worktree), on ``--before-texts``
texts only (code that embeds everything in one batch would need tens of GB
for 10000); without it the figures recorded for the code before bounded
batches are printed, labelled as recorded.
"""

from __future__ import annotations

import argparse
import json
import os
import random
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import semif_agent
from semif_agent.engine import DecisionRequest, Option, ScriptedEngine, create_engine, local_available

VERBS = "add find list send write delete move schedule cancel archive rename share export import track".split()
NOUNS = "note email file event todo invoice contact photo report meeting reminder playlist budget recipe ticket".split()


def options(n: int, salt: str) -> list[Option]:
    rng = random.Random(n)
    opts = [
        Option(
            f"skill_{i}",
            f"{rng.choice(VERBS)} a {rng.choice(NOUNS)} {salt} and {rng.choice(VERBS)} its {rng.choice(NOUNS)}",
        )
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
    from semif_agent.tree import SkillTree
    from semif_agent.tree.build import LeafSpec, build_tree

    skills = [LeafSpec(o.id, o.description) for o in options(n_skills + 1, "tree")[:-1]]
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
    print(
        f"routing among {n_skills} skills (best leaf, a new request each time, model call included): "
        f"median {statistics.median(times):.2f} ms, p90 {times[int(0.9 * (len(times) - 1))]:.2f} ms"
    )


REPO = Path(__file__).resolve().parents[1]
CORPUS = REPO / "tests" / "fixtures" / "skills-corpus"
# The code before bounded batches, measured once with `--before 5b2f9e7` (2 cores, load average 1.0).
RECORDED = {
    "label": "5b2f9e7 (recorded)",
    "cold_ms": 249,
    "warm_ms": 243,  # it hashed the model and optimised the graph at every start
    "small": {"texts_per_s": 41, "peak_mb": 3081},
    "large": "killed at 23.8 GB",  # 10000 descriptions in one batch: the kernel killed it after 119 s
}
BUILD_CHILD = """
import json, time
import numpy, onnxruntime, tokenizers  # imported first: the figure is the embedder's own start
from semif_agent.engine.local import Embedder, model_file
start = time.perf_counter()
Embedder(model_file())
print(json.dumps({"ms": (time.perf_counter() - start) * 1000}))
"""
EMBED_CHILD = """
import json, resource, sys, time
from semif_agent.engine.local import Embedder, model_file
with open(sys.argv[1]) as handle:
    texts = json.load(handle)
embedder = Embedder(model_file())
start = time.perf_counter()
embedder.embed(texts)
seconds = time.perf_counter() - start
peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
print(json.dumps({"texts_per_s": len(texts) / seconds, "peak_mb": peak}))
"""


def corpus_descriptions() -> list[tuple[str, str]]:
    """``(name, description)`` of each SKILL.md in the corpus beside the repository, if it is there."""
    if not CORPUS.is_dir():
        return []
    from semif_agent.catalog.frontmatter import read_document
    from semif_agent.catalog.loader import find_skill_folders, find_skill_md

    found = []
    for _, folder in find_skill_folders(CORPUS):
        data = read_document(find_skill_md(folder)).data()
        if isinstance(data.get("description"), str):
            found.append((str(data.get("name") or folder.name), data["description"]))
    return found


def skill_descriptions(count: int) -> list[str]:
    """Skill descriptions as the tree embeds them: the real ones, then variants (a part of one, other words added)."""
    from semif_agent.engine.local import option_text

    rng = random.Random(7)
    real = corpus_descriptions() or [
        (
            f"{verb}-{noun}",
            " ".join(
                f"Use when you need to {rng.choice(VERBS)} a {rng.choice(NOUNS)}." for _ in range(rng.randint(2, 12))
            ),
        )
        for verb, noun in zip(VERBS, NOUNS)
    ]
    pool = [word for _, description in real for word in description.split()]
    texts = [option_text(name, description) for name, description in real][:count]
    while len(texts) < count:
        name, description = real[len(texts) % len(real)]
        words = description.split()
        keep = rng.randint(max(3, len(words) // 3), len(words))
        words = words[:keep] + rng.sample(pool, rng.randint(0, max(1, len(words) - keep)))
        texts.append(option_text(f"{name}-{len(texts)}", " ".join(words)))
    return texts


def run_child(code: str, source: Path, cache: Path, *args: str) -> dict:
    """Run ``code`` in a new interpreter on the package in ``source``; its JSON answer, or why it has none."""
    env = {**os.environ, "PYTHONPATH": str(source), "SEMIF_CACHE_DIR": str(cache)}
    done = subprocess.run([sys.executable, "-c", code, *args], capture_output=True, text=True, env=env)
    if done.returncode:
        last = (done.stderr.strip().splitlines() or [""])[-1]
        return {"error": "killed (out of memory?)" if done.returncode == -9 else f"exit {done.returncode}: {last}"}
    return json.loads(done.stdout.strip().splitlines()[-1])


def start_times(source: Path, runs: int = 3) -> tuple[float, float]:
    """Median embedder construction in ms: with an empty cache folder, then with the one a start filled."""
    cold = []
    for _ in range(runs):
        with tempfile.TemporaryDirectory() as cache:
            cold.append(run_child(BUILD_CHILD, source, Path(cache))["ms"])
    with tempfile.TemporaryDirectory() as cache:
        run_child(BUILD_CHILD, source, Path(cache))
        warm = [run_child(BUILD_CHILD, source, Path(cache))["ms"] for _ in range(runs)]
    return statistics.median(cold), statistics.median(warm)


def bulk(source: Path, texts: list[str]) -> dict:
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "texts.json"
        path.write_text(json.dumps(texts))
        return run_child(EMBED_CHILD, source, Path(tmp), str(path))


def measure_revision(revision: str, texts: list[str]) -> dict:
    """The figures of git revision ``revision``, checked out in a temporary worktree."""
    with tempfile.TemporaryDirectory() as tmp:
        tree = Path(tmp) / "tree"
        subprocess.run(
            ["git", "-C", str(REPO), "worktree", "add", "--detach", str(tree), revision],
            check=True,
            capture_output=True,
        )
        try:
            cold, warm = start_times(tree / "src")
            return {
                "label": f"{revision}, measured",
                "cold_ms": cold,
                "warm_ms": warm,
                "small": bulk(tree / "src", texts),
                "large": "not run",
            }
        finally:
            subprocess.run(["git", "-C", str(REPO), "worktree", "remove", "--force", str(tree)], capture_output=True)


def spinning(texts: list[str], queries: int = 60) -> None:
    """Spinning onnxruntime threads against sleeping ones: throughput, one query, and numpy scoring right after it."""
    import numpy as np
    import onnxruntime as ort

    from semif_agent.engine import _onnx
    from semif_agent.engine.local import Embedder, model_file

    embedder = Embedder(model_file())
    threads = _onnx.default_threads()
    sessions = {
        spin: _onnx._session(ort, model_file(), threads, optimise=True, spinning=spin) for spin in (True, False)
    }
    matrix = np.random.default_rng(0).standard_normal((20_000, 384)).astype(np.float32)
    print(f"{threads} intra-op threads, {len(texts)} descriptions; scoring = 20000x384 matrix @ query + top 10")
    for run in range(2):
        for spin, session in sessions.items():
            embedder._session, embedder._cache = session, type(embedder._cache)()
            start = time.perf_counter()
            embedder.embed(texts)
            rate = len(texts) / (time.perf_counter() - start)
            query_ms, score_ms = [], []
            for i in range(queries):
                start = time.perf_counter()
                vector = embedder.embed([state(i, f"spin{spin}{run}")])[0]
                middle = time.perf_counter()
                np.argpartition(matrix @ vector, -10)[-10:]
                query_ms.append((middle - start) * 1000)
                score_ms.append((time.perf_counter() - middle) * 1000)
            print(
                f"  spinning {'on ' if spin else 'off'}: {rate:6.1f} texts/s, one query {statistics.median(query_ms):6.2f} ms,"
                f" scoring after it {statistics.median(score_ms):6.2f} ms"
            )


def embedder_part(count: int, revision: str | None, before_count: int) -> None:
    print(f"\nlocal embedder (load average {os.getloadavg()[0]:.1f} on {os.cpu_count()} cores)")
    source = Path(semif_agent.__file__).resolve().parents[1]
    small, large = skill_descriptions(before_count), skill_descriptions(count)
    before = measure_revision(revision, small) if revision else RECORDED
    cold, warm = start_times(source)
    now = {"label": "now", "cold_ms": cold, "warm_ms": warm, "small": bulk(source, small), "large": bulk(source, large)}
    rows = [
        ("start, empty cache folder (ms)", lambda r: f"{r['cold_ms']:.0f}"),
        ("start, cache folder filled (ms)", lambda r: f"{r['warm_ms']:.0f}"),
        (f"embed {before_count} descriptions (texts/s)", lambda r: figure(r["small"], "texts_per_s")),
        (f"embed {before_count} descriptions, peak RSS (MB)", lambda r: figure(r["small"], "peak_mb")),
        (f"embed {count} descriptions (texts/s)", lambda r: figure(r["large"], "texts_per_s")),
        (f"embed {count} descriptions, peak RSS (MB)", lambda r: figure(r["large"], "peak_mb")),
    ]
    print(f"{'':<44}{before['label']:>22}{'now':>10}")
    for name, show in rows:
        print(f"{name:<44}{show(before):>22}{show(now):>10}")
    spinning(small)


def figure(result: dict | str, key: str) -> str:
    if isinstance(result, str):
        return result
    return result.get("error") or f"{result[key]:.0f}"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--decisions", type=int, default=200)
    parser.add_argument("--part", choices=("all", "decisions", "embedder"), default="all")
    parser.add_argument("--texts", type=int, default=10_000, help="skill descriptions to embed (default 10000)")
    parser.add_argument("--before", metavar="REV", help="also measure the code of this git revision")
    parser.add_argument(
        "--before-texts", type=int, default=500, help="texts for REV (it embeds them in one batch: 500 need about 3 GB)"
    )
    args = parser.parse_args()
    if args.part in ("all", "decisions"):
        decisions(args)
    if args.part in ("all", "embedder") and local_available():
        embedder_part(args.texts, args.before, args.before_texts)


def decisions(args: argparse.Namespace) -> None:
    engines = [("lexical", create_engine("lexical")), ("scripted", ScriptedEngine(default="first"))]
    if local_available():
        engines.insert(0, ("local", create_engine("local")))
    print(f"{'engine':<10}{'options':>8}{'cache':>7}{'median ms':>12}{'p90 ms':>10}")
    for name, engine in engines:
        for n in (5, 16):
            for cold in (False, True) if name == "local" else (False,):
                times = sorted(measure(engine, n, args.decisions, cold=cold))
                p90 = times[int(0.9 * (len(times) - 1))]
                print(f"{name:<10}{n:>8}{'cold' if cold else 'warm':>7}{statistics.median(times):>12.3f}{p90:>10.3f}")
    if local_available():
        routing_among(150, args.decisions)


if __name__ == "__main__":
    main()
