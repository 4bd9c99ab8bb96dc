"""Wall time of starting the ``semif`` command, now and before commands were imported lazily.

    python bench/cli_startup.py [--runs 20] [--before REF]

Each figure is the median wall time of N runs of the installed ``semif`` script
(``python -m semif_agent`` when there is none) with PYTHONPATH on a source tree:
"after" is this checkout, "before" is REF (default: the commit before the
lazy command table), checked out with ``git worktree add`` in a temporary
folder that is removed afterwards. Runs of the two alternate, so a change in
the machine's load hits both alike; the load average is printed with them.
"""

from __future__ import annotations

import argparse
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from contextlib import contextmanager
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
COMMANDS = (["--help"], ["--version"], ["run", "--help"])


def semif_command() -> list[str]:
    """How to start ``semif``: its installed script, else ``python -m semif_agent``."""
    script = Path(sys.executable).with_name("semif")
    found = str(script) if script.is_file() else shutil.which("semif")
    return [sys.executable, found] if found else [sys.executable, "-m", "semif_agent"]


def environment(src: Path) -> dict[str, str]:
    """The environment that makes ``semif`` run the code in ``src`` (bytecode cached, as installs do)."""
    env = {key: value for key, value in os.environ.items() if key != "PYTHONDONTWRITEBYTECODE"}
    env["PYTHONPATH"] = os.pathsep.join(filter(None, [str(src), os.environ.get("PYTHONPATH")]))
    where = subprocess.run(
        [sys.executable, "-c", "import semif_agent; print(semif_agent.__file__)"],
        env=env,
        capture_output=True,
        text=True,
        check=True,
    ).stdout.strip()
    if not Path(where).resolve().is_relative_to(src.resolve()):
        sys.exit(f"semif_agent comes from {where}, not {src}: an installed copy shadows PYTHONPATH")
    return env


def default_before() -> str:
    """The parent of the first commit that gave ``main`` its lazy command table."""
    introduced = subprocess.run(
        ["git", "log", "--reverse", "--format=%H", "-S", "lazy_commands", "--", "src/semif_agent/cli/__init__.py"],
        cwd=ROOT,
        capture_output=True,
        text=True,
        check=True,
    ).stdout.split()
    if not introduced:
        sys.exit("no commit introduces the lazy command table here; name one with --before")
    return f"{introduced[0]}^"


@contextmanager
def checkout(ref: str):
    """A temporary worktree of ``ref``, removed afterwards."""
    folder = Path(tempfile.mkdtemp(prefix="semif-before-")) / "tree"
    subprocess.run(["git", "worktree", "add", "--detach", "--quiet", str(folder), ref], cwd=ROOT, check=True)
    try:
        yield folder
    finally:
        subprocess.run(["git", "worktree", "remove", "--force", str(folder)], cwd=ROOT, check=True)
        shutil.rmtree(folder.parent, ignore_errors=True)


def wall_time(command: list[str], env: dict[str, str]) -> float:
    start = time.perf_counter()
    subprocess.run(command, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, check=True)
    return time.perf_counter() - start


def output(command: list[str], env: dict[str, str]) -> str:
    return subprocess.run(command, env=env, capture_output=True, text=True, check=True).stdout


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=20, help="runs per command and tree (default 20)")
    parser.add_argument("--before", metavar="REF", help="the commit to compare with (default: before lazy commands)")
    args = parser.parse_args()

    semif = semif_command()
    before_ref = args.before or default_before()
    label = subprocess.run(
        ["git", "rev-parse", "--short", before_ref], cwd=ROOT, capture_output=True, text=True, check=True
    ).stdout.strip()
    load_start = os.getloadavg()[0]
    with checkout(before_ref) as before_tree:
        trees = {"before": environment(before_tree / "src"), "after": environment(ROOT / "src")}
        times: dict[tuple[str, str], list[float]] = {}
        for words in COMMANDS:
            name = " ".join(["semif", *words])
            for env in trees.values():  # warm-up: bytecode written, files cached
                wall_time([*semif, *words], env)
            for _ in range(args.runs):
                for tree, env in trees.items():
                    times.setdefault((name, tree), []).append(wall_time([*semif, *words], env))
        same_help = output([*semif, "--help"], trees["before"]) == output([*semif, "--help"], trees["after"])
    load_end = os.getloadavg()[0]

    print(f"semif startup: median wall time of {args.runs} runs of {' '.join(Path(p).name for p in semif)}")
    print(f"before: {label} ({before_ref}); after: this checkout")
    print(f"load average {load_start:.2f} at start, {load_end:.2f} at end, {os.cpu_count()} CPUs")
    print(f"semif --help prints the same text before and after: {'yes' if same_help else 'NO'}")
    print()
    print(f"{'command':<20}{'before ms':>11}{'after ms':>10}{'before/after':>14}")
    for words in COMMANDS:
        name = " ".join(["semif", *words])
        before = statistics.median(times[(name, "before")]) * 1000
        after = statistics.median(times[(name, "after")]) * 1000
        print(f"{name:<20}{before:>11.1f}{after:>10.1f}{before / after:>13.2f}x")


if __name__ == "__main__":
    main()
