"""Warm processes: calls of one setup run one after another in one confined process, put back between them.

Every call here runs a skill script through a real pool. Whether two calls ran in one process is read
from a counter the script keeps on a system module (``json``), which is what a warm process keeps;
everything else a call leaves must be gone, or the process must not serve again.
"""

from __future__ import annotations

import asyncio
import json
import os
from pathlib import Path

import pytest
from support.catalog_helpers import make_skill
from test_sandbox_isolation import NAMESPACES

from semif_agent.catalog import AgentSkillRuntime, SkillCatalog
from semif_agent.sandbox import SandboxLimits, WorkerPool, _cgroup
from semif_agent.sandbox._messages import Heard
from semif_agent.sandbox._resident import Resident, Residents

pytestmark = pytest.mark.skipif(not NAMESPACES, reason="the kernel refuses new PID namespaces here")

COUNTER = """
import json, os, sys
def entrypoint(argv, ctx):
    json.calls_here = getattr(json, "calls_here", 0) + 1
    action = argv[0] if argv else ""
    seen = {"calls_here": json.calls_here, "cwd": os.getcwd(), "tmp": sorted(os.listdir(os.environ["TMPDIR"]))}
    seen["env"] = os.environ.get("LEFT_BEHIND")
    seen["path"] = [entry for entry in sys.path if entry.endswith("left-behind")]
    seen["alias"] = "left_alias" in sys.modules
    import helper
    seen["helper"] = helper.VALUE
    helper.VALUE = "changed by a call"
    if action == "leave":
        open(os.path.join(os.environ["TMPDIR"], "left.txt"), "w").write("x")
        os.environ["LEFT_BEHIND"] = "1"
        sys.path.append("/left-behind")
        sys.modules["left_alias"] = os
        os.chdir(os.environ["TMPDIR"])
    elif action == "thread":
        import threading, time
        threading.Thread(target=time.sleep, args=(30,), daemon=True).start()
    elif action == "descriptor":
        json.kept_open = open(os.devnull)
    elif action == "shm":
        open("/dev/shm/left", "w").write("x")
    elif action == "alarm":
        import signal
        signal.signal(signal.SIGALRM, signal.SIG_IGN)
        signal.alarm(100)
    elif action == "child":
        import subprocess
        json.child = subprocess.Popen(["sleep", "30"]).pid
    elif action == "child-gone":
        try:
            os.kill(json.child, 0)
            seen["child"] = "alive"
        except ProcessLookupError:
            seen["child"] = "gone"
    elif action == "sleep":
        import time
        time.sleep(30)
    elif action == "exit":
        os._exit(3)
    elif action == "raise":
        raise ValueError("a bad step")
    elif action in ("forge", "forge-after-fork"):
        import gc, time
        from semif_agent.sandbox.channel import Channel
        channel = next(found for found in gc.get_objects() if isinstance(found, Channel))
        if action == "forge-after-fork" and os.fork() == 0:
            time.sleep(30)
            os._exit(0)
        channel.report("D", {"call": channel.call_id, "code": 0, "keep": True})  # says its call ended, goes on
        time.sleep(0.1)  # stopped here, as a rule: a process stopped with a file open would be retired instead
        for _ in range(150):
            with open(os.path.join(ctx.workspace_root, "after.txt"), "a") as handle:
                handle.write("x")
            time.sleep(0.01)
    print(json.dumps(seen))
"""
PLAIN = """
import json, sys
json.calls_here = getattr(json, "calls_here", 0) + 1
print(json.calls_here, *sys.argv[1:])
"""


@pytest.fixture
def make_runtime(tmp_path: Path):
    root = tmp_path / "skills"
    files = {"scripts/count.py": COUNTER, "scripts/helper.py": "VALUE = 'first'\n", "scripts/plain.py": PLAIN}
    make_skill(root, "counter", files=files)
    registry = SkillCatalog()
    registry.scan_custom(root)
    pools: list[WorkerPool] = []

    def build(agent: int = 1, *, warm: bool = True, **pool_options: float) -> AgentSkillRuntime:
        if pool_options or not pools:
            pools.append(WorkerPool(size=1, **pool_options))  # type: ignore[arg-type] # numbers, checked there
        pool = pools[-1]
        limits = SandboxLimits(memory_mb=512, warm_processes=warm)
        runtime = AgentSkillRuntime(agent, registry, limits=limits, worker_pool=pool)
        runtime.bind_workspace(workspace_root=tmp_path / f"work-{agent}")
        runtime.set_visible_skills(["counter"])
        return runtime

    yield build
    for pool in pools:
        pool.close()


async def run(runtime: AgentSkillRuntime, *argv: str, script: str = "scripts/count.py", timeout: float = 5) -> dict:
    result = await runtime.run_skill_script("counter", script, list(argv), timeout_sec=timeout)
    assert result.ok, (result.error_type, result.stderr)
    assert result.confinement["processes"] == "pid-namespace" and result.confinement["filesystem"] == "landlock"
    return json.loads(result.stdout) if script.endswith("count.py") else {"out": result.stdout.split()}


async def test_calls_of_one_setup_run_in_one_process_and_fresh_ones_without(make_runtime):
    warm = make_runtime()
    assert [(await run(warm))["calls_here"] for _ in range(4)] == [1, 2, 3, 4]
    fresh = make_runtime(2, warm=False)
    assert [(await run(fresh))["calls_here"] for _ in range(3)] == [1, 1, 1]


async def test_what_a_call_leaves_is_put_back_before_the_next(make_runtime, tmp_path):
    runtime = make_runtime()
    first = await run(runtime, "leave")
    helper = tmp_path / "skills" / "counter" / "scripts" / "helper.py"
    helper.write_text("VALUE = 'edited'\n", encoding="utf-8")
    second = await run(runtime)
    assert second["calls_here"] == first["calls_here"] + 1  # the same process
    assert second["cwd"] == str(tmp_path / "work-1") and second["tmp"] == []
    assert (second["env"], second["path"], second["alias"]) == (None, [], False)
    assert second["helper"] == "edited"  # the skill's own module imported anew from disk, not kept


@pytest.mark.parametrize("leftover", ["thread", "descriptor", "shm", "alarm"])
async def test_what_cannot_be_put_back_retires_the_process(make_runtime, leftover):
    runtime = make_runtime()
    await run(runtime)
    assert (await run(runtime, leftover))["calls_here"] == 2
    assert (await run(runtime))["calls_here"] == 1  # a fresh process
    assert (await run(runtime))["calls_here"] == 2


async def test_the_processes_a_call_started_are_killed_when_it_ends(make_runtime):
    runtime = make_runtime()
    await run(runtime, "child")
    seen = await run(runtime, "child-gone")
    assert (seen["calls_here"], seen["child"]) == (2, "gone")


@pytest.mark.parametrize("failure", ["sleep", "exit"])
async def test_a_call_that_fails_ends_its_process_and_the_next_starts_fresh(make_runtime, failure):
    runtime = make_runtime()
    assert (await run(runtime, timeout=2))["calls_here"] == 1
    result = await runtime.run_skill_script("counter", "scripts/count.py", [failure], timeout_sec=2)
    assert not result.ok
    assert result.error_type == ("timeout" if failure == "sleep" else "exit") and result.stdout == ""
    assert (await run(runtime, timeout=2))["calls_here"] == 1  # the same setup, in a fresh process


async def test_an_exception_is_an_outcome_and_the_process_stays(make_runtime):
    runtime = make_runtime()
    await run(runtime)
    raised = await runtime.run_skill_script("counter", "scripts/count.py", ["raise"], timeout_sec=5)
    assert raised.error_type == "exception" and "ValueError: a bad step" in raised.stderr
    assert (await run(runtime))["calls_here"] == 3


async def test_two_agents_never_share_a_process(make_runtime):
    one, two = make_runtime(1), make_runtime(2)
    counts = [(await run(runtime))["calls_here"] for runtime in (one, two, one, two, one)]
    assert counts == [1, 1, 2, 2, 3]


async def test_each_call_has_its_own_output_and_calls_at_once_each_get_a_process(make_runtime):
    runtime = make_runtime()
    outputs = [await run(runtime, str(n), script="scripts/plain.py") for n in range(3)]
    assert [seen["out"] for seen in outputs] == [["1", "0"], ["2", "1"], ["3", "2"]]
    burst = await asyncio.gather(*(run(runtime, str(n), script="scripts/plain.py") for n in range(6)))
    assert [seen["out"][1] for seen in burst] == [str(n) for n in range(6)]
    assert max(int(seen["out"][0]) for seen in burst) >= 4  # the warm one served at least one of them


def test_only_a_call_that_may_stay_ends_with_a_line():
    ending = b'D{"call": 1, "code": 0, "keep": true}'
    with pytest.raises(ValueError, match="end of call"):
        Heard(1, 1000).take(ending, ())
    assert Heard(1, 1000, may_end=True).take(ending, ()) == ("done", (0, True))
    asking = Heard(1, 1000, may_end=True)
    asking.take(b'A{"q": 1}', ())
    with pytest.raises(ValueError, match="end of call"):
        asking.take(ending, ())
    with pytest.raises(ValueError, match="whole number"):
        Heard(1, 1000, may_end=True).take(b'D{"call": 1, "code": "0", "keep": true}', ())
    with pytest.raises(ValueError, match="another call"):
        Heard(2, 1000, may_end=True).take(ending, ())
    confined = Heard(2, 1000, may_end=True, confined=True)
    with pytest.raises(ValueError, match="first line"):
        confined.take(b'C{"processes": "pid-namespace"}', ())


async def test_a_process_idle_too_long_is_let_go_and_none_is_kept_when_the_pool_keeps_none(make_runtime):
    briefly = make_runtime(warm_idle_sec=1.0)
    assert [(await run(briefly))["calls_here"] for _ in range(2)] == [1, 2]
    await asyncio.sleep(2.0)
    assert (await run(briefly))["calls_here"] == 1
    never = make_runtime(2, warm_most=0)
    assert [(await run(never))["calls_here"] for _ in range(3)] == [1, 1, 1]


async def test_code_that_ends_its_call_early_is_stopped_until_the_next_call(make_runtime, tmp_path):
    """A call's code can forge the line that ends its call; it then does nothing until the next call, and
    what it does then is under that call's deadline (here it ends the call: its output is nothing). It is
    judged from outside before that (nothing left open, no thread: it may serve)."""
    runtime = make_runtime()
    await run(runtime)
    forged = await runtime.run_skill_script("counter", "scripts/count.py", ["forge"], timeout_sec=5)
    assert forged.ok and forged.stdout == ""
    written = tmp_path / "work-1" / "after.txt"

    def size() -> int:
        return written.stat().st_size if written.exists() else 0

    stopped, waited = -1, 0.0
    while size() != stopped and waited < 5:  # until the worker has stopped it (at once, unless very busy)
        stopped = size()
        await asyncio.sleep(0.3)
        waited += 0.3
    await asyncio.sleep(0.5)
    assert size() == stopped < 150  # still stopped, long before its loop would end
    later = await runtime.run_skill_script("counter", "scripts/count.py", [], timeout_sec=5)
    assert size() > stopped  # it went on only once handed the next call, and then
    assert later.error_type == "channel" and "an end of another call" in later.stderr, later  # ended the forged one
    assert (await run(runtime))["calls_here"] == 1  # it was let go: the next call gets a fresh process


async def test_code_that_ends_its_call_early_with_a_process_running_is_let_go(make_runtime):
    runtime = make_runtime()
    await run(runtime)
    forged = await runtime.run_skill_script("counter", "scripts/count.py", ["forge-after-fork"], timeout_sec=5)
    assert forged.ok
    assert (await run(runtime))["calls_here"] == 1  # not alone in its cgroup: not kept


def test_waiting_processes_that_started_something_are_found_and_no_longer_handed_calls():
    residents = Residents()
    for pid in (101, 102):
        residents.may_stay(pid, "setup")
        residents.wait(Resident(pid, (0, 0, 0, 0), {}, f"slot-{pid}", f"/tmp/run-{pid}"))
    with_stray = {"slot-102"}
    assert residents.strays(lambda pid, slot: slot not in with_stray, now=10.0) == [residents.alive[102]]
    assert residents.strays(lambda pid, slot: False, now=10.1) == []  # looked at again only later
    assert [found.pid for found in residents.strays(lambda pid, slot: False, now=11.0)] == [101]
    assert residents.take("setup") is None and residents.next_expiry() == float("inf")


def _held_by(pool: WorkerPool) -> tuple[int, int]:
    """The worker's open descriptors, and the cgroups this test's workers and calls have (0 without cgroups)."""
    (pid,) = pool.pids
    parent = _cgroup.host_parent()
    return len(os.listdir(f"/proc/{pid}/fd")), sum(len(folders) for _, folders, _ in os.walk(parent or "/nowhere"))


async def test_a_process_that_retires_gives_back_its_pipes_and_cgroup(make_runtime):
    runtime = make_runtime()
    pool = runtime._scripts.executor.worker_pool
    for _ in range(2):
        await run(runtime)
        await run(runtime, "thread")  # its process retires after the call
    await asyncio.sleep(0.2)  # reaped
    before = _held_by(pool)
    for _ in range(8):
        await run(runtime)
        await run(runtime, "thread")
    await asyncio.sleep(0.2)
    descriptors, cgroups = _held_by(pool)
    # each process let go held 6 descriptors and a cgroup; a child forked ahead (2 and 1) may be there or not
    assert descriptors <= before[0] + 2 and cgroups <= before[1] + 1


async def test_calls_that_end_their_process_as_they_end_are_told_apart_in_a_burst(make_runtime):
    """A process that cannot serve again says its call ended, then exits: the worker may see it exit before
    it reads that line. Each call still gets its own outcome, and the worker goes on."""
    runtime = make_runtime()
    for _ in range(4):
        burst = await asyncio.gather(*(run(runtime, "thread") for _ in range(8)))  # each one ok
        assert [seen["calls_here"] for seen in burst] == [1] * 8  # each in a process of its own, which retires
    assert (await run(runtime))["calls_here"] == 1
