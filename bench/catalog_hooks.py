"""50 agents run their ``pre_step`` hook at once: semif vs agentsociety2's ``run_skill_hook``.

    .venv/bin/python bench/catalog_hooks.py [--agents 50] [--rounds 10] [--pause 0] [--steps]

Every agent has its own runtime and workspace over one shared registry, with
the hook skill visible and active; all agents call ``run_skill_hook`` together
(``asyncio.gather``). Two hook styles:

- ``entrypoint(argv, ctx)``: semif runs it in a confined child of a warm
  worker; agentsociety2 calls it inside the host process.
- a plain script (no entrypoint): semif runs it as a whole program in the
  same kind of confined child (``__main__`` in the warm worker's
  interpreter); agentsociety2 executes it inside the host under a global lock.

semif's figures come twice: with warm processes (the default: an agent's
calls of the hook run one after another in one confined process, put back
between calls) and with a fresh process per call (``warm_processes=False``).

semif's runs keep all their confinement (the line under its figures says what
held on this machine): a PID namespace per run, a ``pids`` cgroup, no network,
Landlock, resource limits and the watch on bytes written. ``--steps`` prints
instead what each of those costs: the warm ``entrypoint`` hooks again, with
one more step of confinement turned on per line (then the network allowed,
the fallbacks where namespaces or cgroups are refused, and the workers keeping
no child forked ahead of its call), as wall time and as CPU time per call (the
host's, and the workers' with their children's).

"cold" is each side's first round (semif starts its workers then), timed
apart; "warm" the next ``--rounds``, the three sides taking turns round by
round (``bench/_fair.py``: semif warm, semif fresh, the peer, semif warm, ...),
each reported as the median with its quartiles and range, with the load
average at the start and end. Before each round the agents pause ``--pause``
seconds with no call (the agents think between steps: semif's workers then
fork children ahead of the next calls; 0, the default, leaves them no time).
The peer is agentsociety2 at the version ``catalog_peers.py`` pins, in this
process (its hooks run in the host: that is its fastest and only way). Its
figures buy speed with no isolation at all: its hooks share the host's
memory, environment and file access. Not part of the test suite.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import io
import os
import resource
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from _fair import Load, ainterleave, table
from catalog_peers import agentsociety2, generate_skills

from semif_agent.catalog import AgentSkillRuntime, NullTraceWriter, SkillCatalog
from semif_agent.sandbox import SandboxLimits, WorkerPool

ENTRYPOINT_HOOK = """
import json
def entrypoint(argv, ctx):
    return json.dumps({"skill": ctx.skill_id, "args": argv, "note": "remember the plan"})
"""
PLAIN_HOOK = """
import json, os, sys
print(json.dumps({"skill": os.environ.get("SKILL_ID"), "args": sys.argv[1:], "note": "remember the plan"}))
"""


async def timed_rounds(calls, rounds: int, pause: float = 0.0) -> tuple[float, float, bool, dict]:
    """(cold seconds, best warm seconds, all ok, what confinement held) of running ``calls()`` concurrently.

    Used by ``--steps`` only, which compares a setting with the one before it, not with the peer."""
    started = time.perf_counter()
    results = await asyncio.gather(*calls())
    cold = time.perf_counter() - started
    ok = all(result.ok for result in results)
    held = getattr(results[0], "confinement", {})
    warm = float("inf")
    for _ in range(rounds):
        await asyncio.sleep(pause)
        started = time.perf_counter()
        results = await asyncio.gather(*calls())
        warm = min(warm, time.perf_counter() - started)
        ok = ok and all(result.ok for result in results)
    return cold, warm, ok, held


class Side:
    """One side's agents: ``round()`` has all of them call the hook at once; what every call came to is kept."""

    def __init__(self, calls, pause: float) -> None:
        self.calls, self.pause = calls, pause
        self.ok, self.held, self.cold = True, {}, 0.0

    async def first(self) -> None:
        """The cold round (semif starts its workers then), timed apart."""
        started = time.perf_counter()
        await self.round()
        self.cold = (time.perf_counter() - started) * 1000

    async def round(self) -> float:
        await asyncio.sleep(self.pause)
        started = time.perf_counter()
        results = await asyncio.gather(*self.calls())
        elapsed = (time.perf_counter() - started) * 1000
        self.ok = self.ok and all(result.ok for result in results)
        self.held = getattr(results[0], "confinement", {}) or self.held
        return elapsed


async def measure(hook: str, agents: int, rounds: int, peer, pause: float = 0.0) -> tuple[dict[str, Side], dict]:
    """The three sides (semif warm, semif fresh, the peer) on the same hook, each cold once, then in turn."""
    with tempfile.TemporaryDirectory(prefix="semif-bench-hooks-") as tmp:
        root = Path(tmp) / "skills"
        generate_skills(root, 1, hook=hook)
        pools = [WorkerPool(), WorkerPool()]  # each semif side its own, as when each ran alone
        try:
            sides = {
                "semif, warm processes": Side(ours(root, Path(tmp) / "warm", agents, pools[0], warm=True), pause),
                "semif, a fresh process per call": Side(
                    ours(root, Path(tmp) / "fresh", agents, pools[1], warm=False), pause
                ),
                f"agentsociety2 {peer['version']} (in-process)": Side(
                    theirs(root, Path(tmp) / "peer", agents, peer), pause
                ),
            }
            # the peer imports plain hooks into the host: their prints land here
            with contextlib.redirect_stdout(io.StringIO()):
                for side in sides.values():
                    await side.first()
                spreads = await ainterleave({name: side.round for name, side in sides.items()}, rounds, warmup=0)
        finally:
            for pool in pools:
                pool.close()
    return sides, spreads


SKILL = "skill-00000"
ARGV = ["--args-json", '{"step": 1}']


def ours(root: Path, workspaces: Path, agents: int, pool: WorkerPool, *, warm: bool):
    catalog = SkillCatalog()
    catalog.scan_custom(root)
    limits = SandboxLimits(warm_processes=warm)
    runtimes = []
    for agent in range(agents):
        runtime = AgentSkillRuntime(agent, catalog, limits=limits, worker_pool=pool)
        runtime.bind_workspace(workspace_root=workspaces / str(agent), trace_writer=NullTraceWriter())
        runtime.set_visible_skills([SKILL])
        runtime.activate_skill(SKILL)
        runtimes.append(runtime)
    return lambda: [rt.run_skill_hook(SKILL, "pre_step", ARGV, timeout_sec=30) for rt in runtimes]


def theirs(root: Path, workspaces: Path, agents: int, peer):
    registry = peer["registry"].SkillRegistry()
    registry.scan_custom(root)
    runtimes = []
    for agent in range(agents):
        runtime = peer["runtime"].AgentSkillRuntime(agent, registry)
        workspace = workspaces / str(agent)
        workspace.mkdir(parents=True)
        runtime.bind_workspace(
            workspace_root=workspace,
            fs=peer["fs"].WorkspaceFS(workspace),
            trace_writer=peer["trace"].JsonlTraceWriter(agent_id=agent),
        )
        runtime.set_visible_skills([SKILL])
        runtime.activate_skill(f"custom@{SKILL}")
        runtimes.append(runtime)
    return lambda: [rt.run_skill_hook(f"custom@{SKILL}", "pre_step", ARGV, timeout_sec=30) for rt in runtimes]


STEPS = {
    "fork into a PID namespace, no network (Landlock on TCP)": {
        "confine_fs": False,
        "max_processes": None,
        "max_disk_mb": None,
    },
    "+ Landlock on files": {"max_processes": None, "max_disk_mb": None},
    "+ pids cgroup": {"max_disk_mb": None},
    "+ disk watch (all: the default)": {},
    "the default, network allowed (the host's namespace)": {"network": True},
    "the default, no namespaces (the cgroup kills leftovers)": {"namespaces": False},
    "no namespaces, no cgroup (a subreaper kills leftovers)": {"namespaces": False, "max_processes": None},
    "the default, no child forked ahead (ready_children=0)": {},
    "the default, no child forked ahead, warm processes": {"warm_processes": True},
}
NONE_AHEAD = "the default, no child forked ahead (ready_children=0)"


def _cpu_seconds(pid: int) -> float:
    """CPU time of ``pid`` and of the children it has reaped."""
    with open(f"/proc/{pid}/stat", encoding="ascii") as handle:
        fields = handle.read().rsplit(")", 1)[1].split()
    return sum(int(value) for value in fields[11:15]) / os.sysconf("SC_CLK_TCK")


async def measure_steps(agents: int, rounds: int, pause: float = 0.0) -> None:
    with tempfile.TemporaryDirectory(prefix="semif-bench-steps-") as tmp:
        root = Path(tmp) / "skills"
        generate_skills(root, 1, hook=ENTRYPOINT_HOOK)
        registry = SkillCatalog()
        registry.scan_custom(root)
        pool = WorkerPool()
        for name, settings in STEPS.items():
            if name == NONE_AHEAD:
                pool.close()
                pool = WorkerPool(ready_children=0)
            runtimes = []
            for agent in range(agents):
                limits = SandboxLimits(**{"warm_processes": False, **settings})
                runtime = AgentSkillRuntime(agent, registry, limits=limits, worker_pool=pool)
                runtime.bind_workspace(workspace_root=Path(tmp) / "ws" / str(agent), trace_writer=NullTraceWriter())
                runtime.set_visible_skills(["skill-00000"])
                runtimes.append(runtime)
            calls = lambda: [rt.run_skill_hook("skill-00000", "pre_step", [], timeout_sec=30) for rt in runtimes]  # noqa: E731, B023 - called in this iteration
            await asyncio.gather(*calls())
            host, workers = resource.getrusage(resource.RUSAGE_SELF), sum(_cpu_seconds(pid) for pid in pool.pids)
            _cold, warm, ok, _held = await timed_rounds(calls, rounds, pause)
            after = resource.getrusage(resource.RUSAGE_SELF)
            host_ms = (after.ru_utime + after.ru_stime - host.ru_utime - host.ru_stime) * 1000 / (agents * (rounds + 1))
            worker_ms = (sum(_cpu_seconds(pid) for pid in pool.pids) - workers) * 1000 / (agents * (rounds + 1))
            print(
                f"  {name:56s} warm {warm * 1000:6.1f} ms   CPU per call: host {host_ms:4.2f} ms,"
                f" workers {worker_ms:4.2f} ms   all ok: {ok}"
            )
        pool.close()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--agents", type=int, default=50)
    parser.add_argument("--rounds", type=int, default=10, help="timed rounds per side (interleaved)")
    parser.add_argument("--pause", type=float, default=0.0, help="seconds with no call before each warm round")
    parser.add_argument("--steps", action="store_true", help="what each step of confinement costs, one more per line")
    args = parser.parse_args()
    if args.steps:
        print(f"{args.agents} concurrent entrypoint hooks, confinement added step by step")
        asyncio.run(measure_steps(args.agents, args.rounds, args.pause))
        return
    peer = agentsociety2()
    load = Load()
    print(
        f"{args.agents} concurrent pre_step hooks ({args.agents} agents, one shared registry), the sides taking turns"
    )
    for style, hook in (("entrypoint(argv, ctx)", ENTRYPOINT_HOOK), ("plain script", PLAIN_HOOK)):
        sides, spreads = asyncio.run(measure(hook, args.agents, args.rounds, peer, args.pause))
        print(f"  {style}: one round of {args.agents} calls at once, warm ({args.rounds} rounds)")
        print(table(spreads, reference=[*sides][-1], digits=1))
        for name, side in sides.items():
            held = ", ".join(f"{kind} {how}" for kind, how in side.held.items()) or "nothing (in the host)"
            print(f"    {name}: cold {side.cold:.1f} ms, all ok: {side.ok}; held: {held}")
    print(f"({load.text()})")


if __name__ == "__main__":
    main()
