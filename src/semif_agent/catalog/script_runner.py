"""Scripts and lifecycle hooks of an agent's skills: :class:`ScriptRunner`, held by :class:`~.runtime.AgentSkillRuntime`.

Every run is refused before it starts unless the skill is visible to the agent
and the script lies inside the skill (escapes get one uniform message, error
type ``path``). A run is a span (``skill.script`` or ``skill.hook``) with its
exit code, error type, execution mode, what confinement held
(``script.confinement``, ``kind=how`` strings), duration and bounded excerpts
of stdout and stderr.

An environment skill (id ``env:<name>@...``) runs no script: its scripts and
hooks are questions to the agent's environment router (:mod:`.environment`),
traced as ``skill.ask_env``.
"""

from __future__ import annotations

import os
import stat
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Protocol

from ..sandbox.results import ErrorType, ScriptRunResult, refused
from .descriptor import SkillDescriptor, SkillRegistryLike
from .environment import EnvironmentRouter, ask_env, is_env_skill
from .errors import SkillPathError
from .execution import ScriptExecutor
from .paths import real_path_inside
from .trace import TraceWriter

DEFAULT_TIMEOUT_SEC = 30


class RuntimeView(Protocol):
    """What a runner asks of the agent's runtime it runs for: its skills, its workspace, where its spans go."""

    @property
    def registry(self) -> SkillRegistryLike: ...
    @property
    def trace_writer(self) -> TraceWriter: ...
    @property
    def env_router(self) -> EnvironmentRouter | None: ...
    @property
    def agent_id(self) -> int | str: ...
    def resolve_skill_id(self, token: str, *, visible_only: bool = True) -> str: ...
    def workspace_root(self) -> Path: ...


class ScriptRunner:
    """Runs the scripts and hooks of ``agent``'s visible skills, each through ``executor`` (confined processes)."""

    def __init__(self, agent: RuntimeView, executor: ScriptExecutor) -> None:
        self.agent = agent
        self.executor = executor

    async def run_skill_script(
        self, skill_id: str, script_path: str, argv: Sequence[str], *, timeout_sec: float = DEFAULT_TIMEOUT_SEC
    ) -> ScriptRunResult:
        """Run a script of a visible skill in a confined process.

        ``script_path`` is relative to the skill (empty: the skill's default
        ``script``; a bare file name equal to the default's name: the default).
        The script runs in the agent's workspace with ``argv``; past
        ``timeout_sec`` its whole process group is killed.
        """
        info, problem = self._visible_skill(skill_id)
        if info is None:
            return self._refuse("skill.script", skill_id, refused(ErrorType.VALIDATION, problem))
        script = str(script_path or "").strip()
        if info.script and (
            not script or ("/" not in script and "\\" not in script and script == Path(info.script).name)
        ):
            script = info.script
        if is_env_skill(info.skill_id):
            return await self._ask_env(info, script, argv, timeout_sec=timeout_sec, hook_type="")
        if not script:
            return self._refuse(
                "skill.script",
                skill_id,
                refused(ErrorType.VALIDATION, "this skill declares no default script; name one"),
            )
        return await self._run(info, script, argv, timeout_sec=timeout_sec, hook_type="")

    async def run_skill_hook(
        self, skill_id: str, hook_type: str, argv: Sequence[str], *, timeout_sec: float = DEFAULT_TIMEOUT_SEC
    ) -> ScriptRunResult:
        """Run the ``hook_type`` hook (``pre_step``, ``post_step``, any declared type) of a visible skill."""
        info, problem = self._visible_skill(skill_id)
        if info is None:
            return self._refuse("skill.hook", skill_id, refused(ErrorType.VALIDATION, problem), hook_type=hook_type)
        script = info.hooks.get(hook_type)
        if is_env_skill(info.skill_id):
            return await self._ask_env(info, script or "", argv, timeout_sec=timeout_sec, hook_type=hook_type)
        if not script:
            message = f"skill {info.skill_id} declares no {hook_type!r} hook"
            return self._refuse("skill.hook", skill_id, refused(ErrorType.VALIDATION, message), hook_type=hook_type)
        return await self._run(info, script, argv, timeout_sec=timeout_sec, hook_type=hook_type)

    # -- internals --------------------------------------------------------------

    def _visible_skill(self, token: str) -> tuple[SkillDescriptor | None, str]:
        """The visible skill ``token`` names, or None and why not."""
        skill_id = self.agent.resolve_skill_id(token)
        info = self.agent.registry.get(skill_id) if skill_id else None
        if info is not None:
            return info, ""
        if self.agent.resolve_skill_id(token, visible_only=False):
            return None, f"skill {token!r} is not visible to this agent"
        return None, f"no skill {token!r} (or the name is ambiguous)"

    async def _ask_env(
        self, info: SkillDescriptor, script: str, argv: Sequence[str], *, timeout_sec: float, hook_type: str
    ) -> ScriptRunResult:
        trace = self.agent.trace_writer
        attributes: dict[str, object] = {"skill.id": info.skill_id, "script.argv": [str(arg) for arg in argv]}
        if hook_type:
            attributes["hook.type"] = hook_type
        with trace.opened("skill.ask_env", attributes=attributes) as span:  # ended however the call ends
            result = await ask_env(
                self.agent.env_router,
                agent_id=self.agent.agent_id,
                info=info,
                argv=argv,
                script=script,
                hook_type=hook_type,
                timeout_sec=float(timeout_sec),
            )
            trace.end_span(
                span,
                ok=result.ok,
                message=result.stderr,
                attributes={"script.error_type": result.error_type, "script.stdout_excerpt": result.stdout},
            )
        return result

    def _refuse(self, name: str, token: str, result: ScriptRunResult, *, hook_type: str = "") -> ScriptRunResult:
        trace = self.agent.trace_writer
        if not trace.enabled:
            return result
        attributes = {"skill.token": str(token), "script.error_type": result.error_type}
        if hook_type:
            attributes["hook.type"] = hook_type
        trace.end_span(trace.start_span(name, attributes=attributes), ok=False, message=result.stderr)
        return result

    async def _run(
        self, info: SkillDescriptor, script: str, argv: Sequence[str], *, timeout_sec: float, hook_type: str
    ) -> ScriptRunResult:
        span_name = "skill.hook" if hook_type else "skill.script"
        if not isinstance(timeout_sec, (int, float)) or timeout_sec <= 0:
            return self._refuse(
                span_name,
                info.skill_id,
                refused(ErrorType.VALIDATION, "timeout_sec must be a positive number"),
                hook_type=hook_type,
            )
        try:
            target = real_path_inside(info.root, script)
        except SkillPathError as exc:
            return self._refuse(span_name, info.skill_id, refused(ErrorType.PATH, str(exc)), hook_type=hook_type)
        try:
            status: os.stat_result | None = os.stat(target)
        except (OSError, ValueError):
            status = None
        if status is None or not stat.S_ISREG(status.st_mode):
            message = f"no script {script!r} in skill {info.skill_id}"
            return self._refuse(span_name, info.skill_id, refused(ErrorType.VALIDATION, message), hook_type=hook_type)
        workspace = self.agent.workspace_root()
        args = [str(arg) for arg in argv]
        trace = self.agent.trace_writer
        running = self.executor.run(
            info,
            target,
            args,
            workspace_root=workspace,
            timeout_sec=float(timeout_sec),
            hook_type=hook_type,
            script_status=status,
        )
        if not trace.enabled:  # nothing keeps the span: do not build it
            return (await running)[0]
        attributes: dict[str, object] = {
            "skill.id": info.skill_id,
            "skill.name": info.name,
            "script.path": script,
            "script.argv": list(args),
            "script.timeout_sec": timeout_sec,
        }
        if hook_type:
            attributes["hook.type"] = hook_type
        with trace.opened(span_name, attributes=attributes) as span:  # ended too when the turn is cancelled
            started = time.perf_counter()
            result, mode = await running
            trace.end_span(
                span,
                ok=result.ok,
                message="" if result.ok else f"{result.error_type}: exit {result.exit_code}",
                attributes={
                    "script.mode": mode,
                    "script.exit_code": result.exit_code,
                    "script.error_type": result.error_type,
                    "script.confinement": [f"{kind}={how}" for kind, how in result.confinement.items()],
                    "script.duration_ms": round((time.perf_counter() - started) * 1000, 3),
                    "script.stdout_excerpt": result.stdout,
                    "script.stderr_excerpt": result.stderr,
                },
            )
        return result
