"""How long a new workspace of ~1,600 real SKILL.md skills takes to answer: the first find, later finds, `semif run`.

    python bench/real_skills_speed.py [--collections DIR] [--packages NAME ...] [--runs 3]

The skills are whole packages of the public collections that
``bench/skill_collections.py`` fetches (default: three that sum to about
1,600 skills), copied as their users install them, under
``skills/<package>/...`` of a workspace made by ``semif init``. Each step runs
in a fresh process with the workspace's embedding cache in a folder of its own
(cold at the start, as on a new machine):

1. first find: ``Router.find`` on the fresh workspace (the tree built and
   stored, the act threshold measured, one request ranked), with how long
   the tree, the act threshold and the find itself took, how many texts the
   model embedded, and how many skills were loaded;
2. find from the stored tree: the same in a new process (nothing to build);
3. first ``semif run``: ``semif run`` on a second fresh workspace of the same
   skills with its own cold cache (tree build and act threshold included);
4. later ``semif run``: the median of ``--runs`` runs of other requests, each
   a new process, on that workspace.

The machine's load average is printed beside the figures, and each step's CPU time (user
and system, its threads included) beside its wall time: on a shared machine
the wall time says more about the other processes than about this one.
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
COLLECTIONS = ROOT / ".bench" / "skill-collections"
PACKAGES = ["npm__ecc-universal-2.0.0", "pypi__skillforge-agent-1.0.1", "pypi__hermes-agent-0.19.0"]
FIRST_REQUEST = "make a spreadsheet of the quarterly sales by region"
REQUESTS = [
    "review my pull request for security problems",
    "write unit tests for the payment service",
    "summarise this meeting transcript into action items",
    "set up a Dockerfile for this Python app",
    "draft a blog post announcing our launch",
]

CPU: list[float] = []  # CPU seconds of each child, in order

FIND = """
import json, sys, time
start = time.perf_counter()
from semif_agent import Router
from semif_agent._sync import run_sync
router = Router(sys.argv[1])
runner = router.runner
tree_done = time.perf_counter()
run_sync(runner.aact_threshold())
threshold_done = time.perf_counter()
shortlist = router.find(sys.argv[2])
end = time.perf_counter()
embedder = getattr(runner.engine, "embedder", None)
print(json.dumps({
    "skills": len(runner.tree.skills),
    "skill_md": sum(1 for s in runner.tree.skills.values() if s.is_skill_md),
    "tree_s": tree_done - start,
    "act_threshold_s": threshold_done - tree_done,
    "find_s": end - threshold_done,
    "total_s": end - start,
    "embedded": getattr(embedder, "computed", None),
    "first": [c.name for c in shortlist.skills][:3],
    "best": shortlist.best,
}))
"""

RUN = """
import sys
from semif_agent.cli import main
sys.argv = ["semif", *sys.argv[1:]]
main(prog_name="semif")
"""


def cpu_seconds() -> float:
    """CPU seconds (user and system) the children waited for so far have used, their threads included."""
    used = resource.getrusage(resource.RUSAGE_CHILDREN)
    return used.ru_utime + used.ru_stime


def child(code: str, args: list[str], cache: Path) -> tuple[float, str, str]:
    """Run ``code`` in a fresh interpreter (its own embedding cache): wall seconds, stdout, stderr; the CPU
    seconds it used are added to :data:`CPU` under its first argument."""
    env = {**os.environ, "SEMIF_CACHE_DIR": str(cache)}
    env["PYTHONPATH"] = os.pathsep.join(filter(None, [str(ROOT / "src"), env.get("PYTHONPATH")]))
    start, cpu = time.perf_counter(), cpu_seconds()
    done = subprocess.run([sys.executable, "-c", code, *args], env=env, capture_output=True, text=True, check=False)
    wall = time.perf_counter() - start
    CPU.append(cpu_seconds() - cpu)
    if done.returncode != 0:
        sys.exit(f"child failed ({done.returncode}):\n{done.stderr[-3000:]}")
    return wall, done.stdout, done.stderr


def workspace(folder: Path, collections: Path, packages: list[str], cache: Path) -> Path:
    """A fresh `semif init` workspace with ``packages`` copied under skills/, laid out as installed."""
    child(RUN, ["init", str(folder)], cache)
    for package in packages:
        shutil.copytree(collections / package, folder / "skills" / package, symlinks=True)
    return folder


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--collections", type=Path, default=COLLECTIONS)
    parser.add_argument("--packages", nargs="+", default=PACKAGES)
    parser.add_argument("--runs", type=int, default=3, help="later `semif run`s, each a new process")
    args = parser.parse_args()
    missing = [p for p in args.packages if not (args.collections / p).is_dir()]
    if missing:
        sys.exit(f"not in {args.collections}: {', '.join(missing)} (python bench/skill_collections.py fetches them)")
    found = sum(1 for p in args.packages for _ in (args.collections / p).rglob("SKILL.md"))
    print(f"{found} SKILL.md files in {len(args.packages)} packages; load average {os.getloadavg()[0]:.1f}")
    with tempfile.TemporaryDirectory(prefix="real-skills-speed-") as tmp:
        base = Path(tmp)
        cache = base / "cache-find"
        ws = workspace(base / "ws-find", args.collections, args.packages, cache)
        wall, out, _ = child(FIND, [str(ws), FIRST_REQUEST], cache)
        first = json.loads(out)
        print(
            f"skills loaded: {first['skills']} ({first['skill_md']} SKILL.md)\n"
            f"first find, fresh workspace and cache: {wall:.1f} s wall, {CPU[-1]:.1f} s CPU (tree {first['tree_s']:.1f} s, "
            f"act threshold {first['act_threshold_s']:.1f} s, find {first['find_s']:.2f} s; "
            f"{first['embedded']} texts embedded) -> {', '.join(first['first'])}"
        )
        wall, out, _ = child(FIND, [str(ws), REQUESTS[0]], cache)
        again = json.loads(out)
        print(
            f"find from the stored tree, new process: {wall:.1f} s wall, {CPU[-1]:.1f} s CPU (tree {again['tree_s']:.2f} s, "
            f"act threshold {again['act_threshold_s']:.2f} s, find {again['find_s']:.2f} s; "
            f"{again['embedded']} texts embedded)"
        )
        cache = base / "cache-run"
        ws = workspace(base / "ws-run", args.collections, args.packages, cache)
        wall, _, err = child(RUN, ["run", FIRST_REQUEST, "-w", str(ws), "--json"], cache)
        print(f"first semif run, fresh workspace and cache: {wall:.1f} s wall, {CPU[-1]:.1f} s CPU")
        walls = [child(RUN, ["run", text, "-w", str(ws), "--json"], cache)[0] for text in REQUESTS[: args.runs]]
        cpus = CPU[-len(walls) :]
        print(
            f"later semif run, new process each: median {statistics.median(walls):.1f} s wall "
            f"(of {', '.join(f'{w:.1f}' for w in walls)}), {statistics.median(cpus):.1f} s CPU"
        )
    print(f"load average after: {os.getloadavg()[0]:.1f}")


if __name__ == "__main__":
    main()
