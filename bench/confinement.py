"""What confinement costs: a code-skill run in the host's threads (before) against a confined child (after).

    python bench/confinement.py [--runs 30] [--before REV]

Both sides run the same starter skill (``todos.add`` on the lexical engine,
so no model time is counted) on a fresh starter workspace:

- per run, in one process: ``SkillRunner.run`` repeated, the median wall
  time (after the first run, so the warm worker pool is up);
- per ``semif run``: the whole command in a fresh process, the median wall time.

"Before" is the code of ``--before`` (default: the commit before bodies were
confined), checked out in a temporary worktree and run in a subprocess with
its own ``PYTHONPATH``; "after" is this checkout.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
BEFORE = "07b3368"
IN_PROCESS = """
import json, statistics, sys, time
from pathlib import Path
from semif_agent.engine import create_engine
from semif_agent.loop import SkillRunner
from semif_agent.starter import create_workspace
from semif_agent.workspace import Workspace
ws = Workspace.load(create_workspace(Path(sys.argv[1]) / "ws"))
runner = SkillRunner(ws, engine=create_engine("lexical"))
runner.run("Add water the plants to my to-do list", skill="todos.add")
times = []
for n in range(int(sys.argv[2])):
    start = time.perf_counter()
    runner.run(f"Add task number {n} to my to-do list", skill="todos.add")
    times.append((time.perf_counter() - start) * 1000)
print(json.dumps({"median": statistics.median(times), "p90": sorted(times)[int(0.9 * (len(times) - 1))]}))
"""


def checkout(rev: str, where: Path) -> Path:
    subprocess.run(
        ["git", "-C", str(ROOT), "worktree", "add", "--detach", str(where), rev], check=True, capture_output=True
    )
    return where / "src"


def in_process(src: Path, runs: int) -> dict:
    with tempfile.TemporaryDirectory() as tmp:
        env = {**os.environ, "PYTHONPATH": str(src), "SEMIF_CACHE_DIR": str(Path(tmp) / "cache")}
        out = subprocess.run(
            [sys.executable, "-c", IN_PROCESS, tmp, str(runs)], capture_output=True, text=True, env=env, check=True
        )
    return json.loads(out.stdout.strip().splitlines()[-1])


def command(src: Path, runs: int) -> float:
    with tempfile.TemporaryDirectory() as tmp:
        env = {**os.environ, "PYTHONPATH": str(src), "SEMIF_CACHE_DIR": str(Path(tmp) / "cache")}
        subprocess.run(
            [sys.executable, "-m", "semif_agent", "init", f"{tmp}/ws"], env=env, check=True, capture_output=True
        )
        times = []
        for n in range(runs):
            start = time.perf_counter()
            subprocess.run(
                [
                    sys.executable,
                    "-m",
                    "semif_agent",
                    "run",
                    f"Add chore {n} to my to-do list",
                    "-w",
                    f"{tmp}/ws",
                    "--skill",
                    "todos.add",
                    "--engine",
                    "lexical",
                ],
                env=env,
                check=True,
                capture_output=True,
            )
            times.append((time.perf_counter() - start) * 1000)
    return statistics.median(times)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=30)
    parser.add_argument("--before", default=BEFORE)
    args = parser.parse_args()
    load = os.getloadavg()[0]
    with tempfile.TemporaryDirectory() as tmp:
        old = checkout(args.before, Path(tmp) / "before")
        try:
            rows = []
            for name, src in (
                ("before (threads in the host)", old),
                ("after (confined child, warm pool)", ROOT / "src"),
            ):
                runs = in_process(src, args.runs)
                rows.append((name, runs, command(src, max(5, args.runs // 3))))
        finally:
            subprocess.run(
                ["git", "-C", str(ROOT), "worktree", "remove", "--force", str(old.parent)],
                check=False,
                capture_output=True,
            )
    print(f"load average {load:.2f}; todos.add on the lexical engine; {args.runs} runs")
    print(f"{'':<36}{'run, median':>14}{'run, p90':>11}{'semif run':>12}")
    for name, runs, cli in rows:
        print(f"{name:<36}{runs['median']:>11.1f} ms{runs['p90']:>8.1f} ms{cli:>9.0f} ms")
    (_, before, cli_before), (_, after, cli_after) = rows
    print(
        f"confinement adds {after['median'] - before['median']:+.1f} ms per run (warm) "
        f"and {cli_after - cli_before:+.0f} ms per semif run"
    )


if __name__ == "__main__":
    main()
