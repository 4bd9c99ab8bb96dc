"""Three sync script calls in a row: a fresh event loop per call vs the one sync bridge.

    .venv/bin/python bench/sync_bridge.py [--calls 3] [--repeat 3]

A script with an ``entrypoint(argv, ctx)`` runs in a warm worker of the
sandbox's pool. The pool serves one event loop at a time, so a sync wrapper
that runs each call in a loop of its own (``asyncio.run`` per call) starts a
new worker on every call; ``semif_agent._sync.run_sync`` keeps one loop per
thread, so the worker started by the first call serves the next ones.

Each line runs ``--calls`` sync calls on a fresh pool and prints every
call's wall time and how many worker processes the pool started; the best of
``--repeat`` sequences is kept. The first call of either way starts a worker.
Not part of the test suite.
"""

from __future__ import annotations

import argparse
import asyncio
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from catalog_peers import generate_skills

from semif_agent.catalog import AgentSkillRuntime, NullTraceWriter, SkillCatalog
from semif_agent.sandbox import WorkerPool

HOOK = """
import json
def entrypoint(argv, ctx):
    return json.dumps({"skill": ctx.skill_id, "args": argv})
"""
SKILL = "skill-00000"


def per_call_loop(runtime: AgentSkillRuntime) -> Callable[[], object]:
    """A sync call as a bridge with no loop of its own runs it: ``asyncio.run`` each time."""
    return lambda: asyncio.run(runtime.run_skill_hook(SKILL, "pre_step", [], timeout_sec=30))


def one_bridge(runtime: AgentSkillRuntime) -> Callable[[], object]:
    """The runtime's own sync wrapper."""
    return lambda: runtime.run_skill_hook_sync(SKILL, "pre_step", [], timeout_sec=30)


def sequence(
    registry: SkillCatalog, workspace: Path, way: Callable[[AgentSkillRuntime], Callable[[], object]], calls: int
) -> tuple[list[float], int, bool]:
    """(each call's seconds, workers the pool started, all ok) for ``calls`` sync calls on a fresh pool."""
    pool = WorkerPool()
    try:
        runtime = AgentSkillRuntime("bench", registry, worker_pool=pool)
        runtime.bind_workspace(workspace_root=workspace, trace_writer=NullTraceWriter())
        runtime.set_visible_skills([SKILL])
        call = way(runtime)
        times, ok = [], True
        for _ in range(calls):
            started = time.perf_counter()
            result = call()
            times.append(time.perf_counter() - started)
            ok = ok and bool(getattr(result, "ok", False))
        return times, pool.started, ok
    finally:
        pool.close()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--calls", type=int, default=3)
    parser.add_argument("--repeat", type=int, default=3)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="semif-bench-sync-") as tmp:
        root = Path(tmp) / "skills"
        generate_skills(root, 1, hook=HOOK)
        registry = SkillCatalog()
        registry.scan_custom(root)
        print(f"{args.calls} sync entrypoint calls in a row, best total of {args.repeat}")
        for label, way in (("asyncio.run per call (before)", per_call_loop), ("semif_agent._sync (after)", one_bridge)):
            best: tuple[list[float], int, bool] | None = None
            for attempt in range(args.repeat):
                figures = sequence(registry, Path(tmp) / "ws" / f"{way.__name__}-{attempt}", way, args.calls)
                if best is None or sum(figures[0]) < sum(best[0]):
                    best = figures
            assert best is not None
            times, started, ok = best
            each = ", ".join(f"{t * 1000:6.1f}" for t in times)
            print(
                f"  {label:32s} total {sum(times) * 1000:7.1f} ms  (each: {each} ms)"
                f"  workers started: {started}  all ok: {ok}"
            )


if __name__ == "__main__":
    main()
