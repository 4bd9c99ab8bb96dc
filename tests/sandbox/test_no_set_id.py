"""No set-uid or set-gid program comes out of a confined call.

A call's write dirs are idmapped: what it makes there is root's on disk. A set-uid bit on such a file
would be a root program for every user of the host, ``nosuid`` holding only inside the call's own view.
The seccomp filter refuses every way of setting the bit (a mode change, a file created with it), and a
set-uid file of the system folders cannot be linked or moved into a write dir (another mount).
"""

from __future__ import annotations

import ctypes
import errno
import json
import os
import shutil
import stat
import subprocess
import tempfile
import textwrap

import pytest
from support.catalog_helpers import make_skill

from semif_agent.catalog import SkillCatalog
from semif_agent.sandbox import SandboxLimits, run_subprocess
from semif_agent.sandbox._privileges import _filter_program, _machine_numbers, forbid_local_sockets
from semif_agent.sandbox.limits import confinement_spec
from semif_agent.workspace import Workspace

pytestmark = pytest.mark.skipif(os.geteuid() != 0, reason="the write dirs are idmapped to root's files as root only")

SET_UID_SYSTEM_FILE = next(
    (path for path in ("/usr/bin/passwd", "/usr/bin/su", "/usr/bin/mount") if os.stat(path).st_mode & stat.S_ISUID),
    None,
)

ATTACK = """
import errno, json, os, shutil, subprocess, sys

out, system_file = sys.argv[1], sys.argv[2]
tried = {}


def attempt(name, action):
    try:
        result = action()
        tried[name] = "done" if result is None or result == 0 else f"status {result}"
    except OSError as exc:
        tried[name] = errno.errorcode.get(exc.errno, str(exc.errno))


def run(*command):
    return subprocess.run(command, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL).returncode


def created(path, mode):
    fd = os.open(path, os.O_CREAT | os.O_WRONLY, mode)
    with open("/usr/bin/id", "rb") as source:
        os.write(fd, source.read())
    os.close(fd)


shutil.copyfile("/usr/bin/id", f"{out}/id")
os.chmod(f"{out}/id", 0o755)
attempt("chmod command", lambda: run("chmod", "06755", f"{out}/id"))
shutil.copyfile("/usr/bin/id", f"{out}/id-python")
attempt("os.chmod", lambda: os.chmod(f"{out}/id-python", 0o6755))
attempt("open with the mode", lambda: created(f"{out}/id-open", 0o6755))
attempt("install -m 4755", lambda: run("install", "-m", "4755", "/usr/bin/id", f"{out}/id-install"))
attempt("cp -p", lambda: run("cp", "-p", system_file, f"{out}/copied-p"))
attempt("shutil.copy2", lambda: shutil.copy2(system_file, f"{out}/copied2"))
attempt("link", lambda: os.link(system_file, f"{out}/linked"))
attempt("rename", lambda: os.rename(system_file, f"{out}/moved"))
capability = bytes.fromhex("01000002" + "ffffffff" + "00000000" + "ffffffff" + "00000000")  # v2, every capability
attempt("security.capability", lambda: os.setxattr(f"{out}/id", "security.capability", capability))
print(json.dumps(tried))
"""


def _set_id_files(folder) -> list[str]:
    found = []
    for path in folder.rglob("*"):
        mode = path.lstat().st_mode
        if stat.S_ISREG(mode) and mode & (stat.S_ISUID | stat.S_ISGID):
            found.append(f"{path.name} {stat.filemode(mode)}")
    return found


def _capabilities(folder) -> list[str]:
    found = []
    for path in folder.rglob("*"):
        try:
            os.getxattr(path, "security.capability", follow_symlinks=False)
        except OSError:
            continue
        found.append(path.name)
    return found


def _euid_for_another_user(program) -> str:
    """What ``program -u`` prints run by user 65534, from a folder that user may enter (a link to it)."""
    with tempfile.TemporaryDirectory(dir=program.parent.anchor + "tmp") as folder:
        os.chmod(folder, 0o755)
        reachable = os.path.join(folder, "program")
        os.link(program, reachable)  # the same file, its owner and mode; the test's own folders are root's only
        command = ["setpriv", "--reuid=65534", "--regid=65534", "--clear-groups", reachable, "-u"]
        ran = subprocess.run(command, capture_output=True, text=True, timeout=10)
    return ran.stdout.strip() or ran.stderr


@pytest.mark.skipif(
    SET_UID_SYSTEM_FILE is None or not shutil.which("setpriv"), reason="needs setpriv and a set-uid file"
)
@pytest.mark.parametrize("how", ["worker", "launcher"])
async def test_a_call_leaves_no_set_uid_root_program_on_the_host(skills_root, make_runtime, make_workspace, how):
    """The attack: copy ``id`` into a write dir, ``chmod 06755`` it (and every other route); on the host, run
    by another user, it must not report euid 0, and no file there has a set-id bit or a file capability.
    Both ways a script runs: in a warm worker's child, and in a process of its own (the launcher)."""
    workspace = make_workspace()
    skill = make_skill(skills_root, "probe", files={"attack.py": textwrap.dedent(ATTACK)})
    write_dir = Workspace.load(workspace).write_roots[0]
    write_dir.mkdir(parents=True, exist_ok=True)
    argv = [str(write_dir), str(SET_UID_SYSTEM_FILE)]
    limits = SandboxLimits(memory_mb=512)
    if how == "worker":
        registry = SkillCatalog()
        registry.scan_custom(skills_root)
        runtime = make_runtime(registry, workspace=workspace, limits=limits)
        result = await runtime.run_skill_script("probe", "attack.py", argv, timeout_sec=30)
    else:
        spec = confinement_spec(
            limits, timeout_sec=30, workspace_root=workspace, skill_dir=skill, write_roots=[write_dir]
        )
        spec["status_file"] = str(workspace / "status")
        env = {"PATH": "/usr/bin:/bin"}
        result = await run_subprocess(
            skill / "attack.py", argv, cwd=write_dir, env=env, spec=spec, timeout_sec=30, max_output_bytes=65536
        )
    assert result.ok, result.stderr
    tried = json.loads(result.stdout)
    assert (write_dir / "id").stat().st_uid == 0  # what the call wrote is root's on disk
    for name in ("id", "id-python", "id-open", "id-install"):
        program = write_dir / name
        if program.exists() and program.stat().st_mode & stat.S_IXOTH:
            assert _euid_for_another_user(program) == "65534", (name, tried)
    assert _set_id_files(write_dir) == [], tried
    assert _capabilities(write_dir) == [], tried
    assert tried["os.chmod"] == "EPERM" and tried["open with the mode"] == "EPERM", tried
    assert tried["link"] == "EXDEV" and tried["rename"] in ("EXDEV", "EROFS"), tried
    assert tried["security.capability"] == "EPERM", tried
    assert result.confinement["set_id"] == "seccomp"


def test_the_filter_refuses_set_id_bits_by_every_call_and_allows_the_rest(tmp_path):
    """Each call that sets a mode, with and without a set-id bit, under the filter; ``openat2`` is answered
    ENOSYS (its mode is out of the filter's reach), and C libraries then fall back to ``openat``."""
    numbers = _machine_numbers()
    if numbers is None:
        pytest.skip("no system call table for this machine")
    target = tmp_path / "file"
    target.write_bytes(b"")
    read, write = os.pipe()
    pid = os.fork()
    if pid == 0:
        os.close(read)
        libc = ctypes.CDLL(None, use_errno=True)
        found: dict[str, str] = {}

        def attempt(name, action) -> None:
            try:
                action()
                found[name] = "done"
            except OSError as exc:
                found[name] = errno.errorcode.get(exc.errno or 0, "?")

        def syscall(name: str, *arguments) -> None:
            if libc.syscall(numbers[name], *arguments) < 0:
                raise OSError(ctypes.get_errno(), name)

        def opened(path, flags: int, mode: int) -> None:
            os.close(os.open(path, flags, mode))

        here, at_fdcwd, path = str(tmp_path), -100, os.fsencode(target)
        try:
            if forbid_local_sockets():
                for bits, label in ((0o4755, "set-uid"), (0o2755, "set-gid"), (0o1755, "plain")):
                    attempt(f"chmod {label}", lambda bits=bits: os.chmod(target, bits))
                    attempt(f"fchmod {label}", lambda bits=bits: os.fchmod(os.open(target, os.O_RDONLY), bits))
                    attempt(f"fchmodat {label}", lambda bits=bits: syscall("fchmodat", at_fdcwd, path, bits))
                    attempt(f"fchmodat2 {label}", lambda bits=bits: syscall("fchmodat2", at_fdcwd, path, bits, 0))
                    name = f"{here}/made-{bits:o}"
                    attempt(f"open {label}", lambda n=name, b=bits: opened(n, os.O_CREAT | os.O_WRONLY, b))
                    attempt(f"tmpfile {label}", lambda b=bits: opened(here, os.O_TMPFILE | os.O_WRONLY, b))
                    if "creat" in numbers:
                        attempt(f"creat {label}", lambda n=name, b=bits: syscall("creat", os.fsencode(n + "c"), b))
                attempt("open without creating", lambda: opened(target, os.O_RDONLY, 0o6777))
                attempt("openat2", lambda: syscall("openat2", at_fdcwd, path, None, 24))
            os.write(write, json.dumps(found).encode())
        finally:
            os._exit(0)
    os.close(write)
    with os.fdopen(read, "rb") as pipe:
        data = pipe.read()
    os.waitpid(pid, 0)
    found = json.loads(data or b"{}")
    if not found:
        pytest.skip("seccomp is not available here")
    refused = {name for name, how in found.items() if how == "EPERM"}
    assert refused == {name for name in found if "set-" in name}, found
    assert {how for name, how in found.items() if "plain" in name} == {"done"}, found
    assert found["open without creating"] == "done" and found["openat2"] == "ENOSYS", found
    assert not [path.name for path in tmp_path.iterdir() if path.stat().st_mode & 0o6000]


@pytest.mark.parametrize("machine", ["x86_64", "aarch64"])
def test_the_filter_is_built_for_each_machine_with_the_mode_calls_it_has(machine, monkeypatch):
    """aarch64 has no ``open``, ``chmod`` or ``creat``: the table by name leaves them out, and both programs
    assemble (every jump within BPF's reach), with System V IPC refused or not."""
    real = os.uname()
    monkeypatch.setattr(os, "uname", lambda: os.uname_result((*real[:4], machine)))
    numbers = _machine_numbers()
    assert numbers is not None
    for name in ("fchmod", "fchmodat", "fchmodat2", "openat", "openat2", "shmget", "msgget", "mq_open"):
        assert name in numbers, name
    assert ("open" in numbers) == ("chmod" in numbers) == ("creat" in numbers) == (machine == "x86_64")
    sizes = [len(_filter_program(refuse_ipc=refuse) or []) for refuse in (False, True)]
    assert 0 < sizes[0] < sizes[1]
