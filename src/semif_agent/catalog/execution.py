"""Choose how a skill script runs and run it: :class:`ScriptExecutor`.

- A Python script defining a top-level ``entrypoint`` runs as
  ``entrypoint(argv, ctx)`` in a warm worker (:mod:`semif_agent.sandbox.pool`): fast, and still
  in a separate, confined process.
- Any other script runs as a whole program, as ``python script.py argv...`` would (or ``sh``, or
  directly when executable), in a confined child of the same warm workers: a Python script in
  that child's interpreter, already started (:mod:`semif_agent.sandbox.program`), anything
  else exec'd by it.

Both get the same working directory (the agent's workspace), environment,
limits and confinement (:mod:`semif_agent.sandbox.limits`), and a private temporary folder that
is emptied afterwards (the worker's own). A script may write that folder and the
agent's workspace, but for the host's own folder there (``.semif``, the skill trace): where its mount
namespace holds, it sees that one as an empty folder of its own, so what it writes, replaces or removes
there never reaches the host's (without one, the trace writer notices a trace file replaced or removed,
:class:`~.trace.JsonlTraceWriter`). When the workspace is a semif workspace (it holds ``semif.toml``), only its
write dirs (``[skills] write_dirs``), and it reads nothing else of it: its records (settings, logs,
manifests, skill bodies) are out of every script's and hook's sight, as of code-skill bodies (what
it sees is its skill's folder, the write dirs and the system folders,
:func:`~semif_agent.sandbox.limits.confinement_spec`). Whether a script has an ``entrypoint`` is read from its
syntax tree, never by importing it in the host; the answer is cached per
file version (path, size, modification time).

A script sees only an allow-list of the host's environment variables plus
``SKILL_ID``, ``SKILL_NAME``, ``SKILL_DIR``, ``AGENT_WORK_DIR`` (and ``SKILL_HOOK``
for a hook); ``HOME`` is the agent's workspace and ``TMPDIR`` a private
temporary folder removed after the run.
"""

from __future__ import annotations

import ast
import contextlib
import os
import warnings
from dataclasses import dataclass
from pathlib import Path

from .._python_ast import parse_python
from ..errors import WorkspaceError
from ..sandbox._targets import preload_everywhere
from ..sandbox.limits import SandboxLimits, confinement_spec
from ..sandbox.pool import WorkerPool, default_worker_pool
from ..sandbox.program import run_program
from ..sandbox.results import ScriptRunResult
from ..workspace import SETTINGS_FILE, Workspace
from ..workspace.records import HOST_DIR
from . import _entrypoint
from .descriptor import SkillDescriptor

_ENTRYPOINT_CACHE_SIZE = 1024
preload_everywhere(_entrypoint.run)  # every worker imports them at start, so script calls start warm
preload_everywhere(run_program)


_PLAN_CACHE_SIZE = 1024


@dataclass(frozen=True)
class _CallPlan:
    """What stays the same between calls of one skill's scripts in one workspace, under one timeout."""

    run_env: dict[str, str]  # the environment beyond the host's allowed variables
    spec: dict[str, object]  # the confinement spec
    ctx: dict[str, str]  # an entrypoint's ``ctx``
    covered: tuple[Path, ...]  # the host's folders in the write roots, which the run sees as empty ones of its own


class ScriptExecutor:
    """Runs scripts of skills under one set of :class:`~semif_agent.sandbox.limits.SandboxLimits`."""

    def __init__(self, limits: SandboxLimits | None = None, worker_pool: WorkerPool | None = None) -> None:
        """Use ``limits`` (defaults otherwise) and ``worker_pool`` (the process-wide pool otherwise)."""
        self.limits = limits or SandboxLimits()
        self._pool = worker_pool
        self._entrypoints: dict[tuple[str, int, int], bool] = {}
        self._plans: dict[tuple[object, ...], _CallPlan] = {}
        self._plans_limits = self.limits

    @property
    def worker_pool(self) -> WorkerPool:
        """The pool entrypoint calls go to."""
        if self._pool is None:
            self._pool = default_worker_pool()
        return self._pool

    def mode_for(self, script: str | os.PathLike[str], status: os.stat_result | None = None) -> str:
        """``worker`` for a Python script with a top-level ``entrypoint``, else ``subprocess`` (run as a program).

        ``status``: the script's :func:`os.stat` when the caller has just taken it.
        """
        path = os.fspath(script)
        name = os.path.basename(path)
        if not name.endswith(".py") or len(name) == 3:  # what Path.suffix calls ".py"
            return "subprocess"
        try:
            info = status or os.stat(path)
        except OSError:
            return "subprocess"
        key = (path, info.st_size, info.st_mtime_ns)
        cached = self._entrypoints.get(key)
        if cached is None:
            if len(self._entrypoints) >= _ENTRYPOINT_CACHE_SIZE:
                self._entrypoints.clear()
            cached = self._entrypoints[key] = _defines_entrypoint(path)
        return "worker" if cached else "subprocess"

    async def run(
        self,
        descriptor: SkillDescriptor,
        script: str | os.PathLike[str],
        argv: list[str],
        *,
        workspace_root: Path,
        timeout_sec: float,
        hook_type: str = "",
        script_status: os.stat_result | None = None,
    ) -> tuple[ScriptRunResult, str]:
        """Run ``script`` (an absolute path inside the skill); returns the result and the mode used.

        ``script_status``: the script's :func:`os.stat` when the caller has just taken it.
        """
        program = os.fspath(script)
        mode = self.mode_for(program, script_status)
        plan = self._plan(descriptor, workspace_root, timeout_sec, hook_type)
        for folder in plan.covered:  # made now (never through a link), so the run finds the folder to cover
            with contextlib.suppress(OSError):  # there already; else not covered, as the run's confinement says
                os.mkdir(folder)
        env = passed_environment(self.limits)
        env.update(plan.run_env)
        if mode == "worker":
            target, payload = (
                _entrypoint.run,
                {"script": program, "argv": list(argv), "ctx": plan.ctx},  # its env: the process's own
            )
        else:
            target, payload = run_program, {"program": program, "argv": list(argv)}
        called = await self.worker_pool.call(
            target,
            payload,
            cwd=workspace_root,
            env=env,
            confine_spec=plan.spec,
            timeout_sec=timeout_sec,
            max_output_bytes=self.limits.max_output_bytes,
            reuse=f"{descriptor.root}\0{workspace_root}\0{hook_type}" if self.limits.warm_processes else None,
        )
        result = ScriptRunResult(
            called.ok, called.exit_code, called.stdout, called.stderr, called.error_type, called.confinement
        )
        return result, mode

    def _plan(self, descriptor: SkillDescriptor, workspace_root: Path, timeout_sec: float, hook_type: str) -> _CallPlan:
        """The environment, confinement and context of a call, made once per skill, workspace, timeout and
        write roots (those are read again on every call: a workspace whose settings change gets a new plan)."""
        write_roots = script_write_roots(workspace_root)
        if self._plans_limits is not self.limits:
            self._plans.clear()
            self._plans_limits = self.limits
        key = (
            descriptor.skill_id,
            descriptor.name,
            descriptor.root,
            workspace_root,
            hook_type,
            timeout_sec,
            write_roots,
        )
        plan = self._plans.get(key)
        if plan is None:
            covered = (workspace_root / HOST_DIR,) if write_roots is None else ()  # the whole workspace is written
            if len(self._plans) >= _PLAN_CACHE_SIZE:
                self._plans.clear()
            plan = self._plans[key] = _CallPlan(
                run_environment(self.limits, descriptor=descriptor, workspace_root=workspace_root, hook_type=hook_type),
                confinement_spec(
                    self.limits,
                    timeout_sec=timeout_sec,
                    workspace_root=workspace_root,
                    skill_dir=descriptor.root,
                    write_roots=write_roots,
                    covered=covered,
                ),
                {
                    "workspace_root": str(workspace_root),
                    "skill_dir": str(descriptor.root),
                    "skill_id": descriptor.skill_id,
                    "skill_name": descriptor.name,
                    "hook_type": hook_type,
                },
                covered,
            )
        return plan


def script_environment(
    limits: SandboxLimits,
    *,
    descriptor: SkillDescriptor,
    workspace_root: Path,
    run_dir: Path | None,
    hook_type: str = "",
) -> dict[str, str]:
    """The complete environment of one script run (``TMPDIR`` is ``run_dir``; None: the runner sets it)."""
    env = passed_environment(limits)
    env.update(run_environment(limits, descriptor=descriptor, workspace_root=workspace_root, hook_type=hook_type))
    if run_dir is not None:
        env["TMPDIR"] = str(run_dir)
    return env


def passed_environment(limits: SandboxLimits) -> dict[str, str]:
    """The host's environment variables a script sees (those ``limits`` allow), as they are now."""
    read = os.environ.get
    return {key: value for key in limits.env_allow if (value := read(key)) is not None}


def run_environment(
    limits: SandboxLimits, *, descriptor: SkillDescriptor, workspace_root: Path, hook_type: str = ""
) -> dict[str, str]:
    """The variables a script run gets besides :func:`passed_environment` (they override it)."""
    env = dict(limits.extra_env)
    env.update(
        {
            "HOME": str(workspace_root),
            "PYTHONDONTWRITEBYTECODE": "1",
            "PYTHONIOENCODING": "utf-8",
            "SKILL_ID": descriptor.skill_id,
            "SKILL_NAME": descriptor.name,
            "SKILL_DIR": str(descriptor.root),
            "AGENT_WORK_DIR": str(workspace_root),
        }
    )
    if hook_type:
        env["SKILL_HOOK"] = hook_type
    return env


_loaded: dict[str, tuple[tuple[int, int], Workspace | None]] = {}


def script_write_roots(workspace_root: Path) -> tuple[Path, ...] | None:
    """The folders a script bound to ``workspace_root`` may write besides its private one.

    None (the whole workspace) for an agent's plain workspace; for a semif workspace its write
    dirs, never its records (none at all when its settings do not load). The workspace is loaded
    once per settings version, and each run checks its write dirs as a run of its skills does
    (:meth:`~semif_agent.workspace.RunPaths.check_write_dirs`): when one leads elsewhere in a way a
    script could have made it (a link put on its way), a warning says so and the script may write none.
    """
    workspace = os.fspath(workspace_root)
    settings = os.path.join(workspace, SETTINGS_FILE)
    if not os.access(settings, os.F_OK):  # a plain workspace, told without raising
        return None
    try:
        info = os.stat(settings)
    except OSError:
        return None
    version = (info.st_mtime_ns, info.st_size)
    cached = _loaded.get(workspace)
    if cached is None or cached[0] != version:
        try:
            loaded: Workspace | None = Workspace.load(workspace_root)
        except (WorkspaceError, OSError, ValueError):
            loaded = None
        cached = _loaded[workspace] = (version, loaded)
    if cached[1] is None:
        return ()
    run = cached[1].at_run_start()
    try:
        run.check_write_dirs()
    except WorkspaceError as exc:
        warnings.warn(str(exc), RuntimeWarning, stacklevel=2)
        return ()
    return run.write_roots


def _defines_entrypoint(script: str) -> bool:
    try:
        with open(script, "rb") as file:
            source = file.read()
    except OSError:
        return False
    if b"entrypoint" not in source:
        return False
    try:
        tree = parse_python(source, filename=os.path.basename(script))
    except (SyntaxError, ValueError):
        return False
    for node in tree.body:
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)) and node.name == "entrypoint":
            return True
        if isinstance(node, ast.Assign) and any(isinstance(t, ast.Name) and t.id == "entrypoint" for t in node.targets):
            return True
    return False
