"""Our router against semantic-router on the same data and the same encoder, and what routing costs in prompt tokens.

    python bench/routing.py [--dataset FILE --tree FILE] [--catalog 1000] [--scale 1000,3000] [--parts 1,2,3]

Part 1, accuracy and latency. Both routers see the same skills (description
plus example requests as utterances) and the same all-MiniLM-L6-v2 int8
vectors: semantic-router 1.1.1 runs in its own virtual environment under
``.bench/`` with an encoder that looks our vectors up, so only the routing
logic differs. Each router's threshold is tuned on the same validation half
with the same grid; accuracy is measured on the other half. Latency is per
request, with every utterance already embedded (encoding the request is the
same model call for both and is excluded).

Part 2, prompt tokens to route one request among ``--catalog`` skills: the
flat catalog listing popular clients put in the prompt (every skill's name and
description in an ``<available_skills>`` block, as skills-ref renders it)
against the decisions our tree asks a model (the chain over a built tree, and
a 16-skill shortlist), rendered exactly as the LLM engine renders them.
Tokens are counted with the MiniLM WordPiece
tokenizer shipped with the package (a stand-in for a model's own tokenizer:
ratios carry over, absolute counts differ by a few percent).

Part 3, routing one request among many skills (``--scale 1000,3000``): the
``catalog`` skills grouped by ``semif tree build``, routed by our ``best_leaf``
and ``examples`` strategies and by semantic-router on the same vectors (each
skill a route whose utterance is its description), with the same requests
(paraphrases of sampled skills' descriptions). Encoding is excluded for both:
every text is embedded before the clock starts. Our figure is the whole sync
call, ``run_sync(strategy.aroute(text))``; theirs is ``router(text)``, as it
comes and with its BLAS library held to one thread (numpy spreads their
matrix product over threads, which costs more than it saves whenever another
process holds a core).
The onnxruntime session is built with thread spinning off, so idle model
threads do not take the cores the scoring needs.
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

from semif_agent._sync import run_sync
from semif_agent.engine import DecisionRequest, create_engine
from semif_agent.engine.local import TOKENIZER_PATH, shared_embedder
from semif_agent.routing import create_strategy
from semif_agent.routing.evaluate import load_dataset, split
from semif_agent.routing.tune import DEFAULT_GRID
from semif_agent.starter import create_workspace
from semif_agent.tree import SkillTree
from semif_agent.tree.build import LeafSpec, build_tree
from semif_agent.workspace import Workspace

ROOT = Path(__file__).resolve().parents[1]
PEER_VENV = ROOT / ".bench" / "venv-semantic-router"
PEER = """
import json, statistics, sys, time
from semantic_router import Route
from semantic_router.encoders.base import DenseEncoder
from semantic_router.routers import IndexedRouter

data = json.load(open(sys.argv[1]))
vectors = data["vectors"]

class Lookup(DenseEncoder):
    name: str = "all-MiniLM-L6-v2-int8"
    def __call__(self, docs):
        return [vectors[d] for d in docs]
    async def acall(self, docs):
        return self(docs)

routes = [Route(name=n, utterances=u) for n, u in data["routes"].items()]
router = IndexedRouter(encoder=Lookup(), routes=routes)

def accuracy(items, threshold):
    right = 0
    for text, want in items:
        got = router(text, threshold=threshold).name
        right += got == want
    return right / len(items)

best = max(data["grid"], key=lambda t: (accuracy(data["validation"], t), -abs(t - 0.3)))
times = []
right = 0
for text, want in data["test"]:
    start = time.perf_counter()
    got = router(text, threshold=best).name
    times.append((time.perf_counter() - start) * 1000)
    right += got == want
times.sort()
print(json.dumps({"threshold": best, "accuracy": right / len(data["test"]),
                  "p50": statistics.median(times), "p90": times[int(0.9 * (len(times) - 1))]}))
"""


PEER_SCALE = """
import json, statistics, sys, time
from semantic_router import Route
from semantic_router.encoders.base import DenseEncoder
from semantic_router.routers import IndexedRouter

data = json.load(open(sys.argv[1]))
vectors = data["vectors"]

class Lookup(DenseEncoder):
    name: str = "all-MiniLM-L6-v2-int8"
    def __call__(self, docs):
        return [vectors[d] for d in docs]
    async def acall(self, docs):
        return self(docs)

router = IndexedRouter(encoder=Lookup(), routes=[Route(name=n, utterances=u) for n, u in data["routes"].items()])
for text in data["requests"][:20]:  # warm up
    router(text, threshold=data["threshold"])
times = []
for text in data["requests"]:
    start = time.perf_counter()
    router(text, threshold=data["threshold"])
    times.append((time.perf_counter() - start) * 1000)
print(json.dumps(times))
"""


def peer_python() -> Path:
    python = PEER_VENV / "bin" / "python"
    if not python.exists():
        print("installing semantic-router 1.1.1 into", PEER_VENV, file=sys.stderr)
        subprocess.run([sys.executable, "-m", "venv", str(PEER_VENV)], check=True)
        subprocess.run([str(python), "-m", "pip", "install", "-q", "semantic-router==1.1.1"], check=True)
    return python


def ours(tree: SkillTree, validation: list, test: list) -> dict:
    engine = create_engine("local")

    def accuracy(strategy, items) -> float:
        return sum(
            (r.skill.name if (r := run_sync(strategy.aroute(e.text))).skill else None) == e.skill for e in items
        ) / len(items)

    best = max(
        DEFAULT_GRID,
        key=lambda t: (accuracy(create_strategy("examples", tree, engine, threshold=t), validation), -abs(t - 0.3)),
    )
    strategy = create_strategy("examples", tree, engine, threshold=best)
    for e in test:  # the request's own embedding is excluded from the timing, as for the peer
        engine.embedder.embed([e.text])
    times, right = [], 0
    for e in test:
        start = time.perf_counter()
        route = run_sync(strategy.aroute(e.text))
        times.append((time.perf_counter() - start) * 1000)
        right += (route.skill.name if route.skill else None) == e.skill
    times.sort()
    return {
        "threshold": best,
        "accuracy": right / len(test),
        "p50": statistics.median(times),
        "p90": times[int(0.9 * (len(times) - 1))],
    }


def peer(tree: SkillTree, validation: list, test: list) -> dict:
    routes = {s.name: [s.description, *s.examples] for s in tree.skills.values()}
    texts = sorted({u for us in routes.values() for u in us} | {e.text for e in validation + test})
    vectors = shared_embedder().embed(texts)
    payload = {
        "vectors": {t: [float(x) for x in v] for t, v in zip(texts, vectors)},
        "routes": routes,
        "grid": list(DEFAULT_GRID),
        "validation": [[e.text, e.skill] for e in validation],
        "test": [[e.text, e.skill] for e in test],
    }
    with tempfile.TemporaryDirectory() as tmp:
        data = Path(tmp) / "data.json"
        data.write_text(json.dumps(payload))
        script = Path(tmp) / "peer.py"
        script.write_text(PEER)
        out = subprocess.run([str(peer_python()), str(script), str(data)], capture_output=True, text=True, check=True)
    return json.loads(out.stdout.strip().splitlines()[-1])


def token_counter():
    from tokenizers import Tokenizer

    tokenizer = Tokenizer.from_file(str(TOKENIZER_PATH))
    tokenizer.no_truncation()
    return lambda text: len(tokenizer.encode(text, add_special_tokens=False).ids)


def render(request: DecisionRequest) -> str:
    try:
        from semif_agent.llm._choice import render_decision
    except ImportError:  # the llm layer is not installed: the same layout
        lines = [f"{chr(65 + i)}. {o.id}: {o.description}" for i, o in enumerate(request.options)]
        return f"State:\n{request.state}\n\nQuestion: {request.question}\n\nOptions:\n" + "\n".join(lines)
    return render_decision(request)


def flat_listing(text: str, skills: list[LeafSpec]) -> str:
    """The request and the whole catalog, as clients list skills for the model to pick from."""
    entries = "\n".join(
        f"<skill>\n<name>\n{s.name}\n</name>\n<description>\n{s.description}\n</description>\n</skill>" for s in skills
    )
    return f"{text}\n\n<available_skills>\n{entries}\n</available_skills>"


def catalog(size: int) -> list[LeafSpec]:
    """The BFCL functions when their dataset was built (bench/bfcl_datasets.py), topped up with generated skills."""
    skills: list[LeafSpec] = []
    bfcl = ROOT / ".bench" / "bfcl" / "skills.jsonl"
    if bfcl.exists():
        skills = [LeafSpec(**json.loads(line)) for line in bfcl.read_text().splitlines()][:size]
    rng = random.Random(3)
    verbs = "add find list send delete move schedule cancel archive rename share export track convert".split()
    nouns = "note email file event invoice contact photo report meeting reminder playlist budget recipe ticket".split()
    while len(skills) < size:
        i = len(skills)
        verb, noun = rng.choice(verbs), rng.choice(nouns)
        skills.append(LeafSpec(f"gen_{verb}_{noun}_{i}", f"{verb.capitalize()} a {noun} in service {i % 37}."))
    return skills


def tokens(size: int, requests: int) -> None:
    count = token_counter()
    skills = catalog(size)
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "tree.json"
        path.write_text(json.dumps(build_tree(skills)))
        tree = SkillTree.load(path, Path(tmp))
    engine = create_engine("local", {"threshold": -1.0})  # always descend: count a full route
    chain = create_strategy("chain", tree, engine)
    shortlist = create_strategy("shortlist", tree, engine)
    rng = random.Random(5)
    flat, chained, listed = [], [], []
    for skill in rng.sample(skills, requests):
        text = f"please {skill.description.lower()}"
        flat.append(count(flat_listing(text, skills)))
        chained.append(sum(count(render(d.request)) for d in run_sync(chain.aroute(text)).decisions))
        listed.append(sum(count(render(d.request)) for d in run_sync(shortlist.aroute(text)).decisions))
    print(f"\nprompt tokens to route one request among {size} skills (mean of {requests} requests)")
    for name, values in (("flat listing", flat), ("tree chain", chained), ("shortlist 15", listed)):
        mean = statistics.mean(values)
        print(f"  {name:<14}{mean:>10.0f} tokens   {statistics.mean(flat) / mean:>6.1f}x fewer than flat")


def spinless_embedder():
    """The shared embedder's model on a session whose idle threads sleep instead of spinning."""
    import onnxruntime as ort

    from semif_agent.engine.local import Embedder, model_file

    shared = shared_embedder()
    embedder = Embedder(model_file(), store=shared.store)
    options = ort.SessionOptions()
    options.log_severity_level = 3
    options.add_session_config_entry("session.intra_op.allow_spinning", "0")
    embedder._session = ort.InferenceSession(str(model_file()), options, providers=["CPUExecutionProvider"])
    return embedder


def percentiles(times: list[float]) -> tuple[float, float]:
    times = sorted(times)
    return statistics.median(times), times[int(0.9 * (len(times) - 1))]


def paraphrases(skills: list, count: int, seed: int = 11) -> list[str]:
    """Requests for ``count`` sampled skills: the first sentence of each description, asked for."""
    rng = random.Random(seed)
    asks = ("please", "can you", "I need to", "help me", "I want to")
    out = []
    for i, skill in enumerate(rng.sample(skills, min(count, len(skills)))):
        sentence = skill.description.split(". ")[0].rstrip(".")
        out.append(f"{asks[i % len(asks)]} {sentence[:1].lower()}{sentence[1:]}")
    return out


def scale(size: int, count: int, embedder) -> None:
    from semif_agent.engine.local import LocalEngine

    skills = catalog(size)
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "tree.json"
        path.write_text(json.dumps(build_tree(skills, embed=embedder.embed)))
        tree = SkillTree.load(path, Path(tmp))
    requests = paraphrases(list(tree.skills.values()), count)
    engine = LocalEngine(embedder)
    routes = {s.name: [s.description, *s.examples] for s in tree.skills.values()}
    texts = sorted({u for us in routes.values() for u in us} | set(requests))
    vectors = embedder.embed(texts)  # every text the timed calls need is embedded before the clock starts
    rows = []
    for name in ("best_leaf", "examples"):
        strategy = create_strategy(name, tree, engine)
        for text in requests[:20]:  # warm up: per-tree indexes, caches
            run_sync(strategy.aroute(text))
        times = []
        for text in requests:
            start = time.perf_counter()
            run_sync(strategy.aroute(text))
            times.append((time.perf_counter() - start) * 1000)
        rows.append((f"semif ({name})", percentiles(times)))
    payload = {
        "vectors": {t: [float(x) for x in v] for t, v in zip(texts, vectors)},
        "routes": routes,
        "requests": requests,
        "threshold": 0.3,
    }
    with tempfile.TemporaryDirectory() as tmp:
        data = Path(tmp) / "data.json"
        data.write_text(json.dumps(payload))
        script = Path(tmp) / "peer_scale.py"
        script.write_text(PEER_SCALE)
        for label, env in (("", {}), (" (1 BLAS thread)", {"OPENBLAS_NUM_THREADS": "1"})):
            out = subprocess.run(
                [str(peer_python()), str(script), str(data)],
                capture_output=True,
                text=True,
                check=True,
                env={**os.environ, **env},
            )
            rows.append((f"semantic-router 1.1.1{label}", percentiles(json.loads(out.stdout.strip().splitlines()[-1]))))
    theirs = rows[-2][1][0]
    print(
        f"\nrouting one request among {len(tree.skills)} skills ({len(tree.categories)} categories), "
        f"{len(requests)} requests, encoding excluded"
    )
    print(f"{'router':<40}{'p50 ms':>9}{'p90 ms':>9}{'semantic-router p50 / p50':>28}")
    for name, (p50, p90) in rows:
        print(f"{name:<40}{p50:>9.3f}{p90:>9.3f}{theirs / p50:>27.2f}x")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--dataset", type=Path, default=ROOT / "tests" / "routing" / "starter_requests.jsonl")
    parser.add_argument("--tree", type=Path, help="tree file (default: the starter workspace's)")
    parser.add_argument("--catalog", type=int, default=1000)
    parser.add_argument("--requests", type=int, default=50)
    parser.add_argument("--scale", default="1000,3000", help="catalog sizes for part 3 (comma-separated; '' skips it)")
    parser.add_argument("--scale-requests", type=int, default=200)
    parser.add_argument("--parts", default="1,2,3", help="which parts to run (comma-separated)")
    args = parser.parse_args()
    parts = set(args.parts.split(","))
    if "1" in parts:
        accuracy_and_latency(args.dataset, args.tree)
    if "2" in parts:
        tokens(args.catalog, args.requests)
    if "3" in parts and args.scale:
        embedder = spinless_embedder()
        for size in (int(s) for s in args.scale.split(",")):
            scale(size, args.scale_requests, embedder)


def accuracy_and_latency(dataset_path: Path, tree_path: Path | None) -> None:
    dataset = load_dataset(dataset_path)
    with tempfile.TemporaryDirectory() as tmp:
        if tree_path:
            tree = SkillTree.load(tree_path, tree_path.parent)
        else:
            ws = Workspace.load(create_workspace(Path(tmp) / "ws"))
            tree = SkillTree.load(ws.categories_path, ws.bodies_dir)
    validation, test = split(dataset)
    print(f"{dataset_path.name}: {len(tree.skills)} skills; tuned on {len(validation)}, measured on {len(test)}")
    print(f"{'router':<26}{'threshold':>10}{'accuracy':>10}{'p50 ms':>9}{'p90 ms':>9}")
    mine, theirs = ours(tree, validation, test), peer(tree, validation, test)
    for name, r in (("semif (examples)", mine), ("semantic-router 1.1.1", theirs)):
        print(f"{name:<26}{r['threshold']:>10.3f}{r['accuracy']:>10.1%}{r['p50']:>9.3f}{r['p90']:>9.3f}")
    print(
        f"accuracy {mine['accuracy'] - theirs['accuracy']:+.1%} points; median latency {theirs['p50'] / mine['p50']:.1f}x"
    )


if __name__ == "__main__":
    main()
