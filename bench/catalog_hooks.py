"""50 agents run their ``pre_step`` hook at once: semif vs agentsociety2's ``run_skill_hook``.

    .venv/bin/python bench/catalog_hooks.py [--agents 50] [--rounds 5] [--pause 0] [--steps]

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

"cold" is the first round (semif starts its workers then); "warm" the best of
the next ``--rounds``, each after ``--pause`` seconds with no call (the agents
think between steps: semif's workers then fork children ahead of the next
calls; 0, the default, leaves them no time). The peer's figures buy speed with no isolation at all:
its hooks share the host's memory, environment and file access. Not part of
the test suite.
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

from catalog_peers import agentsociety2, generate_skills, ratio

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
    """(cold seconds, best warm seconds, all ok, what confinement held) of running ``calls()`` concurrently."""
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


async def measure(
    style: str, hook: str, agents: int, rounds: int, peer, pause: float = 0.0
) -> dict[str, tuple[float, float, bool, dict]]:
    figures = {}
    for name, warm in (("semif", True), ("semif, fresh", False)):
        figures[name] = await measure_ours(hook, agents, rounds, pause, warm=warm)
    figures["agentsociety2"] = await measure_peer(hook, agents, rounds, peer, pause)
    return figures


async def measure_ours(
    hook: str, agents: int, rounds: int, pause: float, *, warm: bool
) -> tuple[float, float, bool, dict]:
    with tempfile.TemporaryDirectory(prefix="semif-bench-hooks-") as tmp:
        root = Path(tmp) / "skills"
        generate_skills(root, 1, hook=hook)
        skill = "skill-00000"
        argv = ["--args-json", '{"step": 1}']

        ours = SkillCatalog()
        ours.scan_custom(root)
        pool = WorkerPool()
        our_runtimes = []
        limits = SandboxLimits(warm_processes=warm)
        for agent in range(agents):
            runtime = AgentSkillRuntime(agent, ours, limits=limits, worker_pool=pool)
            runtime.bind_workspace(workspace_root=Path(tmp) / "ours" / str(agent), trace_writer=NullTraceWriter())
            runtime.set_visible_skills([skill])
            runtime.activate_skill(skill)
            our_runtimes.append(runtime)
        semif = await timed_rounds(
            lambda: [rt.run_skill_hook(skill, "pre_step", argv, timeout_sec=30) for rt in our_runtimes], rounds, pause
        )
        pool.close()
    return semif


async def measure_peer(hook: str, agents: int, rounds: int, peer, pause: float) -> tuple[float, float, bool, dict]:
    with tempfile.TemporaryDirectory(prefix="semif-bench-hooks-") as tmp:
        root = Path(tmp) / "skills"
        generate_skills(root, 1, hook=hook)
        skill = "skill-00000"
        argv = ["--args-json", '{"step": 1}']
        theirs = peer["registry"].SkillRegistry()
        theirs.scan_custom(root)
        peer_runtimes = []
        for agent in range(agents):
            runtime = peer["runtime"].AgentSkillRuntime(agent, theirs)
            workspace = Path(tmp) / "theirs" / str(agent)
            workspace.mkdir(parents=True)
            runtime.bind_workspace(
                workspace_root=workspace,
                fs=peer["fs"].WorkspaceFS(workspace),
                trace_writer=peer["trace"].JsonlTraceWriter(agent_id=agent),
            )
            runtime.set_visible_skills([skill])
            runtime.activate_skill(f"custom@{skill}")
            peer_runtimes.append(runtime)
        with contextlib.redirect_stdout(
            io.StringIO()
        ):  # the peer imports plain hooks into the host: their prints land here
            other = await timed_rounds(
                lambda: [
                    rt.run_skill_hook(f"custom@{skill}", "pre_step", argv, timeout_sec=30) for rt in peer_runtimes
                ],
                rounds,
                pause,
            )
    return other


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
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--pause", type=float, default=0.0, help="seconds with no call before each warm round")
    parser.add_argument("--steps", action="store_true", help="what each step of confinement costs, one more per line")
    args = parser.parse_args()
    if args.steps:
        print(f"{args.agents} concurrent entrypoint hooks, confinement added step by step")
        asyncio.run(measure_steps(args.agents, args.rounds, args.pause))
        return
    peer = agentsociety2()
    print(f"{args.agents} concurrent pre_step hooks ({args.agents} agents, one shared registry)")
    for style, hook in (("entrypoint(argv, ctx)", ENTRYPOINT_HOOK), ("plain script", PLAIN_HOOK)):
        figures = asyncio.run(measure(style, hook, args.agents, args.rounds, peer, args.pause))
        peer_cold, peer_warm, peer_ok, _ = figures["agentsociety2"]
        print(f"  {style}")
        for name, label in (("semif", "warm processes"), ("semif, fresh", "a fresh process per call")):
            our_cold, our_warm, our_ok, held = figures[name]
            print(
                f"    semif, {label:25s} cold {our_cold * 1000:8.1f} ms   warm {our_warm * 1000:8.1f} ms"
                f"   all ok: {our_ok}   ({ratio(our_warm, peer_warm)})"
            )
            print("      held: " + ", ".join(f"{kind} {how}" for kind, how in held.items()))
        print(
            f"    agentsociety2 {peer['version']} (in-process) cold {peer_cold * 1000:8.1f} ms   warm {peer_warm * 1000:8.1f} ms"
            f"   all ok: {peer_ok}"
        )


if __name__ == "__main__":
    main()
