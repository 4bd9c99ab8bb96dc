"""Our router against semantic-router on the same data and the same encoder, and what routing costs in prompt tokens.

    python bench/routing.py [--dataset FILE --tree FILE] [--catalog 1000] [--scale 1000,3000] [--parts 1,2,3]
                            [--rounds 5] [--blas-threads default,1]

Part 1, accuracy and latency. Both routers see the same skills (description
plus example requests as utterances) and the same all-MiniLM-L6-v2 int8
vectors: semantic-router (pinned at 1.1.1, in its own virtual environment
under ``.bench/``, checked on every run) runs in a child process of the bench
with an encoder that looks our vectors up, so only the routing logic differs.
Each router's threshold is tuned on the same validation half with the same
grid; accuracy is measured on the other half. Latency is per request, with
every utterance already embedded (encoding the request is the same model call
for both and is excluded).

Timings (parts 1 and 3) are fair by ``bench/_fair.py``: the sides take turns
round by round (ours, theirs, ours, ...) on the same requests after a warm-up
round, and each is reported as the median per request with its quartiles and
range, with the load average at the start and end. Each side is timed through
its async API (ours ``await strategy.aroute(text)``, theirs ``await
router.acall(text)``: semantic-router's fastest, with no hop to its background
loop) and its sync one (ours ``run_sync(strategy.aroute(text))``, theirs
``router(text)``). Its index is ``LocalIndex`` (numpy in memory: its fastest;
the others are remote databases). Both parts run twice, each in a child of the
bench: with BLAS threads as numpy sets them, and with BLAS held to one thread
on both sides (``--blas-threads``), since on a busy machine either can be the
faster.

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
(paraphrases of sampled skills' descriptions).
The onnxruntime session is built with thread spinning off, so idle model
threads do not take the cores the scoring needs.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import json
import os
import random
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator
from pathlib import Path

from _fair import Load, PeerProcess, Spread, interleave, peer_venv, table, versus

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
PEER_PINS = {"semantic-router": "1.1.1"}
PEER_NAME = "semantic-router 1.1.1"
BLAS_THREADS = ("OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS", "MKL_NUM_THREADS")
PEER = """
import asyncio, json, time
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
loop = asyncio.new_event_loop()

def name(choice):
    return choice.name

def accuracy(items, threshold):
    return sum(name(router(text, threshold=threshold)) == want for text, want in items) / len(items)

def handle(ask):
    if ask["op"] == "tune":
        best = max(data["grid"], key=lambda t: (accuracy(data["validation"], t), -abs(t - 0.3)))
        return {"threshold": best, "accuracy": accuracy(data["test"], best)}
    times = []
    for text in ask["texts"]:
        start = time.perf_counter()
        if ask["api"] == "async":
            loop.run_until_complete(router.acall(text, threshold=ask["threshold"]))
        else:
            router(text, threshold=ask["threshold"])
        times.append((time.perf_counter() - start) * 1000)
    return times

serve(handle)
"""
"""The peer as a child process serving requests (see ``_fair.PeerProcess``): ``tune`` picks its threshold
on the validation half and measures the test half; ``time`` routes texts with its sync API (``router(text)``,
which hops to its own background loop and a thread per call) or its async one (``await router.acall(text)``
on a loop of the child's, no thread hop: its fastest), and returns the time of each in ms."""


def peer_python() -> Path:
    return peer_venv("venv-semantic-router", PEER_PINS)


@contextlib.contextmanager
def peer_process(payload: dict) -> Iterator[PeerProcess]:
    """The peer's process over ``payload`` (routes and vectors), a child of this one, ended on leaving."""
    with tempfile.TemporaryDirectory(prefix="semif-bench-routing-") as tmp:
        data = Path(tmp) / "data.json"
        data.write_text(json.dumps(payload))
        with PeerProcess(peer_python(), "import sys\n" + PEER, str(data)) as peer:
            yield peer


def time_ours(strategy, texts: list[str], api: str) -> list[float]:
    """The time of each of ``texts`` routed by ``strategy``, in ms: through the sync wrapper or awaited on a loop."""
    loop = asyncio.new_event_loop()
    times = []
    try:
        for text in texts:
            start = time.perf_counter()
            if api == "async":
                loop.run_until_complete(strategy.aroute(text))
            else:
                run_sync(strategy.aroute(text))
            times.append((time.perf_counter() - start) * 1000)
    finally:
        loop.close()
    return times


def ours(tree: SkillTree, validation: list, test: list) -> tuple[object, dict]:
    """Our ``examples`` strategy with its threshold tuned on ``validation``, and its accuracy on ``test``."""
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
    engine.embedder.embed([e.text for e in test])  # the request's own embedding is excluded, as for the peer
    return strategy, {"threshold": best, "accuracy": accuracy(strategy, test)}


def peer_payload(tree: SkillTree, texts: list[str], embed, **extra) -> dict:
    """What the peer's process reads: the same routes (description and examples) and the same vectors as ours."""
    routes = {s.name: [s.description, *s.examples] for s in tree.skills.values()}
    everything = sorted({u for us in routes.values() for u in us} | set(texts))
    vectors = embed(everything)
    return {"vectors": {t: [float(x) for x in v] for t, v in zip(everything, vectors)}, "routes": routes, **extra}


def timed_sides(
    strategies: dict[str, object], peer: PeerProcess, texts: list[str], threshold: float, rounds: int
) -> dict[str, Spread]:
    """Per-request times of our strategies and of the peer, each through its async and its sync API, interleaved."""
    sides = {}
    for api in ("async", "sync"):
        for name, strategy in strategies.items():
            sides[f"{name} ({api})"] = lambda strategy=strategy, api=api: time_ours(strategy, texts, api)
        sides[f"{PEER_NAME} ({api})"] = lambda api=api: peer.ask(
            {"op": "time", "texts": texts, "threshold": threshold, "api": api}
        )
    return interleave(sides, rounds)


def print_sides(spreads: dict[str, Spread], names: list[str]) -> None:
    """Each API's figures against the peer's on the same API, then each side at its fastest API."""
    for api in ("async", "sync"):
        rows = {f"{name} ({api})": spreads[f"{name} ({api})"] for name in [*names, PEER_NAME]}
        print(table(rows, reference=f"{PEER_NAME} ({api})", digits=3))
    fastest = {
        name: min((spreads[f"{name} ({a})"] for a in ("async", "sync")), key=lambda s: s.median)
        for name in [*names, PEER_NAME]
    }
    print(
        "  each at its fastest API: "
        + "; ".join(f"{name} {versus(fastest[name], fastest[PEER_NAME], PEER_NAME)}" for name in names)
    )


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


def paraphrases(skills: list, count: int, seed: int = 11) -> list[str]:
    """Requests for ``count`` sampled skills: the first sentence of each description, asked for."""
    rng = random.Random(seed)
    asks = ("please", "can you", "I need to", "help me", "I want to")
    out = []
    for i, skill in enumerate(rng.sample(skills, min(count, len(skills)))):
        sentence = skill.description.split(". ")[0].rstrip(".")
        out.append(f"{asks[i % len(asks)]} {sentence[:1].lower()}{sentence[1:]}")
    return out


def scale(size: int, count: int, embedder, rounds: int) -> None:
    from semif_agent.engine.local import LocalEngine

    skills = catalog(size)
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "tree.json"
        path.write_text(json.dumps(build_tree(skills, embed=embedder.embed)))
        tree = SkillTree.load(path, Path(tmp))
    requests = paraphrases(list(tree.skills.values()), count)
    engine = LocalEngine(embedder)
    payload = peer_payload(tree, requests, embedder.embed)  # every text the timed calls need is embedded first
    strategies = {f"semif ({name})": create_strategy(name, tree, engine) for name in ("best_leaf", "examples")}
    print(
        f"\nrouting one request among {len(tree.skills)} skills ({len(tree.categories)} categories), "
        f"{len(requests)} requests x {rounds} rounds, encoding excluded; per request:"
    )
    with peer_process(payload) as peer:
        spreads = timed_sides(strategies, peer, requests, 0.3, rounds)
    print_sides(spreads, list(strategies))


def threads_label() -> str:
    held = os.environ.get("OPENBLAS_NUM_THREADS")
    return f"BLAS held to {held} thread(s) on both sides" if held else "BLAS threads as numpy sets them (default)"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--dataset", type=Path, default=ROOT / "tests" / "routing" / "starter_requests.jsonl")
    parser.add_argument("--tree", type=Path, help="tree file (default: the starter workspace's)")
    parser.add_argument("--catalog", type=int, default=1000)
    parser.add_argument("--requests", type=int, default=50)
    parser.add_argument("--scale", default="1000,3000", help="catalog sizes for part 3 (comma-separated; '' skips it)")
    parser.add_argument("--scale-requests", type=int, default=200)
    parser.add_argument("--rounds", type=int, default=5, help="timed rounds per side (interleaved), after a warm-up")
    parser.add_argument("--parts", default="1,2,3", help="which parts to run (comma-separated)")
    parser.add_argument(
        "--blas-threads",
        default="default,1",
        help="BLAS thread settings to time parts 1 and 3 under, both sides alike ('default', a number, or both)",
    )
    args = parser.parse_args()
    parts = set(args.parts.split(","))
    settings = args.blas_threads.split(",")
    held = os.environ.get("OPENBLAS_NUM_THREADS", "default")
    if parts & {"1", "3"} and settings != [held]:  # one child per setting: BLAS reads its thread count at start
        if "2" in parts:
            tokens(args.catalog, args.requests)
        timed = ",".join(sorted(parts & {"1", "3"}))
        for setting in settings:
            env = {k: v for k, v in os.environ.items() if k not in BLAS_THREADS}
            env.update({k: setting for k in BLAS_THREADS} if setting != "default" else {})
            argv = [*sys.argv[1:], "--parts", timed, "--blas-threads", setting]
            subprocess.run([sys.executable, __file__, *argv], env=env, check=True)
        return
    load = Load()
    if "1" in parts:
        accuracy_and_latency(args.dataset, args.tree, args.rounds)
    if "2" in parts:
        tokens(args.catalog, args.requests)
    if "3" in parts and args.scale:
        embedder = spinless_embedder()
        for size in (int(s) for s in args.scale.split(",")):
            scale(size, args.scale_requests, embedder, args.rounds)
    if parts & {"1", "3"}:
        print(f"({threads_label()}; {load.text()})")


def accuracy_and_latency(dataset_path: Path, tree_path: Path | None, rounds: int) -> None:
    dataset = load_dataset(dataset_path)
    with tempfile.TemporaryDirectory() as tmp:
        if tree_path:
            tree = SkillTree.load(tree_path, tree_path.parent)
        else:
            ws = Workspace.load(create_workspace(Path(tmp) / "ws"))
            tree = SkillTree.load(ws.categories_path, ws.bodies_dir)
        validation, test = split(dataset)
        print(f"\n[{threads_label()}]")
        print(f"{dataset_path.name}: {len(tree.skills)} skills; tuned on {len(validation)}, measured on {len(test)}")
        strategy, mine = ours(tree, validation, test)
        texts = [e.text for e in validation + test]
        payload = peer_payload(
            tree,
            texts,
            shared_embedder().embed,
            grid=list(DEFAULT_GRID),
            validation=[[e.text, e.skill] for e in validation],
            test=[[e.text, e.skill] for e in test],
        )
        with peer_process(payload) as peer:
            theirs = peer.ask({"op": "tune"})
            assert isinstance(theirs, dict)
            print(f"{'router':<26}{'threshold':>10}{'accuracy':>10}")
            for name, r in (("semif (examples)", mine), (PEER_NAME, theirs)):
                print(f"{name:<26}{r['threshold']:>10.3f}{r['accuracy']:>10.1%}")
            print(f"accuracy {mine['accuracy'] - theirs['accuracy']:+.1%} points; per request, encoding excluded:")
            spreads = timed_sides(
                {"semif (examples)": strategy}, peer, [e.text for e in test], theirs["threshold"], rounds
            )
    print_sides(spreads, ["semif (examples)"])


if __name__ == "__main__":
    main()
