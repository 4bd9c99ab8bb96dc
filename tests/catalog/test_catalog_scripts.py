"""Running skill scripts and hooks: both modes, their environment, results, traces, concurrency."""

from __future__ import annotations

import asyncio
import json
import os
import signal

import pytest
from support.catalog_helpers import make_skill

from semif_agent.catalog import AgentSkillRuntime, MemoryTraceWriter, SkillCatalog
from semif_agent.sandbox import SandboxLimits, WorkerPool

PLAIN = """
    import os, sys
    print("args", sys.argv[1:])
    print("cwd", os.getcwd())
    for key in ("SKILL_ID", "SKILL_NAME", "SKILL_DIR", "AGENT_WORK_DIR", "SKILL_HOOK", "HOME"):
        print(key, os.environ.get(key, "-"))
"""

ENTRYPOINT = """
    import os
    def entrypoint(argv, ctx):
        print("printed by", ctx.skill_id)
        return {"argv": argv, "hook": ctx.hook_type, "cwd": os.getcwd(), "dir": str(ctx.skill_dir),
                "work": str(ctx.workspace_root), "name": ctx.skill_name, "env_id": ctx.env["SKILL_ID"],
                "inside": str(ctx.skill_dir / "scripts"), "read_only": _read_only(ctx)}

    def _read_only(ctx):
        try:
            ctx.skill_id = "other"
        except AttributeError:
            return ctx.skill_id
        return "changed"
"""


@pytest.fixture
def registry(skills_root) -> SkillCatalog:
    make_skill(
        skills_root,
        "tools",
        """
        name: tools
        description: Tools.
        script: scripts/plain.py
        hooks:
          pre_step: scripts/entry.py
          post_step: scripts/plain.py
          on_message: scripts/entry.py
          shell: scripts/hello.sh
        """,
        files={
            "scripts/plain.py": PLAIN,
            "scripts/entry.py": ENTRYPOINT,
            "scripts/fail.py": "import sys\nsys.stderr.write('it broke\\n')\nsys.exit(4)\n",
            "scripts/raises.py": "def entrypoint(argv, ctx):\n    raise ValueError('bad input ' + argv[0])\n",
            "scripts/one_arg.py": "async def entrypoint(argv):\n    return 'async ' + ' '.join(argv)\n",
            "scripts/hello.sh": "echo shell says $1 $SKILL_NAME\n",
            "scripts/big.py": "print('x' * 300000)\n",
        },
    )
    make_skill(
        skills_root, "hidden", "name: hidden\ndescription: Not visible.\nscript: s.py", files={"s.py": "print(1)"}
    )
    registry = SkillCatalog()
    registry.scan_custom(skills_root)
    return registry


async def test_a_plain_script_runs_in_the_workspace_with_skill_variables(registry, make_runtime, skills_root):
    runtime = make_runtime(registry)
    runtime.remove_visible_skill("hidden")
    result = await runtime.run_skill_script("tools", "", ["one", "two words"], timeout_sec=10)
    assert result.ok and result.exit_code == 0 and result.error_type == "none", result
    lines = dict(line.split(" ", 1) for line in result.stdout.splitlines())
    workspace = str(runtime.workspace_root())
    assert lines["args"] == "['one', 'two words']"
    assert lines["cwd"] == workspace and lines["AGENT_WORK_DIR"] == workspace and lines["HOME"] == workspace
    assert lines["SKILL_ID"] == "custom@tools" and lines["SKILL_NAME"] == "tools"
    assert lines["SKILL_DIR"] == str((skills_root / "tools").resolve()) and lines["SKILL_HOOK"] == "-"
    same = await runtime.run_skill_script("custom@tools", "plain.py", [], timeout_sec=10)
    assert same.ok and "SKILL_ID custom@tools" in same.stdout


async def test_an_entrypoint_runs_in_a_warm_worker_with_its_context(registry, make_runtime, worker_pool):
    runtime = make_runtime(registry)
    result = await runtime.run_skill_hook("tools", "pre_step", ["--args-json", "{}"], timeout_sec=10)
    assert result.ok, result
    assert result.stdout.startswith("printed by custom@tools\n")
    assert '"hook": "pre_step"' in result.stdout and '"env_id": "custom@tools"' in result.stdout
    assert f'"cwd": "{runtime.workspace_root()}"' in result.stdout
    value = json.loads(result.stdout.split("\n", 1)[1])
    assert value["work"] == str(runtime.workspace_root()) and value["inside"] == value["dir"] + "/scripts"
    assert value["read_only"] == "custom@tools"
    assert worker_pool.pids and all(pid != os.getpid() for pid in worker_pool.pids)
    assert (
        await runtime.run_skill_script("tools", "scripts/one_arg.py", ["a", "b"], timeout_sec=10)
    ).stdout == "async a b"


ENVIRONMENT = """
    import os, subprocess
    def seen_by_a_program():
        listed = subprocess.run(["env", "-0"], capture_output=True, check=True).stdout.decode()
        return dict(entry.split("=", 1) for entry in listed.split("\\0") if entry)
    def entrypoint(argv, ctx):
        before = {"python": dict(os.environ), "program": seen_by_a_program(), "given": ctx.env}
        os.environ["ADDED"] = "yes"
        del os.environ["HOME"]
        os.environ["SKILL_HOOK"] = "changed"
        return {**before, "after": seen_by_a_program()}
"""


@pytest.mark.skipif(not os.path.exists("/usr/bin/env"), reason="needs the env program")
async def test_an_entrypoint_gets_exactly_its_environment_and_can_change_it(skills_root, make_runtime):
    make_skill(skills_root, "environ", files={"show.py": ENVIRONMENT})
    registry = SkillCatalog()
    registry.scan_custom(skills_root)
    runtime = make_runtime(registry, limits=SandboxLimits(memory_mb=512, extra_env={"EXTRA_NAME": "extra value"}))
    result = await runtime.run_skill_script("environ", "show.py", [], timeout_sec=20)
    assert result.ok, result
    seen = json.loads(result.stdout)
    given = {**seen["given"], "TMPDIR": seen["python"].get("TMPDIR")}  # the worker gives each call its own
    assert given["EXTRA_NAME"] == "extra value" and given["SKILL_ID"] == "custom@environ" and given["TMPDIR"]
    assert seen["python"] == given and seen["program"] == given
    changed = {key: value for key, value in given.items() if key != "HOME"} | {"ADDED": "yes", "SKILL_HOOK": "changed"}
    assert seen["after"] == changed


async def test_failures_are_reported_with_their_kind(registry, make_runtime):
    runtime = make_runtime(registry)
    failed = await runtime.run_skill_script("tools", "scripts/fail.py", [], timeout_sec=10)
    assert (failed.ok, failed.exit_code, failed.error_type) == (False, 4, "exit")
    assert failed.stderr == "it broke\n"
    raised = await runtime.run_skill_script("tools", "scripts/raises.py", ["zz"], timeout_sec=10)
    assert (raised.ok, raised.exit_code, raised.error_type) == (False, 1, "exception")
    assert "ValueError: bad input zz" in raised.stderr and "_worker.py" not in raised.stderr
    hidden = await runtime.run_skill_script("hidden", "", [], timeout_sec=10)
    assert hidden.ok
    runtime.remove_visible_skill("hidden")
    refused = await runtime.run_skill_script("hidden", "", [], timeout_sec=10)
    assert (refused.ok, refused.error_type) == (False, "validation") and "not visible" in refused.stderr
    missing = await runtime.run_skill_script("tools", "scripts/nope.py", [], timeout_sec=10)
    assert missing.error_type == "validation" and "no script" in missing.stderr
    unknown = await runtime.run_skill_hook("tools", "never_declared", [], timeout_sec=10)
    assert unknown.error_type == "validation" and "declares no 'never_declared' hook" in unknown.stderr
    nobody = await runtime.run_skill_script("ghost", "", [], timeout_sec=10)
    assert nobody.error_type == "validation"


async def test_declared_hooks_of_any_type_and_shell_scripts(registry, make_runtime):
    runtime = make_runtime(registry)
    post = await runtime.run_skill_hook("tools", "post_step", ["done"], timeout_sec=10)
    assert post.ok and "SKILL_HOOK post_step" in post.stdout and "args ['done']" in post.stdout
    custom = await runtime.run_skill_hook("tools", "on_message", [], timeout_sec=10)
    assert custom.ok and '"hook": "on_message"' in custom.stdout
    shell = await runtime.run_skill_hook("tools", "shell", ["hi"], timeout_sec=10)
    assert shell.ok and shell.stdout == "shell says hi tools\n", shell


async def test_plain_scripts_run_confined_as_programs(skills_root, make_runtime, tmp_path):
    secret = tmp_path / "outside.txt"
    secret.write_text("not for scripts")
    make_skill(
        skills_root,
        "programs",
        "name: programs\ndescription: Programs.\nscript: scripts/broken.py",
        files={
            "scripts/broken.py": "def fail():\n    raise KeyError('missing')\nif __name__ == '__main__':\n    fail()\n",
            "scripts/look.sh": f"echo pid $$\ncat {secret} || echo refused\nexit 3\n",
            "scripts/data.txt": "neither a script nor executable\n",
        },
    )
    catalog = SkillCatalog()
    catalog.scan_custom(skills_root)
    runtime = make_runtime(catalog)
    broken = await runtime.run_skill_script("programs", "", [], timeout_sec=10)
    assert (broken.exit_code, broken.error_type) == (1, "exit"), broken
    assert "KeyError: 'missing'" in broken.stderr and 'broken.py", line 2, in fail' in broken.stderr
    assert "runpy" not in broken.stderr and "program.py" not in broken.stderr and "_worker.py" not in broken.stderr
    shell = await runtime.run_skill_script("programs", "scripts/look.sh", [], timeout_sec=10)
    assert shell.exit_code == 3 and "not for scripts" not in shell.stdout and "refused" in shell.stdout, shell
    if shell.confinement.get("processes") == "pid-namespace":  # the shell is the namespace's init
        assert "pid 1\n" in shell.stdout
    other = await runtime.run_skill_script("programs", "scripts/data.txt", [], timeout_sec=10)
    assert other.exit_code == 126 and "not a .py or .sh file" in other.stderr, other


async def test_active_hooks_run_only_for_active_skills(registry, make_runtime):
    runtime = make_runtime(registry)
    assert await runtime.run_active_hooks("pre_step") == {}
    runtime.activate_skill("tools")
    results = await runtime.run_active_hooks("pre_step", ["x"], timeout_sec=10)
    assert list(results) == ["custom@tools"] and results["custom@tools"].ok


async def test_output_is_bounded(registry, make_runtime):
    runtime = make_runtime(registry, limits=SandboxLimits(max_output_bytes=1000))
    result = await runtime.run_skill_script("tools", "scripts/big.py", [], timeout_sec=10)
    assert result.ok and len(result.stdout) < 1100 and "bytes of output dropped" in result.stdout


async def test_script_runs_are_spans_with_output_excerpts(registry, make_runtime, tmp_path):
    runtime = make_runtime(registry)
    writer = MemoryTraceWriter()
    runtime.bind_workspace(workspace_root=tmp_path / "traced", trace_writer=writer)
    await runtime.run_skill_script("tools", "scripts/fail.py", [], timeout_sec=10)
    await runtime.run_skill_hook("tools", "pre_step", [], timeout_sec=10)
    await runtime.run_skill_script("tools", "../hidden/s.py", [], timeout_sec=10)
    script, hook, escape = writer.records
    assert script["name"] == "skill.script" and script["status"]["code"] == "ERROR"
    assert script["attributes"]["script.exit_code"] == 4 and script["attributes"]["script.mode"] == "subprocess"
    assert script["attributes"]["script.stderr_excerpt"] == "it broke\n"
    assert hook["name"] == "skill.hook" and hook["attributes"]["hook.type"] == "pre_step"
    assert hook["attributes"]["script.mode"] == "worker" and "printed by" in hook["attributes"]["script.stdout_excerpt"]
    for span in (script, hook):  # what held, however this kernel confines
        held = dict(item.split("=", 1) for item in span["attributes"]["script.confinement"])
        assert held["processes"] in {"pid-namespace", "cgroup", "subreaper"} and held["disk"] == "watched"
    assert escape["attributes"]["script.error_type"] == "path"
    assert len(writer.records) == 3


async def test_a_script_swapped_for_a_link_out_of_the_skill_is_refused_on_the_next_call(
    registry, make_runtime, tmp_path
):
    runtime = make_runtime(registry)
    assert (await runtime.run_skill_hook("tools", "pre_step", ["warm"], timeout_sec=10)).ok
    scripts = registry.get("custom@tools").root / "scripts"
    entry = scripts / "entry.py"
    original = entry.read_text()
    outside = tmp_path / "outside"
    outside.mkdir()
    (outside / "entry.py").write_text(original)
    entry.unlink()
    entry.symlink_to(outside / "entry.py")  # the script itself
    swapped = await runtime.run_skill_hook("tools", "pre_step", ["swapped"], timeout_sec=10)
    assert (swapped.ok, swapped.error_type, swapped.confinement) == (False, "path", {}), swapped
    entry.unlink()
    (scripts / "copy.py").write_text(original)
    entry.symlink_to(scripts / "copy.py")  # a link that stays inside the skill runs
    assert (await runtime.run_skill_hook("tools", "pre_step", ["inside"], timeout_sec=10)).ok
    scripts.rename(tmp_path / "scripts-moved")
    scripts.symlink_to(outside, target_is_directory=True)  # a folder on its way
    moved = await runtime.run_skill_hook("tools", "pre_step", ["moved"], timeout_sec=10)
    assert (moved.ok, moved.error_type) == (False, "path"), moved
    scripts.unlink()
    (tmp_path / "scripts-moved").rename(scripts)
    assert (await runtime.run_skill_hook("tools", "pre_step", ["back"], timeout_sec=10)).ok


async def test_many_agents_run_hooks_at_the_same_time(skills_root, make_runtime, tmp_path):
    """Each hook waits until every hook has started: run one after another, they would all time out."""
    count = 12
    rendezvous = """
        import os, time
        def entrypoint(argv, ctx):
            meeting = os.path.join(argv[0], "arrived")
            os.makedirs(meeting, exist_ok=True)
            open(os.path.join(meeting, ctx.env["AGENT"]), "w").close()
            deadline = time.monotonic() + 8
            while len(os.listdir(meeting)) < int(argv[1]):
                if time.monotonic() > deadline:
                    return "alone"
                time.sleep(0.02)
            return "met"
    """
    make_skill(
        skills_root, "meet", "name: meet\ndescription: d\nhooks:\n  pre_step: meet.py", files={"meet.py": rendezvous}
    )
    registry = SkillCatalog()
    registry.scan_custom(skills_root)
    shared = tmp_path / "shared"
    runtimes = []
    for agent in range(count):
        runtime = make_runtime(
            registry, agent_id=agent, workspace=shared, limits=SandboxLimits(extra_env={"AGENT": str(agent)})
        )
        runtime.activate_skill("meet")
        runtimes.append(runtime)
    results = await asyncio.gather(
        *(rt.run_skill_hook("meet", "pre_step", [str(shared), str(count)], timeout_sec=15) for rt in runtimes)
    )
    assert [result.stdout for result in results] == ["met"] * count, results


async def test_a_dead_worker_is_replaced(registry, make_runtime, worker_pool):
    runtime = make_runtime(registry)
    assert (await runtime.run_skill_hook("tools", "pre_step", [], timeout_sec=10)).ok
    before = list(worker_pool.pids)
    for pid in before:
        os.kill(pid, signal.SIGKILL)
    await asyncio.sleep(0.1)
    again = await runtime.run_skill_hook("tools", "pre_step", [], timeout_sec=10)
    assert again.ok, again
    assert set(worker_pool.pids).isdisjoint(before)


@pytest.mark.slow
async def test_a_silent_worker_is_killed_and_replaced(registry, tmp_path):
    pool = WorkerPool(size=1, grace_sec=0.5)
    try:
        runtime = AgentSkillRuntime(1, registry, worker_pool=pool)
        runtime.bind_workspace(workspace_root=tmp_path / "ws")
        runtime.set_visible_skills(["tools"])
        assert (await runtime.run_skill_hook("tools", "pre_step", [], timeout_sec=5)).ok
        frozen = pool.pids[0]
        os.kill(frozen, signal.SIGSTOP)
        stuck = await runtime.run_skill_hook("tools", "pre_step", [], timeout_sec=1)
        assert (stuck.ok, stuck.error_type) == (False, "worker") and "restarted" in stuck.stderr
        again = await runtime.run_skill_hook("tools", "pre_step", [], timeout_sec=5)
        assert again.ok and pool.pids and frozen not in pool.pids
    finally:
        pool.close()


def test_sync_wrapper_runs_outside_an_event_loop(registry, make_runtime):
    runtime = make_runtime(registry)
    assert runtime.run_skill_script_sync("tools", "", ["sync"], timeout_sec=10).ok
