"""A run's processes, its process count, what it writes and its network, both ways a script runs.

Every test runs a plain script (a fresh confined process) and an
``entrypoint`` (a warm worker's child). Where the kernel lacks what a test
needs it is skipped with the reason; on Linux with namespaces, a writable
``pids`` cgroup and Landlock 4+ they all run.
"""

from __future__ import annotations

import os
import socket
import threading
import time
from pathlib import Path

import pytest
from support.catalog_helpers import make_skill
from support.processes import SELF, host_pid
from test_sandbox_hostile import alive, wait_dead

from semif_agent.catalog import SkillCatalog
from semif_agent.sandbox import SandboxLimits, _cgroup
from semif_agent.sandbox._confine import landlock_abi


def _namespaces_allowed() -> bool:
    pid = os.fork()
    if pid == 0:
        from semif_agent.sandbox import _isolation

        try:
            ok = os.geteuid() == 0 or _isolation.enter_user_namespace()
            child = _isolation.fork_namespaced(_isolation.CLONE_NEWPID | _isolation.CLONE_NEWNET) if ok else -1
        except OSError:
            child = -1
        if child == 0:
            os._exit(0)
        os._exit(0 if child > 0 and os.waitpid(child, 0)[1] == 0 else 1)
    return os.waitpid(pid, 0)[1] == 0


NAMESPACES = _namespaces_allowed()
CGROUP = _cgroup.pids_base() is not None
needs_namespaces = pytest.mark.skipif(not NAMESPACES, reason="the kernel refuses new PID and network namespaces here")
needs_process_cap = pytest.mark.skipif(
    os.geteuid() == 0 and not CGROUP, reason="running as root with no writable pids cgroup: nothing caps processes"
)
needs_landlock_net = pytest.mark.skipif(landlock_abi() < 4, reason="Landlock before ABI 4 cannot refuse TCP")

ESCAPE = """
import os, sys, time
def escape(hang):
    first = os.fork()
    if first == 0:
        os.setsid()  # a new session and process group, then a double fork: the grandchild's parent is gone
        if os.fork() == 0:
            open("escaped.tmp", "w").write(SAY_SELF)
            os.rename("escaped.tmp", "escaped.pid")
            time.sleep(120)
        os._exit(0)
    os.waitpid(first, 0)
    while not os.path.exists("escaped.pid"):
        time.sleep(0.01)
    if hang:
        time.sleep(120)
    return "escaped"
"""
BOMB = """
import os, time
def bomb(count):
    made = 0
    try:
        for _ in range(count):
            if os.fork() == 0:
                time.sleep(60)
                os._exit(0)
            made += 1
    except OSError as exc:
        return f"refused after {made}"
    return f"made {made}"
"""
RECURSIVE_BOMB = """
import os
def bomb(count):
    while True:
        try:
            os.fork()
        except OSError:
            pass
"""
FILL = """
import os
def fill(count):
    for index in range(int(count)):
        with open(f"fill-{index}.bin", "wb") as out:
            out.write(b"x" * (1024 * 1024))
            os.fsync(out.fileno())  # at the disk's pace, not the page cache's: the watcher looks every 0.1 s or so
    return "wrote everything"
"""
NET = """
import socket
def probe(tcp_port, udp_port):
    report = []
    try:
        socket.create_connection(("127.0.0.1", int(tcp_port)), timeout=2).close()
        report.append("tcp:connected")
    except OSError as exc:
        report.append("tcp:refused")
    try:
        udp = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
        udp.sendto(b"ping", ("127.0.0.1", int(udp_port)))
        report.append("udp:sent")
    except OSError:
        report.append("udp:refused")
    return " ".join(report)
"""
SECRETS = """
def peek(*paths):
    report = []
    for path in paths:
        try:
            with open(path) as handle:
                report.append("root-line" if "root:" in handle.read() else "empty")
        except OSError:
            report.append("refused")
    return " ".join(report)
"""
FUNCTIONS = {
    "peek": (SECRETS, "peek(*ARGS)"),
    "escape": (ESCAPE.replace("SAY_SELF", SELF), "escape(len(ARGS) > 0 and ARGS[0] == 'hang')"),
    "bomb": (BOMB, "bomb(int(ARGS[0]))"),
    "rbomb": (RECURSIVE_BOMB, "bomb(0)"),
    "fill": (FILL, "fill(ARGS[0])"),
    "net": (NET, "probe(*ARGS)"),
}


@pytest.fixture
def registry(skills_root: Path) -> SkillCatalog:
    files = {}
    for name, (body, call) in FUNCTIONS.items():
        files[f"{name}.py"] = body + f"import sys\nARGS = sys.argv[1:]\nprint({call})\n"
        files[f"{name}_entry.py"] = body + f"def entrypoint(ARGS, ctx):\n    return {call}\n"
    make_skill(skills_root, "box", files=files)
    registry = SkillCatalog()
    registry.scan_custom(skills_root)
    return registry


MODES = {
    "namespace": ({}, "pid-namespace"),
    "cgroup": ({"namespaces": False}, "cgroup"),
    "subreaper": ({"namespaces": False, "max_processes": None}, "subreaper"),
}


@pytest.mark.parametrize("style", ["", "_entry"])
@pytest.mark.parametrize("ending", ["exit", pytest.param("timeout", marks=pytest.mark.slow)])
@pytest.mark.parametrize("mode", list(MODES))
async def test_a_setsid_double_fork_dies_with_the_run(registry, make_runtime, style, ending, mode):
    settings, holder = MODES[mode]
    if mode == "namespace" and not NAMESPACES:
        pytest.skip("the kernel refuses new PID namespaces here")
    if mode == "cgroup" and not CGROUP:
        pytest.skip("no writable pids cgroup")
    runtime = make_runtime(registry, limits=SandboxLimits(memory_mb=512, **settings))
    argv = ["hang"] if ending == "timeout" else []
    result = await runtime.run_skill_script(
        "box", f"escape{style}.py", argv, timeout_sec=2 if ending == "timeout" else 20
    )
    assert result.error_type == ("timeout" if ending == "timeout" else "none"), result
    assert result.confinement["processes"] == holder
    escaped = host_pid((runtime.workspace_root() / "escaped.pid").read_text())
    assert escaped is None or wait_dead([escaped]) == [], f"process {escaped} outlived its run"


@needs_process_cap
@pytest.mark.parametrize("style", ["", "_entry"])
async def test_a_fork_bomb_hits_the_process_cap(registry, make_runtime, style):
    runtime = make_runtime(registry, limits=SandboxLimits(memory_mb=512, max_processes=12))
    result = await runtime.run_skill_script("box", f"bomb{style}.py", ["200"], timeout_sec=20)
    assert result.ok and result.stdout.strip().startswith("refused after"), result
    assert int(result.stdout.split()[-1]) < 12
    if os.geteuid() == 0:
        assert result.confinement["process_limit"] == "cgroup"


@needs_process_cap
@pytest.mark.parametrize("style", ["", "_entry"])
@pytest.mark.slow
async def test_a_recursive_fork_bomb_is_contained_and_killed(registry, make_runtime, style, worker_pool):
    runtime = make_runtime(registry, limits=SandboxLimits(memory_mb=512, max_processes=24))
    result = await runtime.run_skill_script("box", f"rbomb{style}.py", [], timeout_sec=1.5)
    assert result.error_type == "timeout", result
    after = await runtime.run_skill_script("box", f"bomb{style}.py", ["3"], timeout_sec=20)
    assert after.ok and after.stdout.strip() == "made 3", after
    assert all(alive(pid) for pid in worker_pool.pids)


@pytest.mark.parametrize("style", ["", "_entry"])
async def test_writing_past_the_disk_allowance_kills_the_run(registry, make_runtime, style):
    runtime = make_runtime(registry, limits=SandboxLimits(memory_mb=512, max_disk_mb=8, max_file_mb=2))
    result = await runtime.run_skill_script("box", f"fill{style}.py", ["400"], timeout_sec=30)
    assert (result.ok, result.error_type) == (False, "disk"), result
    assert "over its 8 MB allowance" in result.stderr and "wrote everything" not in result.stdout
    written = sum(path.stat().st_size for path in runtime.workspace_root().glob("fill-*.bin"))
    assert 8 * 1024 * 1024 < written < 400 * 1024 * 1024
    small = await runtime.run_skill_script("box", f"fill{style}.py", ["3"], timeout_sec=30)
    assert small.ok and small.confinement["disk"] == "watched", small


@pytest.mark.skipif(landlock_abi() < 1, reason="the kernel has no Landlock: file access is not confined")
@pytest.mark.skipif(not os.path.exists("/etc/shadow"), reason="this system has no /etc/shadow")
@pytest.mark.parametrize("style", ["", "_entry"])
async def test_the_secrets_of_etc_stay_hidden_while_the_rest_is_readable(registry, make_runtime, style):
    runtime = make_runtime(registry)
    result = await runtime.run_skill_script("box", f"peek{style}.py", ["/etc/shadow", "/etc/passwd"], timeout_sec=20)
    shadow, passwd = result.stdout.split()
    assert shadow in {"refused", "empty"} and passwd == "root-line", result


class _LocalServers:
    """A TCP listener and a UDP socket on 127.0.0.1 in the host, counting what reaches them."""

    def __init__(self) -> None:
        self.tcp = socket.create_server(("127.0.0.1", 0))
        self.udp = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
        self.udp.bind(("127.0.0.1", 0))
        self.udp.settimeout(0.5)
        self.accepted = 0
        self.thread = threading.Thread(target=self._accept, daemon=True)
        self.thread.start()

    @property
    def ports(self) -> list[str]:
        return [str(self.tcp.getsockname()[1]), str(self.udp.getsockname()[1])]

    def _accept(self) -> None:
        try:
            while True:
                connection, _address = self.tcp.accept()
                self.accepted += 1
                connection.close()
        except OSError:
            return

    def accepted_once(self, count: int, seconds: float = 30.0) -> int:
        """The connections taken, once ``count`` were or ``seconds`` passed: a client's connect returns before
        the listening thread has accepted (and counted) it."""
        deadline = time.monotonic() + seconds
        while self.accepted < count and time.monotonic() < deadline:
            time.sleep(0.01)
        return self.accepted

    def datagrams(self) -> int:
        count = 0
        try:
            while True:
                self.udp.recv(100)
                count += 1
        except OSError:
            return count

    def close(self) -> None:
        self.tcp.close()
        self.udp.close()


@pytest.fixture
def servers():
    local = _LocalServers()
    yield local
    local.close()


@needs_namespaces
@pytest.mark.parametrize("style", ["", "_entry"])
async def test_the_network_is_denied(registry, make_runtime, servers, style):
    runtime = make_runtime(registry)
    result = await runtime.run_skill_script("box", f"net{style}.py", servers.ports, timeout_sec=20)
    assert result.ok, result
    assert "tcp:refused" in result.stdout
    assert servers.accepted == 0 and servers.datagrams() == 0
    assert result.confinement["network"] == "namespace"


@needs_landlock_net
@pytest.mark.parametrize("style", ["", "_entry"])
async def test_without_namespaces_landlock_still_refuses_tcp(registry, make_runtime, servers, style):
    runtime = make_runtime(registry, limits=SandboxLimits(memory_mb=512, namespaces=False))
    result = await runtime.run_skill_script("box", f"net{style}.py", servers.ports, timeout_sec=20)
    assert result.ok and "tcp:refused" in result.stdout, result
    assert servers.accepted == 0
    assert (result.confinement["network"], result.confinement["tcp"]) == ("open", "landlock")


@pytest.mark.skipif(
    os.geteuid() != 0 and NAMESPACES, reason="a worker in a user namespace cannot rejoin the host's network"
)
@pytest.mark.parametrize("style", ["", "_entry"])
async def test_a_run_allowed_the_network_reaches_it(registry, make_runtime, servers, style):
    runtime = make_runtime(registry, limits=SandboxLimits(memory_mb=512, network=True))
    result = await runtime.run_skill_script("box", f"net{style}.py", servers.ports, timeout_sec=20)
    assert result.ok and result.stdout.split() == ["tcp:connected", "udp:sent"], result
    assert servers.accepted_once(1) == 1 and servers.datagrams() == 1
    assert result.confinement["network"] == "allowed" and "tcp" not in result.confinement
