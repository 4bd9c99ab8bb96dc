"""Cold start of a large workspace: its first build, then the first find of a new process on the stored tree.

    python bench/cold_start.py [--sizes 1600 10000] [--rounds 3] [--corpus DIR ...] [--no-mcp]

For each size, a workspace of that many SKILL.md skills (the real skills of
the corpora, topped up by variants: ``tree_scale.catalog``, written by
``skill_retrieval.router_workspace``) with an embedding cache of its own
(``SEMIF_CACHE_DIR``), empty at first:

- first build: ``semif tree refresh -w DIR`` on the empty cache (every skill
  embedded, the tree built and stored): wall time and the child's peak RSS;
- first find: ``--rounds`` new processes, each importing ``semif_agent``,
  making a ``Router`` and answering one ``find``, then a second one: the
  median wall time of the process (and its CPU time, what an idle machine
  would take), of the import, of the first find and of the next, with the
  peak RSS;
- MCP: ``semif mcp -w DIR`` started by the MCP SDK's stdio client, from its
  launch to the answer of its first ``find_skills`` (the server warms in a
  thread as it starts; the call waits for it).

The model file must be installed (``semif-agent[local]``); the ONNX graph it
optimises is cached once in the cache folder and copied to each size's.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import statistics
import sys
import tempfile
import time
from pathlib import Path

BENCH = Path(__file__).resolve().parent
sys.path.insert(0, str(BENCH))

from tree_scale import REQUESTS, catalog, default_corpora, measure, real_skills  # noqa: E402 (a sibling script, found once its folder is on the path)

KILL_ABOVE_GB = 6.0
TIMEOUT = 3600.0


def first_find_child(workspace: str) -> None:
    """In a new process: import, make a Router, answer a first and a second find; print the timings as JSON."""
    began = time.perf_counter()
    from semif_agent import Router

    imported = time.perf_counter()
    router = Router(workspace)
    shortlist = router.find(REQUESTS[1])
    found = time.perf_counter()
    router.find(REQUESTS[2])
    again = time.perf_counter()
    print(
        json.dumps(
            {
                "import_s": imported - began,
                "first_find_s": found - imported,
                "next_find_ms": (again - found) * 1000,
                "skills": len(router.skills),
                "best": [candidate.name for candidate in shortlist.skills],
            }
        )
    )


def mcp_first_find(workspace: Path, env: dict[str, str]) -> float:
    """Seconds from launching ``semif mcp`` over stdio to its first ``find_skills`` answer."""
    import anyio

    ClientSession, StdioServerParameters, stdio_client = _mcp_sdk()

    async def ask() -> float:
        began = time.perf_counter()
        params = StdioServerParameters(
            command=sys.executable, args=["-m", "semif_agent", "mcp", "-w", str(workspace)], env=env
        )
        with open(os.devnull, "w") as quiet:
            async with (
                stdio_client(params, errlog=quiet) as (read, write),
                ClientSession(read, write) as session,
            ):
                await session.initialize()
                result = await session.call_tool("find_skills", {"request": REQUESTS[1]})
                if result.is_error:
                    raise RuntimeError(f"find_skills failed: {result.content}")
                return time.perf_counter() - began

    return anyio.run(ask)


def _mcp_sdk() -> tuple:
    """The MCP SDK's client (imported with this folder off the path: its ``mcp.py`` is a bench, not the SDK)."""
    saved = sys.path[:]
    sys.path[:] = [entry for entry in sys.path if Path(entry or ".").resolve() != BENCH]
    try:
        from mcp import ClientSession
        from mcp.client.stdio import StdioServerParameters, stdio_client
    finally:
        sys.path[:] = saved
    return ClientSession, StdioServerParameters, stdio_client


def environment(cache: Path) -> dict[str, str]:
    src = str(BENCH.parent / "src")
    env = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "SEMIF_CACHE_DIR", "PYTHONDONTWRITEBYTECODE")}
    return {**env, "PYTHONPATH": src, "SEMIF_CACHE_DIR": str(cache)}


def model_cache() -> list[Path]:
    """What the user's cache folder keeps once per machine: the model's check and the ONNX graph optimised here."""
    sys.path.insert(0, str(BENCH.parent / "src"))
    from semif_agent.engine import _onnx

    folder = _onnx.cache_folder()
    if folder is None:
        return []
    return [path for path in (folder / "onnx", folder / "verified-models.json") if path.exists()]


def run_size(size: int, real: list[tuple[str, str]], work: Path, args: argparse.Namespace) -> dict:
    from skill_retrieval import router_workspace

    workspace = router_workspace(catalog(real, size), work / f"ws-{size}")
    cache = work / f"cache-{size}"
    cache.mkdir()
    for kept in model_cache():  # done once per machine, not what a workspace's first build costs
        (shutil.copytree if kept.is_dir() else shutil.copy2)(kept, cache / kept.name)
    env = environment(cache)
    limit = KILL_ABOVE_GB * 1024**3
    build = measure([sys.executable, "-m", "semif_agent", "tree", "refresh", "-w", str(workspace)], env, limit, TIMEOUT)
    result: dict = {"size": size, "build": build, "finds": []}
    if "failed" in build:
        return result
    for _ in range(args.rounds):
        run = measure([sys.executable, __file__, "--first-find", str(workspace)], env, limit, TIMEOUT)
        if "failed" not in run:
            run.update(json.loads(run["stdout"].strip().splitlines()[-1]))
        result["finds"].append(run)
    if not args.no_mcp:
        result["mcp_s"] = [mcp_first_find(workspace, env) for _ in range(args.rounds)]
    return result


def median(runs: list[dict], key: str) -> float | None:
    values = [run[key] for run in runs if key in run]
    return statistics.median(values) if values else None


def report(result: dict) -> None:
    size, build, finds = result["size"], result["build"], result["finds"]
    print(f"\n{size:,} skills")
    if "failed" in build:
        print(f"  first build: {build['failed']}")
        return
    print(
        f"  first build (empty cache): {build['seconds']:.1f} s ({build['cpu_s']:.0f} CPU-seconds), "
        f"peak RSS {build['rss_mb']:.0f} MB"
    )
    failed = [run["failed"] for run in finds if "failed" in run]
    if failed:
        print(f"  first find: {failed[0]}")
        return
    print(
        f"  new process, first find: {median(finds, 'seconds'):.2f} s in all ({median(finds, 'cpu_s'):.2f} CPU-seconds; "
        f"import {median(finds, 'import_s'):.2f} s, "
        f"first find {median(finds, 'first_find_s'):.2f} s, next {median(finds, 'next_find_ms'):.0f} ms), "
        f"peak RSS {median(finds, 'rss_mb'):.0f} MB; medians of {len(finds)}"
    )
    print(f"  shortlist: {', '.join(finds[0]['best'])}")
    if result.get("mcp_s"):
        print(f"  semif mcp, launch to first find_skills answer: {statistics.median(result['mcp_s']):.2f} s")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--sizes", type=int, nargs="+", default=[1600, 10000])
    parser.add_argument("--rounds", type=int, default=3, help="new processes timed per size")
    parser.add_argument("--corpus", type=Path, action="append", help="folders of real skills (default: the bench's)")
    parser.add_argument("--no-mcp", action="store_true", help="skip timing semif mcp")
    parser.add_argument("--first-find", metavar="WORKSPACE", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.first_find:
        first_find_child(args.first_find)
        return
    real = real_skills(args.corpus or default_corpora())
    print(f"load average at start: {os.getloadavg()[0]:.1f}; {len(real)} real skills, the rest variants")
    with tempfile.TemporaryDirectory(prefix="semif-cold-") as tmp:
        for size in args.sizes:
            report(run_size(size, real, Path(tmp), args))
    print(f"\nload average at end: {os.getloadavg()[0]:.1f}")


if __name__ == "__main__":
    main()
