"""System V IPC and POSIX message queues: nothing one call leaves there reaches another call or outlives it.

The attack: a call of skill A in workspace 1 leaves a message queue, a 64 MiB shared memory segment and
a POSIX message queue, each holding a payload; a call of skill B in workspace 2, from another pool, reads
them. Each call's process has an IPC namespace of its own (with its PID namespace), so what A made dies
with A: B finds nothing and the host lists nothing. Where a call has no namespaces, seccomp refuses them.
"""

from __future__ import annotations

import ctypes
import json
import os
import secrets
import textwrap

import pytest
from support.catalog_helpers import make_skill

from semif_agent.catalog import AgentSkillRuntime, SkillCatalog
from semif_agent.sandbox import SandboxLimits, WorkerPool, run_subprocess
from semif_agent.sandbox.limits import confinement_spec

pytestmark = pytest.mark.skipif(os.geteuid() != 0, reason="namespaces and the host's IPC listings as root")

PROBE = """
import ctypes, errno, json, os, sys

libc = ctypes.CDLL(None, use_errno=True)
libc.shmat.restype = ctypes.c_void_p
libc.shmat.argtypes = (ctypes.c_int, ctypes.c_void_p, ctypes.c_int)
IPC_CREAT, IPC_NOWAIT, SHM_RDONLY, SEGMENT = 0o1000, 0o4000, 0o10000, 64 << 20


class Message(ctypes.Structure):
    _fields_ = [("kind", ctypes.c_long), ("text", ctypes.c_char * 64)]


def failed():
    return errno.errorcode.get(ctypes.get_errno(), "?")


def leave(queue_key, segment_key, queue_name, payload):
    done = {}
    queue = libc.msgget(queue_key, IPC_CREAT | 0o666)
    message = Message(1, payload.encode())
    done["msg"] = "left" if queue >= 0 and libc.msgsnd(queue, ctypes.byref(message), 64, IPC_NOWAIT) == 0 else failed()
    segment = libc.shmget(segment_key, SEGMENT, IPC_CREAT | 0o666)
    address = libc.shmat(segment, None, 0) if segment >= 0 else None
    if address in (None, ctypes.c_void_p(-1).value):
        done["shm"] = failed()
    else:
        ctypes.memset(address, ord("x"), SEGMENT)  # every page of it made real
        ctypes.memmove(address, payload.encode(), len(payload))
        done["shm"] = "left"
    mq = libc.mq_open(queue_name.encode(), os.O_CREAT | os.O_WRONLY, 0o666, None)
    done["mq"] = "left" if mq >= 0 and libc.mq_send(mq, payload.encode(), len(payload), 0) == 0 else failed()
    return done


def find(queue_key, segment_key, queue_name):
    found = {}
    queue = libc.msgget(queue_key, 0)
    message = Message()
    got = libc.msgrcv(queue, ctypes.byref(message), 64, 0, IPC_NOWAIT) if queue >= 0 else -1
    found["msg"] = message.text.decode() if got > 0 else failed()
    segment = libc.shmget(segment_key, 0, 0)
    address = libc.shmat(segment, None, SHM_RDONLY) if segment >= 0 else None
    found["shm"] = ctypes.string_at(address, 40).decode() if address not in (None, ctypes.c_void_p(-1).value) else failed()
    mq = libc.mq_open(queue_name.encode(), os.O_RDONLY | os.O_NONBLOCK)
    buffer = ctypes.create_string_buffer(8192)
    got = libc.mq_receive(mq, buffer, 8192, None) if mq >= 0 else -1
    found["mq"] = buffer.raw[:got].decode() if got > 0 else failed()
    return found


def main(argv):
    what, queue_key, segment_key, queue_name, payload = argv
    if what == "leave":
        return json.dumps(leave(int(queue_key), int(segment_key), queue_name, payload))
    return json.dumps(find(int(queue_key), int(segment_key), queue_name))


def entrypoint(argv, ctx):
    return main(argv)


if __name__ == "__main__":
    print(main(sys.argv[1:]))
"""


def _host_keys(kind: str) -> set[int]:
    """The keys of the host's System V objects of ``kind`` (``msg``, ``shm``, ``sem``)."""
    with open(f"/proc/sysvipc/{kind}", encoding="ascii") as listing:
        return {int(line.split()[0]) for line in listing.read().splitlines()[1:] if line.split()}


def _host_queue_exists(name: str) -> bool:
    libc = ctypes.CDLL(None, use_errno=True)
    fd = libc.mq_open(name.encode(), os.O_RDONLY | os.O_NONBLOCK)
    if fd < 0:
        return False
    libc.mq_close(fd)
    return True


def _remove_from_host(queue_key: int, segment_key: int, name: str) -> None:
    """What the attack left on the host (on a machine where it worked): removed, so no test leaves it."""
    libc = ctypes.CDLL(None, use_errno=True)
    ipc_rmid = 0
    queue = libc.msgget(queue_key, 0)
    if queue >= 0:
        libc.msgctl(queue, ipc_rmid, None)
    segment = libc.shmget(segment_key, 0, 0)
    if segment >= 0:
        libc.shmctl(segment, ipc_rmid, None)
    libc.mq_unlink(name.encode())


@pytest.fixture
def names():
    queue_key, segment_key = (0x5E000000 | secrets.randbits(20) for _ in range(2))
    name = f"/semif-probe-{secrets.token_hex(6)}"
    yield queue_key, segment_key, name
    _remove_from_host(queue_key, segment_key, name)


def _runtime(skills_root, skill: str, workspace, pool: WorkerPool, limits: SandboxLimits) -> AgentSkillRuntime:
    make_skill(skills_root, skill, files={"probe.py": textwrap.dedent(PROBE)})
    registry = SkillCatalog()
    registry.scan_custom(skills_root)
    runtime = AgentSkillRuntime(skill, registry, limits=limits, worker_pool=pool)
    runtime.bind_workspace(workspace_root=workspace)
    runtime.set_visible_skills([skill])
    return runtime


@pytest.mark.parametrize("how", ["worker", "launcher"])
async def test_what_a_call_leaves_in_ipc_dies_with_it_and_no_other_call_reads_it(tmp_path, worker_pool, names, how):
    """Skill A (workspace 1, one pool) leaves a queue, a 64 MiB segment and a POSIX queue with a payload;
    skill B (workspace 2, another pool) finds none of them, and the host lists none once A's call ended."""
    queue_key, segment_key, name = names
    payload = f"payload-{secrets.token_hex(8)}"
    limits = SandboxLimits(memory_mb=512)
    arguments = [str(queue_key), str(segment_key), name, payload]
    other_pool = WorkerPool(size=1)
    try:
        if how == "worker":
            alpha = _runtime(tmp_path / "skills-a", "alpha", tmp_path / "ws-1", worker_pool, limits)
            beta = _runtime(tmp_path / "skills-b", "beta", tmp_path / "ws-2", other_pool, limits)
            left = await alpha.run_skill_script("alpha", "probe.py", ["leave", *arguments], timeout_sec=30)
            keys_after = (_host_keys("msg"), _host_keys("shm"), _host_queue_exists(name))
            found = await beta.run_skill_script("beta", "probe.py", ["find", *arguments], timeout_sec=30)
        else:
            left = await _launched(tmp_path, "alpha", ["leave", *arguments], limits)
            keys_after = (_host_keys("msg"), _host_keys("shm"), _host_queue_exists(name))
            found = await _launched(tmp_path, "beta", ["find", *arguments], limits)
    finally:
        other_pool.close()
    assert left.ok and found.ok, (left.stderr, found.stderr)
    done = json.loads(left.stdout)
    assert done["msg"] == "left" and done["shm"] == "left", done  # it could use them itself
    assert done["mq"] in ("left", "EACCES"), done  # Landlock refuses making a file in the queues' file system
    assert payload not in found.stdout, found.stdout
    assert queue_key not in keys_after[0] and segment_key not in keys_after[1] and not keys_after[2]
    assert left.confinement["ipc"] == "namespace"


async def _launched(tmp_path, skill: str, argv: list[str], limits: SandboxLimits):
    """A run of ``skill``'s probe in a process of its own (the launcher), in a workspace of its own."""
    folder = make_skill(tmp_path / f"skills-{skill}", skill, files={"probe.py": textwrap.dedent(PROBE)})
    workspace = tmp_path / f"ws-{skill}"
    workspace.mkdir()
    spec = confinement_spec(limits, timeout_sec=30, workspace_root=workspace, skill_dir=folder)
    spec["status_file"] = str(tmp_path / f"status-{skill}")
    env = {"PATH": "/usr/bin:/bin"}
    return await run_subprocess(
        folder / "probe.py", argv, cwd=workspace, env=env, spec=spec, timeout_sec=30, max_output_bytes=65536
    )


async def test_without_namespaces_seccomp_refuses_ipc(tmp_path, worker_pool, names):
    """Where a call has no namespaces (here asked for), System V IPC and POSIX queues are refused: nothing
    is left on the host, and the result says what held."""
    queue_key, segment_key, name = names
    limits = SandboxLimits(memory_mb=512, namespaces=False)
    alpha = _runtime(tmp_path / "skills-a", "alpha", tmp_path / "ws-1", worker_pool, limits)
    arguments = [str(queue_key), str(segment_key), name, "payload"]
    left = await alpha.run_skill_script("alpha", "probe.py", ["leave", *arguments], timeout_sec=30)
    assert left.ok, left.stderr
    assert json.loads(left.stdout) == {"msg": "EPERM", "shm": "EPERM", "mq": "EPERM"}, left.confinement
    assert queue_key not in _host_keys("msg") and segment_key not in _host_keys("shm")
    assert not _host_queue_exists(name)
    assert left.confinement["ipc"] == "seccomp"
