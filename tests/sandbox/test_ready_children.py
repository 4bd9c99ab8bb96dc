"""Children a warm worker forks ahead of its calls: each serves one call, a dead one is replaced, nothing carries over.

The runtimes here turn warm processes off (``warm_processes=False``): a call of a setup that ran before
would otherwise go to the process kept from it (tests/sandbox/test_warm_processes.py), not to a child
forked ahead.

Every call here is an ``entrypoint`` run through a real pool; which process ran it is read
from its PID namespace (each child is the init of its own), and the children waiting are read from ``/proc``.
"""

from __future__ import annotations

import asyncio
import json
import os
import signal
import time
from pathlib import Path

import pytest
from support.catalog_helpers import make_skill
from support.processes import pid_namespaces
from test_sandbox_hostile import wait_dead
from test_sandbox_isolation import NAMESPACES

from semif_agent.catalog import AgentSkillRuntime, SkillCatalog
from semif_agent.sandbox import SandboxLimits, WorkerPool

pytestmark = pytest.mark.skipif(not NAMESPACES, reason="the kernel refuses new PID namespaces here")

PROBE = """
import json, os
def entrypoint(argv, ctx):
    tmp = os.environ["TMPDIR"]
    seen = {
        "pid": os.readlink("/proc/self/ns/pid"),  # each child forked ahead is the init of a PID namespace
        "left": sorted(name for folder in (tmp, "/dev/shm") for name in os.listdir(folder) if "left-" in name),
        "module": "leftover_module" in __import__("sys").modules,
    }
    for folder in (tmp, "/dev/shm"):
        with open(os.path.join(folder, f"left-{seen['pid']}"), "w") as handle:
            handle.write("x")
    __import__("sys").modules["leftover_module"] = os
    os.environ["LEFT_BEHIND"] = "1"
    seen["env"] = sorted(key for key in os.environ if key == "LEFT_BEHIND")
    return json.dumps(seen)
"""


def waiting_children(worker: int) -> set[int]:
    """The worker's children that wait for a call now: those in a PID namespace of their own (the zygote that
    forks them is the worker's child too, in the worker's namespace), without those running one."""
    found = set()
    for task in Path(f"/proc/{worker}/task").iterdir():
        found |= {int(pid) for pid in (task / "children").read_text().split() if _namespaced(int(pid))}
    return found


def _namespaced(pid: int) -> bool:
    try:
        status = Path(f"/proc/{pid}/status").read_text()
    except OSError:
        return False
    return any(line.startswith("NSpid:") and len(line.split()) > 2 for line in status.splitlines())


def settle(worker: int, count: int, seconds: float = 60.0) -> set[int]:
    """Wait until ``worker`` has ``count`` children (those it forked ahead), and return them (generous: a busy
    machine forks late)."""
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        children = waiting_children(worker)
        if len(children) == count:
            return children
        time.sleep(0.02)
    raise AssertionError(f"the worker has {sorted(waiting_children(worker))}, not {count} children waiting")


@pytest.fixture
def probe_runtime(tmp_path: Path):
    root = tmp_path / "skills"
    make_skill(root, "probe", files={"scripts/probe.py": PROBE})
    registry = SkillCatalog()
    registry.scan_custom(root)
    pools: list[WorkerPool] = []

    def build(ready_children: int = 8, *, warm: bool = False) -> tuple[AgentSkillRuntime, WorkerPool]:
        pool = WorkerPool(size=1, ready_children=ready_children)
        pools.append(pool)
        limits = SandboxLimits(memory_mb=512, warm_processes=warm)
        runtime = AgentSkillRuntime(1, registry, limits=limits, worker_pool=pool)
        runtime.bind_workspace(workspace_root=tmp_path / "work")
        runtime.set_visible_skills(["probe"])
        return runtime, pool

    yield build
    for pool in pools:
        pool.close()


async def probe(runtime: AgentSkillRuntime) -> dict:
    result = await runtime.run_skill_script("probe", "scripts/probe.py", [], timeout_sec=10)
    assert result.ok, result.stderr
    assert result.confinement["view"] == "mount-namespace" and result.confinement["filesystem"] == "landlock"
    return json.loads(result.stdout)


async def test_each_call_runs_in_a_child_forked_ahead_that_serves_no_other(probe_runtime):
    runtime, pool = probe_runtime()
    await probe(runtime)
    (worker,) = pool.pids
    served = []
    for _ in range(6):
        # the waiting child by its PID namespace, while it lives (a namespace's number is reused once it is gone)
        waiting = {pid_namespaces({pid}).pop(): pid for pid in await asyncio.to_thread(settle, worker, 1)}
        seen = await probe(runtime)
        assert seen["pid"] in waiting  # no fork on the call's path: a child that waited took it
        served.append(waiting[seen["pid"]])
    assert len(set(served)) == len(served)  # and each served one call only
    assert not [pid for pid in served if pid in waiting_children(worker)]


@pytest.mark.parametrize("warm", [False, True], ids=["fresh", "warm"])
async def test_nothing_a_call_leaves_is_seen_by_the_next(probe_runtime, warm):
    runtime, pool = probe_runtime(warm=warm)
    await probe(runtime)
    (worker,) = pool.pids
    for _ in range(3):
        if not warm:
            await asyncio.to_thread(settle, worker, 1)
        seen = await probe(runtime)
        assert (seen["left"], seen["module"], seen["env"]) == ([], False, ["LEFT_BEHIND"]), seen


async def test_a_child_killed_while_it_waits_is_replaced(probe_runtime):
    runtime, pool = probe_runtime()
    await probe(runtime)
    (worker,) = pool.pids
    waiting = await asyncio.to_thread(settle, worker, 1)
    for pid in waiting:
        os.kill(pid, signal.SIGKILL)
    assert not await asyncio.to_thread(wait_dead, list(waiting))
    seen = await probe(runtime)  # served by a fresh fork, or by a child forked after the kill
    assert seen["left"] == []
    replaced = await asyncio.to_thread(settle, worker, 1)
    assert not replaced & waiting


async def test_a_worker_keeps_as_many_as_the_calls_it_ran_at_once_up_to_its_pools_most(probe_runtime):
    runtime, pool = probe_runtime(ready_children=4)
    await probe(runtime)
    (worker,) = pool.pids
    await asyncio.to_thread(settle, worker, 1)
    served = await asyncio.gather(*(probe(runtime) for _ in range(3)))
    assert len({seen["pid"] for seen in served}) == 3
    await asyncio.to_thread(settle, worker, 3)
    await asyncio.gather(*(probe(runtime) for _ in range(6)))
    await asyncio.to_thread(settle, worker, 4)  # no more than the pool allows
    await probe(runtime)
    await asyncio.sleep(0.3)
    assert len(waiting_children(worker)) == 3  # one used, none forked back: one call ran at once last


async def test_with_none_forked_ahead_every_call_forks_its_own(probe_runtime):
    runtime, pool = probe_runtime(ready_children=0)
    await probe(runtime)
    (worker,) = pool.pids
    await asyncio.sleep(0.2)
    assert waiting_children(worker) == set()
    assert (await probe(runtime))["left"] == []


def test_the_number_forked_ahead_is_checked():
    with pytest.raises(ValueError, match="ready_children"):
        WorkerPool(ready_children=-1)


@pytest.mark.parametrize("style", ["entrypoint", "program"])
async def test_a_script_changed_between_calls_runs_as_it_is_now(tmp_path, style):
    """Each call's process reads and compiles the script as it is then: children forked before a change run the new one."""
    root = tmp_path / "skills"
    source = {
        "entrypoint": "def entrypoint(argv, ctx):\n    return 'version {n}'\n",
        "program": "print('version {n}')\n",
    }[style]
    script = make_skill(root, "changing", files={"scripts/run.py": source.format(n=1)}) / "scripts" / "run.py"
    registry = SkillCatalog()
    registry.scan_custom(root)
    pool = WorkerPool(size=1, ready_children=4)
    try:
        runtime = AgentSkillRuntime(1, registry, limits=SandboxLimits(memory_mb=512), worker_pool=pool)
        runtime.bind_workspace(workspace_root=tmp_path / "work")
        runtime.set_visible_skills(["changing"])
        outputs = []
        for text in (None, source.format(n=2), "def broken(:\n", source.format(n=4) + "\n"):
            if text is not None:
                script.write_text(text, encoding="utf-8")
            await asyncio.sleep(0.2)  # children forked ahead meanwhile, with what the worker compiled before
            result = await runtime.run_skill_script("changing", "scripts/run.py", [], timeout_sec=10)
            outputs.append((result.ok, result.stdout.strip() or result.stderr.strip().splitlines()[-1]))
    finally:
        pool.close()
    assert outputs[0] == (True, "version 1") and outputs[1] == (True, "version 2"), outputs
    assert outputs[2][0] is False and "SyntaxError" in outputs[2][1], outputs
    assert outputs[3] == (True, "version 4"), outputs
