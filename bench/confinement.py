"""What confinement costs: the same code-skill runs in a confined child (as semif runs them) and in the host.

    python bench/confinement.py [--runs 30] [--rounds 5]

Both sides run the same starter skill (``todos.add`` on the lexical engine,
so no model time is counted) on fresh starter workspaces of their own, with
the same code: the one difference is where the body's ``predict`` and
``act`` execute.

- confined: as semif runs them, in a forked child of the warm worker pool
  (PID and network namespaces, Landlock, limits; the process kept warm);
- in the host: the same child's code (``_body_child.run``) called in a thread
  of the host process, its engine calls answered by the same host side
  (``BodyRun``) over an in-process channel: no fork, no confinement. This is
  how bodies ran before they were confined.

Two figures, each with the sides taking turns (``bench/_fair.py``: confined,
host, confined, host, ... after a warm-up round) and reported as medians with
their spread and the load at the start and end:

- per run, in one process: ``SkillRunner.run``, ``--runs`` runs a round;
- per ``semif run``: the whole command in a fresh process, one a round (the
  host side is the same command with the body run in the host).
"""

from __future__ import annotations

import argparse
import asyncio
import runpy
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from types import SimpleNamespace
from typing import Any

from _fair import Load, difference, interleave, table

BENCH = Path(__file__).resolve().parent


class HostPool:
    """A stand-in for the worker pool that runs the call's target in a thread of this process, unconfined."""

    async def call(self, target: Any, payload: dict[str, Any], *, on_message: Any = None, **_: Any) -> Any:
        loop = asyncio.get_running_loop()

        class Channel:
            def ask(self, message: dict[str, Any]) -> dict[str, Any]:
                return asyncio.run_coroutine_threadsafe(on_message(message), loop).result()

        value = await asyncio.to_thread(target, payload, Channel())
        return SimpleNamespace(value=value, stdout="", stderr="", error_type=None, exit_code=0)

    async def start(self) -> None:
        pass


def run_in_host(enabled: bool) -> None:
    """From now on, code-skill bodies run in the host (``enabled``) or confined, as semif runs them."""
    from semif_agent.loop import confined

    original = getattr(confined, "_bench_original_pool", None) or confined.pool_for_this_loop
    confined._bench_original_pool = original  # type: ignore[attr-defined]  # kept to switch back
    confined.pool_for_this_loop = HostPool if enabled else original


def host_cli(argv: list[str]) -> None:
    """``semif`` with ``argv``, code-skill bodies run in the host."""
    run_in_host(True)
    sys.argv = ["semif", *argv]
    runpy.run_module("semif_agent", run_name="__main__")


def runner_side(root: Path, *, host: bool):
    """A side that runs ``todos.add`` ``runs`` times on its own workspace (bodies in the host or confined)."""
    from semif_agent.engine import create_engine
    from semif_agent.loop import SkillRunner
    from semif_agent.starter import create_workspace
    from semif_agent.workspace import Workspace

    runner = SkillRunner(Workspace.load(create_workspace(root)), engine=create_engine("lexical"))
    count = 0

    def side(runs: int) -> list[float]:
        nonlocal count
        run_in_host(host)
        times = []
        for _ in range(runs):
            count += 1
            started = time.perf_counter()
            result = runner.run(f"Add task number {count} to my to-do list", skill="todos.add")
            times.append((time.perf_counter() - started) * 1000)
            if result.error:
                raise SystemExit(f"the run failed ({'host' if host else 'confined'}): {result.error}")
        return times

    return side


def command_side(root: Path, *, host: bool):
    """A side that runs one ``semif run`` of ``todos.add`` in a fresh process on its own workspace."""
    subprocess.run([sys.executable, "-m", "semif_agent", "init", str(root)], check=True, capture_output=True)
    prefix = (
        [
            sys.executable,
            "-c",
            f"import sys; sys.path.insert(0, {str(BENCH)!r}); import confinement; confinement.host_cli(sys.argv[1:])",
        ]
        if host
        else [sys.executable, "-m", "semif_agent"]
    )
    count = 0

    def side() -> None:
        nonlocal count
        count += 1
        args = ["run", f"Add chore {count} to my to-do list", "-w", str(root), "--skill", "todos.add"]
        subprocess.run([*prefix, *args, "--engine", "lexical"], check=True, capture_output=True)

    return side


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=30, help="runs per round in one process")
    parser.add_argument("--rounds", type=int, default=5, help="timed rounds per side (interleaved)")
    args = parser.parse_args()
    load = Load()
    with tempfile.TemporaryDirectory(prefix="semif-bench-confinement-") as tmp:
        confined, host = runner_side(Path(tmp) / "confined", host=False), runner_side(Path(tmp) / "host", host=True)
        runs = interleave(
            {"confined child, warm": lambda: confined(args.runs), "in the host": lambda: host(args.runs)}, args.rounds
        )
        cli_confined = command_side(Path(tmp) / "cli-confined", host=False)
        cli_host = command_side(Path(tmp) / "cli-host", host=True)
        commands = interleave({"confined child": cli_confined, "in the host": cli_host}, max(args.rounds, 5) * 2)
    print(f"todos.add on the lexical engine, the sides taking turns; {load.text()}")
    print(f"per run in one process ({args.runs} runs x {args.rounds} rounds):")
    print(table(runs, reference="in the host"))
    print("per semif run (a fresh process each):")
    print(table(commands, reference="in the host", digits=0))
    print(
        f"what confinement adds, by the medians: per run (warm) "
        f"{difference(runs['confined child, warm'], runs['in the host'])}; "
        f"per semif run {difference(commands['confined child'], commands['in the host'], digits=0)}"
    )


if __name__ == "__main__":
    main()
