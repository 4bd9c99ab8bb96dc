"""Nothing of one call reaches another: not its payload, result or code in a later call's memory, not a
thread, file or process it leaves in a warm process, and no clean-up of its folder it can turn on the host.

Every call here is an ``entrypoint`` script run through a real pool, as a skill's script is. The
hostile scripts do what a body could: scan their own memory, patch the warm process's own tidying out,
race the worker's clean-up of their folder with a thread, leave a chain of folders 1,100 deep.
"""

from __future__ import annotations

import asyncio
import hashlib
import json
import os
import secrets
from pathlib import Path

import pytest
from support.catalog_helpers import make_skill
from test_sandbox_isolation import NAMESPACES

from semif_agent.catalog import AgentSkillRuntime, SkillCatalog
from semif_agent.sandbox import SandboxLimits, WorkerPool

pytestmark = pytest.mark.skipif(not NAMESPACES, reason="the kernel refuses new PID namespaces here")

PREFIX = "zqx7-"
TELLER = """
SECRET_IN_SOURCE = "zqx7-" + "{secret}"
def entrypoint(argv, ctx):
    return "told " + argv[0] + " and " + SECRET_IN_SOURCE
"""
SCANNER = """
import ctypes, gc, hashlib, os
STEP = 1 << 16
libc = ctypes.CDLL(None, use_errno=True)
libc.sbrk.restype = ctypes.c_void_p
libc.write.argtypes = (ctypes.c_int, ctypes.c_void_p, ctypes.c_size_t)
read_end, write_end = os.pipe()


def chunk_at(address):
    # the process's own memory at address, copied through a pipe: an unmapped address is EFAULT, not a crash
    count = libc.write(write_end, address, STEP)
    data = b""
    while len(data) < max(count, 0):
        data += os.read(read_end, count - len(data))
    return data


def entrypoint(argv, ctx):
    # /proc/self/maps is not in a confined call's view: the memory is found from the C heap's end and from
    # where the interpreter's objects are, each 1 MiB around them
    prefix, length, digests = argv[0].encode(), int(argv[1]), argv[2:-1]  # the last: this call's own marker
    found, looked = {digest: 0 for digest in digests}, 0
    chunks = {id(each) >> 20 << 20 for each in gc.get_objects()}
    chunks = {base + step * STEP for base in chunks for step in range((1 << 20) // STEP)}
    at = libc.sbrk(0) // STEP * STEP
    while at > 0 and len(chunk_at(at)) > 0:
        chunks.add(at)
        at -= STEP
    for address in sorted(chunks):
        data = chunk_at(address) + chunk_at(address + STEP)[:length]
        looked += len(data)
        index = data.find(prefix)
        while index >= 0:
            if hashlib.sha256(data[index + len(prefix) : index + len(prefix) + length]).hexdigest() in found:
                found[hashlib.sha256(data[index + len(prefix) : index + len(prefix) + length]).hexdigest()] += 1
            index = data.find(prefix, index + 1)
    return {"found": list(found.values()), "looked": looked}
"""
WARMER = """
import sys
def entrypoint(argv, ctx):
    found = "inspect" in sys.modules
    import inspect
    return "found" if found else "imported"
"""
COUNTER = """
import json, os, sys
def entrypoint(argv, ctx):
    json.calls_here = getattr(json, "calls_here", 0) + 1
    action = argv[0] if argv else ""
    if action:
        from semif_agent.sandbox import _resident
        _resident.Baseline.restore = lambda self: True  # the process's own tidying, patched out
    if action == "thread":
        import threading, time
        threading.Thread(target=time.sleep, args=(60,), daemon=True).start()
    elif action == "file":
        open("/dev/shm/left", "w").write("x")
    elif action == "descriptor":
        json.kept = os.open("/dev/null", os.O_RDONLY)
    elif action == "posix-timer":
        import ctypes
        json.timer = ctypes.c_void_p()
        ctypes.CDLL(None).timer_create(0, None, ctypes.byref(json.timer))  # CLOCK_REALTIME, SIGALRM once armed
    elif action == "process":
        import subprocess
        subprocess.Popen(["sleep", "60"])
    elif action == "swap":
        swap(argv[1], int(argv[2]))
    elif action == "deep":
        os.chdir(os.environ["TMPDIR"])
        for _ in range(int(argv[1])):
            os.mkdir("d")
            os.chdir("d")
    elif action == "leave":
        open(os.path.join(os.environ["TMPDIR"], "left.txt"), "w").write("x")
        if os.fork() == 0:  # outlives the call for a moment, writing: its folder waits for it to be gone
            os.setsid()
            import time
            for n in range(30000):
                open(os.path.join(os.environ["TMPDIR"], f"late-{n}"), "w").close()
                time.sleep(0.001)
            os._exit(0)
    elif action == "sleep":
        import time
        time.sleep(float(argv[1]))
    return json.dumps({"calls_here": json.calls_here})


def swap(victim, files):
    # a folder of the call's with the victim's file names, and a thread that keeps exchanging its name with
    # a link to the victim's (half the time each) while the worker empties the call's folder
    import ctypes, threading, time
    os.chdir(os.environ["TMPDIR"])
    os.mkdir("a")
    for n in range(files):
        open(os.path.join("a", f"f{n}"), "w").close()
    os.symlink(victim, "l")
    if not hasattr(json, "flips"):
        json.flips = 0
        libc = ctypes.CDLL(None, use_errno=True)
        def flip():
            while True:
                libc.renameat2(-100, b"a", -100, b"l", 2)  # AT_FDCWD, RENAME_EXCHANGE
                json.flips += 1
        threading.Thread(target=flip, daemon=True).start()
    started = json.flips
    while json.flips < started + 1000:  # in full swing when the call ends
        time.sleep(0.001)
"""


@pytest.fixture
def build(tmp_path: Path):
    root = tmp_path / "skills"
    secret = secrets.token_hex(20)
    make_skill(root, "teller", files={"scripts/tell.py": TELLER.replace("{secret}", secret)})
    make_skill(root, "scanner", files={"scripts/scan.py": SCANNER})
    make_skill(root, "counter", files={"scripts/count.py": COUNTER})
    make_skill(root, "warmer", files={"scripts/warm.py": WARMER})
    registry = SkillCatalog()
    registry.scan_custom(root)
    pools: list[WorkerPool] = []

    def runtime(
        agent: int = 1,
        skills: tuple[str, ...] = ("counter",),
        *,
        warm: bool = True,
        ready_children: int = 32,
        **limits_options: object,
    ) -> AgentSkillRuntime:
        if not pools:
            pools.append(WorkerPool(size=1, ready_children=ready_children))
        limits = SandboxLimits(memory_mb=512, warm_processes=warm, **limits_options)  # type: ignore[arg-type] # each test passes limits by name
        built = AgentSkillRuntime(agent, registry, limits=limits, worker_pool=pools[-1])
        built.bind_workspace(workspace_root=tmp_path / f"work-{agent}")
        built.set_visible_skills(list(skills))
        return built

    runtime.secret = secret  # type: ignore[attr-defined] # the marker the tests look for, handed with the factory
    yield runtime
    for pool in pools:
        folder = pool._calls_folder
        pool.close()
        if folder is not None and os.path.isdir(folder):
            _remove_deep(folder)


def _remove_deep(folder: str) -> None:
    """Remove a tree however deep, one level at a time (shutil's recursion stops near a thousand)."""
    home = os.open(".", os.O_RDONLY)
    try:
        os.chdir(folder)
        entered: list[str] = []
        while True:
            below = next((entry.name for entry in os.scandir(".") if entry.is_dir(follow_symlinks=False)), None)
            if below is not None:
                entered.append(below)
                os.chdir(below)
                continue
            for entry in os.scandir("."):
                os.unlink(entry.name)
            if not entered:
                break
            os.chdir("..")
            os.rmdir(entered.pop())
    finally:
        os.fchdir(home)
        os.close(home)
    os.rmdir(folder)


async def run(runtime: AgentSkillRuntime, skill: str, script: str, *argv: str, timeout: float = 10) -> object:
    result = await runtime.run_skill_script(skill, f"scripts/{script}", list(argv), timeout_sec=timeout)
    assert result.ok, (result.error_type, result.stderr)
    assert result.confinement["processes"] == "pid-namespace"
    return json.loads(result.stdout) if result.stdout.startswith("{") else result.stdout


def digest(text: str) -> str:
    return hashlib.sha256(text.encode()).hexdigest()


@pytest.mark.parametrize("ready_children", [32, 0], ids=["forked-ahead", "forked-for-the-call"])
async def test_a_call_finds_nothing_of_another_skills_call_in_its_memory(build, ready_children):
    """Another client's request to another skill, that skill's result and its code are nowhere in the memory
    of a later call's process; that call's own payload is (the scan sees what is there)."""
    teller = build(1, ("teller",), ready_children=ready_children)
    scanner = build(2, ("scanner",))
    told = secrets.token_hex(20)
    for _ in range(3):
        said = await run(teller, "teller", "tell.py", PREFIX + told)
        assert said == f"told {PREFIX}{told} and {PREFIX}{build.secret}"
        await asyncio.sleep(0.3)  # children are forked ahead meanwhile
    own = secrets.token_hex(20)
    digests = (digest(told), digest(build.secret), digest(own))
    seen = await run(scanner, "scanner", "scan.py", PREFIX, "40", *digests, PREFIX + own)
    (request_and_result, code, own_payload), looked = seen["found"], seen["looked"]
    assert own_payload >= 1 and looked > 4_000_000, seen  # the scan finds what the process holds
    assert (request_and_result, code) == (0, 0), seen


@pytest.mark.parametrize("leftover", ["thread", "file", "descriptor", "posix-timer", "process"])
async def test_a_warm_process_that_patches_its_own_checks_out_is_still_retired(build, leftover):
    runtime = build()
    assert (await run(runtime, "counter", "count.py"))["calls_here"] == 1
    assert (await run(runtime, "counter", "count.py", leftover))["calls_here"] == 2
    assert (await run(runtime, "counter", "count.py"))["calls_here"] == 1  # a fresh process


@pytest.mark.slow
async def test_a_thread_racing_the_clean_up_of_its_folder_deletes_nothing_outside(build, tmp_path):
    victim = tmp_path / "victim"
    victim.mkdir()
    names = [f"f{n}" for n in range(2000)]
    for name in names:
        (victim / name).write_text("keep me", encoding="utf-8")
    runtime = build()
    for _ in range(3):
        await run(runtime, "counter", "count.py")
        await run(runtime, "counter", "count.py", "swap", str(victim), str(len(names)))
        await asyncio.sleep(0.2)
    await run(runtime, "counter", "count.py")
    await asyncio.sleep(0.5)  # the retired processes reaped, their folders emptied
    assert sorted(path.name for path in victim.iterdir()) == sorted(names)


@pytest.mark.parametrize("how", ["pid-namespace", "cgroup", "subreaper"])
async def test_a_calls_folder_is_emptied_once_its_processes_are_gone(build, how):
    """Without a PID namespace a call's processes may outlive it for a moment: its folder is emptied (and
    given to a later call) only once they are gone, from its cgroup or as the worker's orphans."""
    options = {"pid-namespace": {}, "cgroup": {"namespaces": False}, "subreaper": {"namespaces": False}}[how]
    if how == "subreaper":
        options["max_processes"] = None
    runtime = build(warm=False, **options)
    pool = runtime._scripts.executor.worker_pool
    result = await runtime.run_skill_script("counter", "scripts/count.py", ["leave"], timeout_sec=10)
    assert result.ok and result.confinement["processes"] == how, result
    folders = [entry.path for entry in os.scandir(pool._calls_folder)]
    for _ in range(100):
        if all(not os.listdir(folder) for folder in folders):
            break
        await asyncio.sleep(0.05)
    assert [os.listdir(folder) for folder in folders] == [[]] * len(folders)


@pytest.mark.slow
@pytest.mark.parametrize("warm", [True, False], ids=["warm", "fresh"])
async def test_a_chain_of_folders_1100_deep_in_a_calls_folder_stops_neither_the_worker_nor_other_calls(build, warm):
    runtime, other = build(warm=warm), build(2)
    await run(runtime, "counter", "count.py")
    in_flight = asyncio.ensure_future(run(other, "counter", "count.py", "sleep", "1.5"))
    await asyncio.sleep(0.3)
    await run(runtime, "counter", "count.py", "deep", "1100")
    await run(runtime, "counter", "count.py")  # after its folder was looked at
    assert (await in_flight)["calls_here"] == 1
    assert (await run(other, "counter", "count.py"))["calls_here"] >= 1


ZYGOTE_CHILD = """
import os, sys
from semif_agent.sandbox import _isolation, _zygote
_isolation.become_subreaper()
if sys.argv[1] == "unknown":  # a machine whose clone call is not known
    _isolation._SYS_CLONE.clear()
zygote = _zygote.start(host_netns=-1, keep=set())
(child,) = zygote.fork([(0, {"processes": "subreaper", "network": "open"}, None)])
with open(f"/proc/{child.pid}/stat") as handle:
    parent = int(handle.read().rsplit(")", 1)[1].split()[1])
os.close(child.control)  # no call: it exits with status 0
print(parent == os.getpid(), os.waitpid(child.pid, 0)[1], child.pid != zygote.pid)
"""


@pytest.mark.parametrize("machine", ["known", "unknown"])
def test_the_zygotes_children_are_the_workers(machine):
    """The process that forks them never parents them: the worker reaps them and reads their exit status."""
    import subprocess
    import sys

    done = subprocess.run([sys.executable, "-c", ZYGOTE_CHILD, machine], capture_output=True, text=True, timeout=30)
    assert done.stdout.split() == ["True", "0", "True"], done.stderr


async def test_a_worker_whose_zygote_is_gone_is_replaced(build):
    runtime = build()
    pool = runtime._scripts.executor.worker_pool
    assert (await run(runtime, "counter", "count.py"))["calls_here"] == 1
    (worker,) = pool.pids
    children = Path(f"/proc/{worker}/task/{worker}/children").read_text().split()
    (zygote,) = [pid for pid in children if len(_nspids(pid)) == 1]  # the one child in the worker's namespace
    os.kill(int(zygote), 9)
    for _ in range(200):
        if worker not in pool.pids:
            break
        await asyncio.sleep(0.05)
    assert worker not in pool.pids
    assert (await run(runtime, "counter", "count.py"))["calls_here"] == 1


def _nspids(pid: str) -> list[str]:
    status = Path(f"/proc/{pid}/status").read_text()
    return next(line.split()[1:] for line in status.splitlines() if line.startswith("NSpid:"))


async def test_what_crosses_to_later_calls_is_the_names_of_standard_modules_they_needed(build):
    """A call that imported a heavy standard module (of a fixed list) has the zygote import it, so the calls
    forked after find it loaded: a name crosses, never a call's code or data."""
    runtime = build(skills=("warmer",), warm=False)
    assert await run(runtime, "warmer", "warm.py") == "imported"
    assert await run(runtime, "warmer", "warm.py") == "found"
