"""An allow-list, not a deny-list: what a confined script or hook sees of the host is only what it needs.

Each probe runs both ways a script runs (an ``entrypoint`` in a warm worker's child, a whole program there),
in a semif workspace, with secrets planted for the test (:mod:`support.view_probe`): a root-only key
under ``/etc``, files in ``/root`` and ``/home``, the workspace's settings and decision log, a key in
the test's own session keyring. Not one is read, listed or even ``stat``-ed; keyrings, ``userfaultfd``
and new user namespaces are refused; the call runs as a user other than root where the machine lets it.
"""

from __future__ import annotations

import ctypes
import errno
import json
import os
import stat
import textwrap

import pytest
from support.catalog_helpers import make_skill
from support.view_probe import PROBE, planted_secrets, reached

from semif_agent.catalog import SkillCatalog
from semif_agent.sandbox import SandboxLimits
from semif_agent.sandbox._privileges import REFUSED, _machine_numbers, forbid_local_sockets
from semif_agent.sandbox._root import etc_allowed
from semif_agent.workspace import Workspace

pytestmark = pytest.mark.skipif(os.geteuid() != 0, reason="planting the host's secrets takes root")


def install(skills_root, targets: dict) -> SkillCatalog:
    run = f"TARGETS = {json.dumps(targets)}\n" + PROBE + "\nprint(json.dumps(probe(TARGETS)))\n"
    entry = (
        f"TARGETS = {json.dumps(targets)}\n"
        + PROBE
        + "\ndef entrypoint(argv, ctx):\n    return json.dumps(probe(TARGETS))\n"
    )
    make_skill(skills_root, "probe", files={"script.py": "import json\n" + run, "entry.py": "import json\n" + entry})
    registry = SkillCatalog()
    registry.scan_custom(skills_root)
    return registry


@pytest.mark.parametrize("mode", ["script.py", "entry.py"])
async def test_a_script_reaches_none_of_the_hosts_secrets_nor_its_workspaces_records(
    skills_root, make_runtime, make_workspace, mode
):
    workspace = make_workspace()
    log = workspace / "data" / "decisions.jsonl"
    log.write_text(json.dumps({"kind": "request", "text": "log-secret: pay the rent to Bob"}) + "\n")
    with open(workspace / "semif.toml", "a", encoding="utf-8") as settings:
        settings.write('\n[config]\nnote = "settings-secret"\n')
    with planted_secrets(workspace) as targets:
        registry = install(skills_root, {key: value for key, value in targets.items() if key != "secrets"})
        runtime = make_runtime(registry, workspace=workspace, limits=SandboxLimits(memory_mb=512))
        result = await runtime.run_skill_script("probe", mode, [], timeout_sec=20)
        assert result.ok, result.stderr
        seen = json.loads(result.stdout)
        assert reached(seen) == {}, seen
        for secret in [*targets["secrets"], "log-secret", "settings-secret"]:
            assert secret not in result.stdout
    if result.confinement.get("user") != "root":  # root without capabilities only where idmapped mounts fail
        assert seen["uid"] != 0, result.confinement
    assert result.confinement["root"] == "allow-list" and result.confinement["keyring"] == "fresh"


async def test_a_hook_sees_its_skill_and_the_write_dirs_only(skills_root, make_runtime, make_workspace):
    """What a script may use is still there: its own folder, the write dirs (written as root's files), the
    interpreter, the few files of /etc programs read; in the workspace's folder, its records are not there."""
    workspace = make_workspace()
    source = """
    import json, os, sys
    names = ("semif.toml", "data/decisions.jsonl", "data/categories.json", "data/skills")
    seen = {"records": [os.path.exists(name) for name in names]}
    seen["skill"] = sorted(os.listdir(os.environ["SKILL_DIR"]))
    open(os.path.join(sys.argv[1], "made.txt"), "w").write("x")
    seen["passwd"] = open("/etc/passwd").read().count(":") > 0
    seen["etc"] = sorted(os.listdir("/etc"))
    print(json.dumps(seen))
    """
    make_skill(skills_root, "probe", files={"script.py": textwrap.dedent(source)})
    registry = SkillCatalog()
    registry.scan_custom(skills_root)
    write_dir = Workspace.load(workspace).write_roots[0]
    write_dir.mkdir(parents=True, exist_ok=True)
    runtime = make_runtime(registry, workspace=workspace, limits=SandboxLimits(memory_mb=512))
    result = await runtime.run_skill_script("probe", "script.py", [str(write_dir)], timeout_sec=20)
    assert result.ok, result.stderr
    seen = json.loads(result.stdout)
    assert seen["records"] == [False, False, False, False]
    assert "script.py" in seen["skill"] and seen["passwd"]
    assert not {"shadow", "gshadow", "sudoers", "ssh"} & set(seen["etc"])
    assert (write_dir / "made.txt").stat().st_uid == 0  # written through the idmapped folder as root's


def test_etc_is_an_allow_list_of_files_any_user_may_read():
    allowed = etc_allowed(network=True)
    assert "/etc/passwd" in allowed and "/etc/ld.so.cache" in allowed
    for path in allowed:
        mode = os.lstat(path).st_mode
        assert stat.S_ISLNK(mode) or mode & stat.S_IROTH, path
    assert not [path for path in allowed if any(word in path for word in ("shadow", "sudo", "ssh", "wireguard"))]
    assert "/etc/hosts" not in etc_allowed(network=False) and "/etc/resolv.conf" not in etc_allowed(network=False)


SAFE_TO_TRY = ("ptrace", "bpf", "perf_event_open", "setns", "mount", "umount2", "pivot_root", "open_tree", "fsopen")
SAFE_TO_TRY += ("move_mount", "open_by_handle_at", "process_vm_readv", "init_module", "finit_module", "kcmp", "chroot")


def test_the_filter_refuses_what_reaches_past_the_process():
    """Each refused call fails with EPERM under the filter (those that harm nothing when tried with no arguments)."""
    numbers = _machine_numbers()
    if numbers is None:
        pytest.skip("no system call table for this machine")
    read, write = os.pipe()
    pid = os.fork()
    if pid == 0:
        os.close(read)
        libc = ctypes.CDLL(None, use_errno=True)
        answers = {}
        if forbid_local_sockets():
            for name in [name for name in SAFE_TO_TRY if name in numbers]:
                result = libc.syscall(numbers[name], 0, 0, 0, 0, 0)
                answers[name] = ctypes.get_errno() if result < 0 else 0
            answers["clone3"] = ctypes.get_errno() if libc.syscall(numbers["clone3"], 0, 0) < 0 else 0
        os.write(write, json.dumps(answers).encode())
        os._exit(0)
    os.close(write)
    answers = json.loads(os.read(read, 65536))
    os.waitpid(pid, 0)
    assert answers, "the filter could not be installed"
    clone3 = answers.pop("clone3")
    assert set(answers) <= set(REFUSED) and answers == {name: errno.EPERM for name in answers}, answers
    assert clone3 == errno.ENOSYS  # C libraries then use clone, whose flags the filter reads
