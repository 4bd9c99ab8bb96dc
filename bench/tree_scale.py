"""Time and peak memory of `semif tree build`, and of routing on the tree it builds, at 1,000 to 10,000 skills.

    python bench/tree_scale.py [--corpus DIR ...] [--sizes 1000 3000 10000] [--baseline REV | --no-baseline]

Skills: the real SKILL.md skills of every ``--corpus`` folder (default: the
skills of the test fixtures and the public collections of
``bench/skill_collections.py``, fetched into ``.bench/`` on first use),
each distinct (name, description) once,
topped up to each size by variants (a real skill's description rephrased or
joined with another's, under a distinct name), written as a folder of SKILL.md
skills. Each measurement runs in its own process with its own
``SEMIF_CACHE_DIR``; peak RSS is the child's own (``wait4``):

- build: ``semif tree build DIR -o tree.json`` on a cold embedding cache;
- first route: a fresh process loads the tree (``SkillTree.load``), builds the
  ``examples`` strategy (``create_strategy``) on the local engine and routes one
  request, with the cache the build left (a copy);
- warm route: the median latency of ``--requests`` routings of distinct texts
  in one process, after one routing to warm it up.

The same runs on the code of ``--baseline`` (default 5b2f9e7, the builder
before this change), checked out in a temporary worktree; a watchdog kills
any child whose RSS passes ``--kill-above`` GB (read from /proc/PID/status),
and the table says so instead of giving a figure. Ratios are baseline/new.
"""

from __future__ import annotations

import argparse
import json
import os
import random
import re
import shutil
import signal
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
FIXTURE_CORPUS = ROOT / "tests" / "fixtures" / "skills-corpus"
BASELINE = "5b2f9e7"
REQUESTS = [
    "the CI on my pull request is failing, find out why",
    "write a design doc for the new billing service",
    "summarise this meeting transcript into action items",
    "review my code changes before I merge",
    "set up a Dockerfile for this Python app",
    "find the root cause of this flaky test",
    "draft a LinkedIn post about our launch",
    "check this contract for risky clauses",
    "make a diagram of the system architecture",
    "plan the sprint from these tickets",
    "add end-to-end tests with Playwright",
    "migrate the database schema without downtime",
    "audit the website for accessibility problems",
    "create a new skill for invoice parsing",
    "deploy the service to Kubernetes",
    "analyse last month's sales data",
]
QUALIFIERS = [
    "for small teams",
    "in large monorepos",
    "for data pipelines",
    "on mobile apps",
    "for web services",
    "in regulated industries",
    "for open-source projects",
    "with a checklist",
    "step by step",
    "for beginners",
    "for enterprise setups",
    "in CI pipelines",
]


def default_corpora() -> list[Path]:
    """The fixtures' skills and the public collections (fetched on first use)."""
    sys.path.insert(0, str(Path(__file__).resolve().parent))
    from skill_collections import fetch

    return [FIXTURE_CORPUS, fetch()]


def real_skills(corpora: list[Path]) -> list[tuple[str, str]]:
    """(name, description) of every distinct skill in the corpora, loaded as the catalog loads them."""
    return [(name, description) for name, description, _ in real_skill_folders(corpora)]


def real_skill_folders(corpora: list[Path]) -> list[tuple[str, str, Path]]:
    """(name, description, folder) of every distinct skill in the corpora (the first folder of each)."""
    sys.path.insert(0, str(ROOT / "src"))
    from semif_agent.catalog.loader import find_skill_folders, load_skill

    seen: set[tuple[str, str]] = set()
    found = []
    for corpus in corpora:
        for _, folder in find_skill_folders(corpus, max_depth=10):
            descriptor = load_skill(folder, namespace="bench", source="custom", source_label="bench").descriptor
            if descriptor is None:
                continue
            key = (descriptor.name.strip().lower(), " ".join(descriptor.description.split()).lower())
            if key not in seen:
                seen.add(key)
                found.append((descriptor.name, " ".join(descriptor.description.split()), folder))
    return found


def catalog(real: list[tuple[str, str]], size: int) -> list[tuple[str, str]]:
    """``size`` skills with distinct names: the real ones, then variants of them."""
    rng = random.Random(size)
    skills: list[tuple[str, str]] = []
    used: set[str] = set()

    def add(name: str, description: str) -> None:
        base = re.sub(r"[^a-z0-9]+", "-", name.lower()).strip("-")[:60] or "skill"
        candidate, n = base, 2
        while candidate in used:
            candidate, n = f"{base}-{n}", n + 1
        used.add(candidate)
        skills.append((candidate, description[:1000]))

    for name, description in real[:size]:
        add(name, description)
    while len(skills) < size:
        name, description = rng.choice(real)
        first = _first_sentence(description)
        if rng.random() < 0.5:
            text = f"{first} {_first_sentence(rng.choice(real)[1])}"
        else:
            text = f"{first.rstrip('.')} {rng.choice(QUALIFIERS)}."
        add(f"{name}-{rng.choice(['pro', 'lite', 'kit', 'plus', 'x', 'flow', 'ops', 'assist'])}", text)
    return skills


def _first_sentence(text: str) -> str:
    return re.split(r"(?<=[.!?])\s", text, maxsplit=1)[0]


def write_folder(skills: list[tuple[str, str]], folder: Path) -> None:
    for name, description in skills:
        (folder / name).mkdir(parents=True)
        text = f"---\nname: {name}\ndescription: {json.dumps(description)}\n---\nInstructions.\n"
        (folder / name / "SKILL.md").write_text(text, encoding="utf-8")


def measure(command: list[str], env: dict[str, str], kill_above: float, timeout: float) -> dict:
    """Run ``command``; wall time, CPU time (user and system), peak RSS (MB) and stdout, or why it was stopped."""
    start = time.perf_counter()
    child = subprocess.Popen(command, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, start_new_session=True)
    stopped: list[str] = []
    out: list[bytes] = []
    err: list[bytes] = []
    readers = [
        threading.Thread(target=lambda: out.append(child.stdout.read())),
        threading.Thread(target=lambda: err.append(child.stderr.read())),
    ]
    for reader in readers:
        reader.start()

    def watch() -> None:
        while child.returncode is None and not stopped:
            if time.perf_counter() - start > timeout:
                stopped.append(f"stopped after {timeout / 60:.0f} min")
            elif rss(child.pid) > kill_above:
                stopped.append(f"killed above {kill_above / 1024**3:.0f} GB after {time.perf_counter() - start:.0f} s")
            if stopped:
                os.killpg(child.pid, signal.SIGKILL)
                return
            time.sleep(0.2)

    watchdog = threading.Thread(target=watch, daemon=True)
    watchdog.start()
    try:
        _, status, usage = os.wait4(child.pid, 0)
    except BaseException:  # interrupted: take the child (and anything it started) down too
        os.killpg(child.pid, signal.SIGKILL)
        raise
    child.returncode = os.waitstatus_to_exitcode(status)
    seconds = time.perf_counter() - start
    for reader in readers:
        reader.join()
    result = {
        "seconds": seconds,
        "cpu_s": usage.ru_utime + usage.ru_stime,
        "rss_mb": usage.ru_maxrss / 1024,
        "stdout": b"".join(out).decode(errors="replace"),
    }
    if stopped:
        result["failed"] = stopped[0]
    elif child.returncode != 0:
        lines = b"".join(err).decode(errors="replace").strip().splitlines()
        result["failed"] = f"exit {child.returncode}: {lines[-1] if lines else ''}"[:120]
    return result


def rss(pid: int) -> int:
    """The resident memory of process ``pid`` in bytes (0 once it is gone)."""
    try:
        with open(f"/proc/{pid}/status") as status:
            for line in status:
                if line.startswith("VmRSS:"):
                    return int(line.split()[1]) * 1024
    except OSError:
        pass
    return 0


def route_child(tree_file: str, requests: int) -> None:
    """In a child process: route REQUESTS[0] once (the first routing), then ``requests`` more; print the timings."""
    from semif_agent._sync import run_sync
    from semif_agent.engine import create_engine
    from semif_agent.routing import create_strategy
    from semif_agent.tree import SkillTree

    start = time.perf_counter()
    tree = SkillTree.load(Path(tree_file), Path(tree_file).parent / "bodies")
    strategy = create_strategy("examples", tree, create_engine("local"))
    run_sync(strategy.aroute(REQUESTS[0]))
    first = time.perf_counter() - start
    latencies = []
    for i in range(requests):  # each text new to the process: no embedding of a request is served from memory
        text = f"{REQUESTS[(i + 1) % len(REQUESTS)]}, request {i}"
        began = time.perf_counter()
        run_sync(strategy.aroute(text))
        latencies.append(time.perf_counter() - began)
    print(json.dumps({"first_in_process": first, "p50_ms": statistics.median(latencies) * 1000 if latencies else None}))


def run_version(src: Path, skills_dir: Path, work: Path, args: argparse.Namespace) -> dict:
    """Build, first route and warm route for one version of the code."""
    work.mkdir(parents=True)
    base_env = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "SEMIF_CACHE_DIR")}
    env = {**base_env, "PYTHONPATH": str(src), "SEMIF_CACHE_DIR": str(work / "cache-build")}
    tree = work / "tree.json"
    build = measure(
        [sys.executable, "-m", "semif_agent", "tree", "build", str(skills_dir), "-o", str(tree)],
        env,
        args.kill_above * 1024**3,
        args.timeout,
    )
    results = {"build": build}
    if "failed" in build:
        return results
    for kind, count in (("first", 0), ("warm", args.requests)):
        cache = work / f"cache-{kind}"
        shutil.copytree(work / "cache-build", cache)
        run = measure(
            [sys.executable, __file__, "--route-child", str(tree), str(count)],
            {**env, "SEMIF_CACHE_DIR": str(cache)},
            args.kill_above * 1024**3,
            args.timeout,
        )
        if "failed" not in run:
            run.update(json.loads(run["stdout"].strip().splitlines()[-1]))
        results[kind] = run
    return results


def cell(run: dict | None, key: str, unit: str) -> str:
    if run is None:
        return "-"
    if "failed" in run:
        return run["failed"]
    value = run[key]
    return f"{value:,.0f} {unit}" if value >= 100 else f"{value:.2f} {unit}" if value < 10 else f"{value:.1f} {unit}"


def ratio(base: dict | None, new: dict | None, key: str) -> str:
    if not base or not new or "failed" in new:
        return "-"
    if "failed" in base:
        return "baseline failed"
    return f"{base[key] / new[key]:.1f}x"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--corpus", action="append", type=Path, help="a folder of SKILL.md skills (repeatable)")
    parser.add_argument("--sizes", nargs="+", type=int, default=[1000, 3000, 10000])
    parser.add_argument("--baseline", default=BASELINE, help="the revision to compare with")
    parser.add_argument("--no-baseline", action="store_true")
    parser.add_argument("--requests", type=int, default=50, help="routings for the warm median")
    parser.add_argument("--kill-above", type=float, default=12.0, help="GB of RSS past which a child is killed")
    parser.add_argument("--timeout", type=float, default=1800.0, help="seconds a child may run")
    parser.add_argument("--route-child", nargs=2, help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.route_child:
        return route_child(args.route_child[0], int(args.route_child[1]))
    real = real_skills(args.corpus or default_corpora())
    print(f"{len(real)} distinct real skills; load average {os.getloadavg()[0]:.1f}", flush=True)
    with tempfile.TemporaryDirectory(prefix="tree-scale-") as tmp:
        versions = {"new": ROOT / "src"}
        if not args.no_baseline:
            checkout = Path(tmp) / "baseline"
            subprocess.run(
                ["git", "-C", str(ROOT), "worktree", "add", "--detach", str(checkout), args.baseline],
                check=True,
                capture_output=True,
            )
            versions["baseline"] = checkout / "src"
        try:
            print("| skills | version | build | build RSS | first route | first RSS | warm route p50 | warm RSS |")
            print("|---|---|---|---|---|---|---|---|")
            for size in args.sizes:
                skills_dir = Path(tmp) / f"skills-{size}"
                write_folder(catalog(real, size), skills_dir)
                runs = {}
                for version, src in versions.items():
                    runs[version] = run_version(src, skills_dir, Path(tmp) / f"{version}-{size}", args)
                    r = runs[version]
                    print(
                        f"| {size:,} | {version} | {cell(r['build'], 'seconds', 's')} | {cell(r['build'], 'rss_mb', 'MB')} | "
                        f"{cell(r.get('first'), 'seconds', 's')} | {cell(r.get('first'), 'rss_mb', 'MB')} | "
                        f"{cell(r.get('warm'), 'p50_ms', 'ms')} | {cell(r.get('warm'), 'rss_mb', 'MB')} |",
                        flush=True,
                    )
                if "baseline" in runs:
                    new, base = runs["new"], runs["baseline"]
                    print(
                        f"| {size:,} | baseline/new | {ratio(base['build'], new['build'], 'seconds')} | "
                        f"{ratio(base['build'], new['build'], 'rss_mb')} | {ratio(base.get('first'), new.get('first'), 'seconds')} | "
                        f"{ratio(base.get('first'), new.get('first'), 'rss_mb')} | {ratio(base.get('warm'), new.get('warm'), 'p50_ms')} | "
                        f"{ratio(base.get('warm'), new.get('warm'), 'rss_mb')} |",
                        flush=True,
                    )
                shutil.rmtree(skills_dir)
        finally:
            if "baseline" in versions:
                subprocess.run(
                    ["git", "-C", str(ROOT), "worktree", "remove", "--force", str(checkout)], capture_output=True
                )


if __name__ == "__main__":
    main()
