"""The kernel's fences around a confined run: devices, /tmp and /dev/shm, host sockets, memory and disk per run.

Each hostile script runs both ways a script runs (an ``entrypoint`` called in a warm
worker's child, and a whole program run there). What holds where:
- devices: a mount namespace with a minimal ``/dev`` (``view``), no
  capabilities and Landlock without the rights to make nodes (``devices``);
- host UNIX sockets: a seccomp filter refusing ``AF_UNIX`` sockets
  (``local_sockets``), and the network namespace for abstract names;
- memory: one memory cgroup for the run and all it starts (``memory``);
- disk: deleted-but-open files count too.
A test needing a fence skips, naming it, where the run's ``confinement`` says it did not hold.
"""

from __future__ import annotations

import os
import socket
import tempfile
import textwrap
import threading
from pathlib import Path

import pytest
from support.catalog_helpers import make_skill
from support.hostile import forking_payload

from semif_agent.catalog import SkillCatalog
from semif_agent.sandbox import SandboxLimits

MODES = ["script.py", "entry.py"]


def install(skills_root: Path, source: str) -> SkillCatalog:
    """Skill ``probe`` with ``source`` as a plain script and as an ``entrypoint`` script."""
    source = textwrap.dedent(source)
    entry = "def entrypoint(argv, ctx):\n" + textwrap.indent(source, "    ") + "\n    return None\n"
    make_skill(skills_root, "probe", files={"script.py": source, "entry.py": entry})
    registry = SkillCatalog()
    registry.scan_custom(skills_root)
    return registry


def needs(result, kind: str, how: str) -> None:
    if how not in result.confinement.get(kind, ""):
        pytest.skip(f"{kind}={how} does not hold here ({result.confinement.get(kind, 'none')})")


def said(stdout: str) -> dict[str, str]:
    return dict(line.split(" ", 1) for line in stdout.splitlines() if " " in line)


DEVICES = """
import os, stat
def attempt(label, action):
    try:
        print(label, "allowed", repr(action())[:200])
    except OSError as exc:
        print(label, "refused", exc.errno)
tmp = os.environ["TMPDIR"]
attempt("dev", lambda: sorted(os.listdir("/dev")))
attempt("char", lambda: os.mknod(os.path.join(tmp, "c"), 0o600 | stat.S_IFCHR, os.makedev(1, 3)))
attempt("block", lambda: os.mknod(os.path.join(tmp, "b"), 0o600 | stat.S_IFBLK, os.makedev(254, 0)))
attempt("fifo", lambda: os.mkfifo("fifo"))
attempt("kmsg", lambda: open("/dev/kmsg", "rb").read(1))
attempt("proc-kmsg", lambda: open("/proc/kmsg", "rb").read(1))
attempt("cgroups", lambda: os.listdir("/sys/fs/cgroup"))
attempt("shm", lambda: os.listdir("/dev/shm"))
attempt("tmp-secret", lambda: open(SECRET).read())
attempt("shm-write", lambda: open("/dev/shm/mine", "w").write("x"))
attempt("urandom", lambda: len(open("/dev/urandom", "rb").read(8)))
attempt("null", lambda: open("/dev/null", "w").write("x"))
"""


@pytest.mark.parametrize("landlock", [True, False], ids=["landlock", "no-landlock"])
@pytest.mark.parametrize("mode", MODES)
async def test_only_the_devices_a_program_needs_and_no_node_made(skills_root, make_runtime, mode, landlock):
    """Without Landlock too: what the call sees and may make is the mount view's and seccomp's to hold."""
    with (
        tempfile.NamedTemporaryFile("w", dir="/dev/shm", prefix="semif-test-") as shm,
        tempfile.NamedTemporaryFile("w", dir="/tmp", prefix="semif-test-") as secret,
    ):
        secret.write("host secret")
        secret.flush()
        limits = SandboxLimits(memory_mb=512, confine_fs=landlock)
        runtime = make_runtime(install(skills_root, f"SECRET = {secret.name!r}\n" + DEVICES), limits=limits)
        result = await runtime.run_skill_script("probe", mode, [], timeout_sec=20)
        needs(result, "view", "mount-namespace")
        needs(result, "devices", "seccomp")
        seen = said(result.stdout)
        assert result.ok, result.stderr
        listed = eval(seen["dev"].split(" ", 1)[1])  # a list's repr, printed by the probe
        assert set(listed) <= {"null", "zero", "full", "random", "urandom", "tty", "shm", "fd"} | {
            "stdin",
            "stdout",
            "stderr",
        }
        assert {"null", "urandom"} <= set(listed)
        for refused in ("char", "block", "fifo", "kmsg", "tmp-secret"):
            assert seen[refused].startswith("refused"), (refused, seen[refused])
        assert seen["proc-kmsg"] in ("allowed b''", "refused 13")
        assert seen["cgroups"] in ("allowed []", "refused 2") and seen["shm"] == "allowed []"  # empty, or not there
        assert seen["urandom"] == "allowed 8" and seen["shm-write"] == "allowed 1"
        assert os.path.basename(shm.name) not in result.stdout and "host secret" not in result.stdout
        assert seen["tmp-secret"] == "refused 2"  # not there at all in its /tmp
    assert not os.path.exists("/dev/shm/mine")  # its /dev/shm was its own, and went with it
    assert not list(runtime.workspace_root().glob("fifo"))


VIEW = """
import os
print("shm", sorted(os.listdir("/dev/shm")))
open("/dev/shm/left-behind", "w").write("x")
print("run", os.stat("/run").st_dev)
"""


@pytest.mark.skipif(not os.path.isdir("/run") or os.path.islink("/run"), reason="no /run folder on this host")
@pytest.mark.parametrize("mode", MODES)
async def test_each_call_has_its_own_shm_and_the_hosts_run_only_with_the_network(skills_root, make_runtime, mode):
    """The worker makes the shared part of the view once; each call still gets its own /dev/shm, and /run
    is never the host's but for a call allowed the network where the view is not the allow-listed root."""
    registry = install(skills_root, VIEW)
    closed = make_runtime(registry, limits=SandboxLimits(memory_mb=512))
    first = await closed.run_skill_script("probe", mode, [], timeout_sec=20)
    needs(first, "view", "mount-namespace")
    second = await closed.run_skill_script("probe", mode, [], timeout_sec=20)
    assert first.ok and second.ok, (first.stderr, second.stderr)
    assert said(first.stdout)["shm"] == "[]" and said(second.stdout)["shm"] == "[]"  # nothing left by the first
    host_run = str(os.stat("/run").st_dev)
    assert said(second.stdout)["run"] != host_run  # an empty one of its own
    opened = make_runtime(registry, limits=SandboxLimits(memory_mb=512, network=True))
    allowed = await opened.run_skill_script("probe", mode, [], timeout_sec=20)
    needs(allowed, "view", "mount-namespace")
    assert allowed.ok, allowed.stderr
    if allowed.confinement.get("root") != "allow-list":
        assert said(allowed.stdout)["run"] == host_run
    # else the allow-listed root's own /run, with only the resolver's folders there, for this call alone


SOCKETS = """
import socket
def attempt(label, address):
    try:
        client = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        client.settimeout(2)
        client.connect(address)
        print(label, "connected", client.recv(100))
    except OSError as exc:
        print(label, "refused", exc.errno)
    try:
        pair, _other = socket.socketpair(socket.AF_UNIX, socket.SOCK_DGRAM)
        pair.sendto(b"x", address)
        print(label + "-dgram", "sent")
    except OSError as exc:
        print(label + "-dgram", "refused", exc.errno)
for label, address in ADDRESSES.items():
    attempt(label, address)
"""


class Server:
    """A root-only UNIX socket server of the host, counting who connects."""

    def __init__(self, address: str | bytes) -> None:
        self.connections = 0
        self.sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        self.sock.bind(address)
        if isinstance(address, str):
            os.chmod(address, 0o600)
        self.sock.listen()
        self.sock.settimeout(0.2)
        self.running = True
        self.thread = threading.Thread(target=self.serve, daemon=True)
        self.thread.start()

    def serve(self) -> None:
        while self.running:
            try:
                client, _ = self.sock.accept()
            except OSError:
                continue
            self.connections += 1
            client.sendall(b"host secret")
            client.close()

    def close(self) -> None:
        self.running = False
        self.thread.join()
        self.sock.close()


@pytest.fixture
def host_sockets(tmp_path):
    paths = {"tmp": str(tmp_path / "host.sock")}
    if os.access("/run", os.W_OK):
        paths["run"] = f"/run/semif-test-{os.getpid()}.sock"
    servers = {label: Server(path) for label, path in paths.items()}
    abstract = f"\0semif-test-{os.getpid()}"
    servers["abstract"] = Server(abstract.encode())
    yield servers, {**paths, "abstract": abstract}
    for server in servers.values():
        server.close()
    if "run" in paths:
        os.unlink(paths["run"])


@pytest.mark.parametrize("mode", MODES)
async def test_no_unix_socket_of_the_host_is_reachable(skills_root, make_runtime, host_sockets, mode):
    servers, addresses = host_sockets
    runtime = make_runtime(install(skills_root, f"ADDRESSES = {addresses!r}\n" + SOCKETS))
    result = await runtime.run_skill_script("probe", mode, [], timeout_sec=20)
    needs(result, "local_sockets", "seccomp")
    seen = said(result.stdout)
    assert result.ok, result.stderr
    assert set(seen) == {label for name in addresses for label in (name, name + "-dgram")}
    assert all(answer.startswith("refused") for answer in seen.values()), seen
    assert "host secret" not in result.stdout
    assert {label: server.connections for label, server in servers.items()} == dict.fromkeys(servers, 0)


FORKS = forking_payload(6, 100) + 'print("six children of 100 MB each")\n'


@pytest.mark.parametrize("mode", MODES)
async def test_memory_is_capped_for_the_run_and_all_it_starts(skills_root, make_runtime, mode):
    runtime = make_runtime(install(skills_root, FORKS), limits=SandboxLimits(memory_mb=256))
    result = await runtime.run_skill_script("probe", mode, [], timeout_sec=30)
    needs(result, "memory", "cgroup")
    assert (result.ok, result.error_type) == (False, "memory"), result
    assert "ran out of their memory allowance" in result.stderr and "six children" not in result.stdout
    after = await runtime.run_skill_script("probe", mode, [], timeout_sec=30)  # the next run has its whole allowance
    assert after.error_type == "memory"


UNLINKED = """
import os, time
held = open(os.path.join(os.environ["TMPDIR"], "hidden"), "wb")
os.unlink(held.name)
for _ in range(120):
    held.write(b"x" * (1 << 20))
    held.flush()
time.sleep(10)
print("kept 120 MB out of sight")
"""


@pytest.mark.parametrize("mode", MODES)
async def test_a_deleted_file_held_open_counts_against_the_disk_cap(skills_root, make_runtime, mode):
    limits = SandboxLimits(memory_mb=512, max_disk_mb=40, max_file_mb=200)
    runtime = make_runtime(install(skills_root, UNLINKED), limits=limits)
    result = await runtime.run_skill_script("probe", mode, [], timeout_sec=30)
    assert (result.ok, result.error_type) == (False, "disk"), result
    assert "allowance" in result.stderr and "out of sight" not in result.stdout


RECORDS = """
import os, sys
def attempt(label, path):
    try:
        with open(path, "a") as handle:
            handle.write("\\nforged = true\\n")
        print(label, "allowed")
    except OSError as exc:
        print(label, "refused", exc.errno)
for label, path in TARGETS.items():
    attempt(label, path)
drafts = os.path.join(WORKSPACE, "data", "drafts", "note.txt")
attempt("write-dir", drafts)
attempt("scratch", os.path.join(os.environ["TMPDIR"], "scratch.txt"))
"""


@pytest.mark.parametrize("entrypoint", [False, True], ids=["script", "entrypoint"])
def test_a_skill_md_script_writes_its_write_dirs_never_the_records(tmp_path, entrypoint):
    from semif_agent.engine import ScriptedEngine
    from semif_agent.loop import SkillRunner
    from semif_agent.records import OUTCOME_KIND, DecisionLog
    from semif_agent.starter import create_workspace
    from semif_agent.workspace import Workspace

    root = create_workspace(tmp_path / "ws")
    ws = Workspace.load(root)
    targets = {
        "settings": ws.settings_file,
        "categories": ws.categories_path,
        "admitted": ws.admitted_path,
        "log": ws.log_path,
        "data-dir": ws.data_dir / "planted.txt",
        "skills": ws.skills_md_dir / "planted.txt",
        "root": root / "planted.txt",
    }
    source = textwrap.dedent(RECORDS)
    source = f"TARGETS = { ({k: str(v) for k, v in targets.items()})!r}\nWORKSPACE = {str(root)!r}\n" + source
    if entrypoint:
        source = "def entrypoint(argv, ctx):\n" + textwrap.indent(source, "    ")
    folder = root / "skills" / "forger"
    (folder / "scripts").mkdir(parents=True)
    (folder / "SKILL.md").write_text("---\nname: forger\ndescription: Forge.\nscript: scripts/run.py\n---\n# forger\n")
    (folder / "scripts" / "run.py").write_text(source)
    before = {label: path.read_bytes() if path.is_file() else None for label, path in targets.items()}
    runner = SkillRunner(ws, engine=ScriptedEngine(fn=lambda r: r.options[0].id), allow_scripts=True)
    result = runner.run("forge the records", skill="forger")
    log = result.action.action_log
    for label in targets:
        if f"{label} allowed" in log:
            pytest.fail(f"the script wrote {label}: {log}")
    assert "write-dir allowed" in log and "scratch allowed" in log, log
    assert (ws.data_dir / "drafts" / "note.txt").is_file()
    after = {label: path.read_bytes() if path.is_file() else None for label, path in targets.items()}
    assert {k: v for k, v in after.items() if k != "log"} == {k: v for k, v in before.items() if k != "log"}
    rows = list(DecisionLog(ws.log_path).read())
    assert not any("forged" in str(row) for row in rows[:-1]) and rows[-1].kind == OUTCOME_KIND
    assert rows[-1].run_id == result.run_id
