"""50 agents run their ``pre_step`` hook at once: semif vs agentsociety2's ``run_skill_hook``.

    .venv/bin/python bench/catalog_hooks.py [--agents 50] [--rounds 5]

Every agent has its own runtime and workspace over one shared registry, with
the hook skill visible and active; all agents call ``run_skill_hook`` together
(``asyncio.gather``). Two hook styles:

- ``entrypoint(argv, ctx)``: semif runs it in a warm worker (a forked,
  confined child per call); agentsociety2 calls it inside the host process.
- a plain script (no entrypoint): semif runs a fresh confined process;
  agentsociety2 executes it inside the host under a global lock.

"cold" is the first round (semif starts its workers then); "warm" the best of
the next ``--rounds``. The peer's figures buy speed with no isolation at all:
its hooks share the host's memory, environment and file access. Not part of
the test suite.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import io
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from catalog_peers import agentsociety2, generate_skills, ratio  # noqa: E402

from semif_agent.catalog import AgentSkillRuntime, NullTraceWriter, SkillRegistry, WorkerPool  # noqa: E402

ENTRYPOINT_HOOK = """
import json
def entrypoint(argv, ctx):
    return json.dumps({"skill": ctx.skill_id, "args": argv, "note": "remember the plan"})
"""
PLAIN_HOOK = """
import json, os, sys
print(json.dumps({"skill": os.environ.get("SKILL_ID"), "args": sys.argv[1:], "note": "remember the plan"}))
"""


async def timed_rounds(calls, rounds: int) -> tuple[float, float, bool]:
    """(cold seconds, best warm seconds, all ok) of running ``calls()`` concurrently."""
    started = time.perf_counter()
    results = await asyncio.gather(*calls())
    cold = time.perf_counter() - started
    ok = all(result.ok for result in results)
    warm = float("inf")
    for _ in range(rounds):
        started = time.perf_counter()
        results = await asyncio.gather(*calls())
        warm = min(warm, time.perf_counter() - started)
        ok = ok and all(result.ok for result in results)
    return cold, warm, ok


async def measure(style: str, hook: str, agents: int, rounds: int, peer) -> dict[str, tuple[float, float, bool]]:
    with tempfile.TemporaryDirectory(prefix="semif-bench-hooks-") as tmp:
        root = Path(tmp) / "skills"
        generate_skills(root, 1, hook=hook)
        skill = "skill-00000"
        argv = ["--args-json", '{"step": 1}']

        ours = SkillRegistry()
        ours.scan_custom(root)
        pool = WorkerPool()
        our_runtimes = []
        for agent in range(agents):
            runtime = AgentSkillRuntime(agent, ours, worker_pool=pool)
            runtime.bind_workspace(workspace_root=Path(tmp) / "ours" / str(agent), trace_writer=NullTraceWriter())
            runtime.set_visible_skills([skill])
            runtime.activate_skill(skill)
            our_runtimes.append(runtime)
        semif = await timed_rounds(
            lambda: [rt.run_skill_hook(skill, "pre_step", argv, timeout_sec=30) for rt in our_runtimes], rounds)
        pool.close()

        theirs = peer["registry"].SkillRegistry()
        theirs.scan_custom(root)
        peer_runtimes = []
        for agent in range(agents):
            runtime = peer["runtime"].AgentSkillRuntime(agent, theirs)
            workspace = Path(tmp) / "theirs" / str(agent)
            workspace.mkdir(parents=True)
            runtime.bind_workspace(workspace_root=workspace, fs=peer["fs"].WorkspaceFS(workspace),
                                   trace_writer=peer["trace"].JsonlTraceWriter(agent_id=agent))
            runtime.set_visible_skills([skill])
            runtime.activate_skill(f"custom@{skill}")
            peer_runtimes.append(runtime)
        with contextlib.redirect_stdout(io.StringIO()):  # the peer imports plain hooks into the host: their prints land here
            other = await timed_rounds(
                lambda: [rt.run_skill_hook(f"custom@{skill}", "pre_step", argv, timeout_sec=30) for rt in peer_runtimes],
                rounds)
    return {"semif": semif, "agentsociety2": other}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--agents", type=int, default=50)
    parser.add_argument("--rounds", type=int, default=5)
    args = parser.parse_args()
    peer = agentsociety2()
    print(f"{args.agents} concurrent pre_step hooks ({args.agents} agents, one shared registry)")
    for style, hook in (("entrypoint(argv, ctx)", ENTRYPOINT_HOOK), ("plain script", PLAIN_HOOK)):
        figures = asyncio.run(measure(style, hook, args.agents, args.rounds, peer))
        (our_cold, our_warm, our_ok), (peer_cold, peer_warm, peer_ok) = figures["semif"], figures["agentsociety2"]
        print(f"  {style}")
        print(f"    semif (isolated process)        cold {our_cold * 1000:8.1f} ms   warm {our_warm * 1000:8.1f} ms"
              f"   all ok: {our_ok}")
        print(f"    agentsociety2 {peer['version']} (in-process) cold {peer_cold * 1000:8.1f} ms   warm {peer_warm * 1000:8.1f} ms"
              f"   all ok: {peer_ok}")
        print(f"    warm: semif is {ratio(our_warm, peer_warm)}")


if __name__ == "__main__":
    main()
