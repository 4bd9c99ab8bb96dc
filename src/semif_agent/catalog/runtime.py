"""One agent's view of the shared catalog: :class:`AgentSkillRuntime`.

The registry is shared and only read; everything that belongs to one agent
lives here: which skills it can see, which are active, its workspace, its
trace writer (whose spans also go to every processor of the process's span
pipeline, :mod:`semif_agent.spans`). Every public method takes a *token*, a skill id
(``namespace@name``) or a display name, resolved by :meth:`resolve_skill_id`.

Scripts and hooks are run by the runtime's :class:`~.script_runner.ScriptRunner`
(in separate, confined processes); the runtime's ``run_*`` methods hand them to it.
Those of environment skills (``env:<name>@...``) are asked of the runtime's
``env_router`` instead (:mod:`.environment`).
"""

from __future__ import annotations

import asyncio
import html
import os
import time
import warnings
from collections.abc import Collection, Iterable, Sequence
from pathlib import Path
from typing import Any

from .._sync import run_sync
from ..errors import check_type
from ..sandbox.limits import SandboxLimits
from ..sandbox.pool import WorkerPool
from ..sandbox.results import ScriptRunResult
from ..workspace.records import HOST_DIR
from .descriptor import SkillDescriptor, SkillRegistryLike
from .environment import EnvironmentRouter
from .errors import RuntimeNotBound, SkillPathError
from .execution import ScriptExecutor
from .fs import WorkspaceFS
from .paths import resolve_inside
from .script_runner import DEFAULT_TIMEOUT_SEC, ScriptRunner
from .trace import JsonlTraceWriter, NullTraceWriter, TraceWriter

STATE_VERSION = 1
TRACE_FILE = Path(HOST_DIR) / "skill-trace.jsonl"
"""Where the default trace writer writes, relative to the workspace."""


class AgentSkillRuntime:
    """Visibility, activation, documents and scripts of SKILL.md skills for one agent."""

    def __init__(
        self,
        agent_id: int | str,
        registry: SkillRegistryLike,
        *,
        limits: SandboxLimits | None = None,
        worker_pool: WorkerPool | None = None,
        env_router: EnvironmentRouter | None = None,
    ) -> None:
        """A runtime for ``agent_id`` over the shared ``registry``; nothing visible yet.

        ``limits`` bound every script (defaults: :class:`~semif_agent.sandbox.limits.SandboxLimits`);
        ``worker_pool`` runs entrypoint scripts (default: the process-wide pool);
        ``env_router`` answers the environment skills (see :meth:`set_env_router`).
        """
        check_type("agent_id", agent_id, (int, str))
        check_type("limits", limits, SandboxLimits, optional=True)
        check_type("worker_pool", worker_pool, WorkerPool, optional=True)
        self.agent_id = agent_id
        self._env_router: EnvironmentRouter | None = None
        self.set_env_router(env_router)
        self._registry = registry
        self._scripts = ScriptRunner(self, ScriptExecutor(limits, worker_pool))
        self._workspace: Path | None = None
        self._fs: WorkspaceFS | None = None
        self._trace: TraceWriter = NullTraceWriter()
        self._visible: set[str] = set()
        self._activated: set[str] = set()

    # -- workspace ----------------------------------------------------------

    def bind_workspace(
        self,
        *,
        workspace_root: str | os.PathLike[str],
        fs: WorkspaceFS | None = None,
        trace_writer: TraceWriter | None = None,
    ) -> None:
        """Bind to the agent's workspace (created if missing), where scripts run.

        ``fs`` defaults to a :class:`~.fs.WorkspaceFS` of the workspace and
        ``trace_writer`` to a :class:`~.trace.JsonlTraceWriter` writing
        ``.semif/skill-trace.jsonl`` in it, opened from the workspace's
        descriptor without following a link (scripts may write the workspace).
        """
        root = Path(workspace_root).expanduser().resolve()
        root.mkdir(parents=True, exist_ok=True)
        self._workspace = root
        self._fs = fs or WorkspaceFS(root)
        self._trace = trace_writer or JsonlTraceWriter(
            root / TRACE_FILE, beneath=root, resource={"agent.id": str(self.agent_id)}
        )

    def workspace_root(self) -> Path:
        """The bound workspace (raises :class:`RuntimeNotBound` before ``bind_workspace``)."""
        if self._workspace is None:
            raise RuntimeNotBound(f"agent {self.agent_id}: bind_workspace() first")
        return self._workspace

    @property
    def is_initialized(self) -> bool:
        """True once a workspace is bound."""
        return self._workspace is not None

    @property
    def fs(self) -> WorkspaceFS:
        """The workspace's file facade (raises :class:`RuntimeNotBound` before binding)."""
        if self._fs is None:
            raise RuntimeNotBound(f"agent {self.agent_id}: bind_workspace() first")
        return self._fs

    @property
    def trace_writer(self) -> TraceWriter:
        """Where this runtime's spans go."""
        return self._trace

    @property
    def env_router(self) -> EnvironmentRouter | None:
        """Who answers this agent's environment skills (``None``: nobody; running one raises)."""
        return self._env_router

    def set_env_router(self, router: EnvironmentRouter | None) -> None:
        """Register the environment router that ``env:`` skills' scripts and hooks are asked of (None: unregister)."""
        check_type("env_router", router, EnvironmentRouter, optional=True)
        self._env_router = router

    @property
    def registry(self) -> SkillRegistryLike:
        """The shared registry."""
        return self._registry

    # -- resolution -------------------------------------------------------------

    def resolve_skill_id(self, token: str, *, visible_only: bool = True) -> str:
        """The skill id a token names, or ``''`` when none or ambiguous.

        ``token`` is a skill id or a display name. With ``visible_only`` (the
        default) only visible skills count; otherwise the whole registry does.
        A display name shared by several candidates resolves only when exactly
        one of them is active.
        """
        text = str(token or "").strip()
        if not text:
            return ""
        if (text in self._visible) if visible_only else (self._registry.get(text) is not None):
            return text
        matches = [
            item.skill_id
            for item in self._registry.find_by_name(text)
            if not visible_only or item.skill_id in self._visible
        ]
        if len(matches) == 1:
            return matches[0]
        active = [skill_id for skill_id in matches if skill_id in self._activated]
        return active[0] if len(active) == 1 else ""

    def resolve_skill_id_by_name(self, skill_name: str) -> str:
        """Deprecated alias of :meth:`resolve_skill_id`."""
        _deprecated("resolve_skill_id_by_name", "resolve_skill_id")
        return self.resolve_skill_id(skill_name)

    # -- visibility -------------------------------------------------------------

    def set_visible_skills(self, tokens: Iterable[str]) -> None:
        """Make exactly these skills visible (ids or names, resolved against the whole registry).

        Active skills that are no longer visible are deactivated. Each token is
        an index lookup, so thousands of skills take linear time.
        """
        resolved = (self.resolve_skill_id(token, visible_only=False) for token in tokens)
        self._visible = {skill_id for skill_id in resolved if skill_id}
        self._activated &= self._visible

    def add_visible_skill(self, token: str) -> bool:
        """Make one more skill visible; True when it exists."""
        skill_id = self.resolve_skill_id(token, visible_only=False)
        if not skill_id:
            return False
        self._visible.add(skill_id)
        return True

    def remove_visible_skill(self, token: str) -> bool:
        """Hide a visible skill (and deactivate it); True when it was visible."""
        skill_id = self.resolve_skill_id(token)
        if not skill_id:
            return False
        self._visible.discard(skill_id)
        self._activated.discard(skill_id)
        return True

    def visible_skill_ids(self) -> set[str]:
        """A copy of the visible skill ids."""
        return set(self._visible)

    def visible_skill_count(self) -> int:
        """How many skills are visible."""
        return len(self._visible)

    def list_visible_skills(self) -> list[SkillDescriptor]:
        """Visible skills still in the registry, sorted by id."""
        found = (self._registry.get(skill_id) for skill_id in sorted(self._visible))
        return [item for item in found if item is not None]

    def skill_catalog(self) -> list[dict[str, str]]:
        """The compact catalog a model chooses from: id, name and description of each visible skill."""
        return [
            {"id": item.skill_id, "name": item.name, "description": item.description}
            for item in self.list_visible_skills()
        ]

    # -- activation -------------------------------------------------------------

    def set_activated_skills(self, tokens: Iterable[str]) -> None:
        """Make exactly these visible skills active (others are deactivated)."""
        resolved = [self.resolve_skill_id(token) for token in tokens]
        self._activated = {skill_id for skill_id in resolved if skill_id}

    def add_default_activated_skills(self, tokens: Iterable[str]) -> None:
        """Activate the configured default skills that are visible; others are ignored."""
        for token in tokens:
            skill_id = self.resolve_skill_id(token)
            if skill_id:
                self._activated.add(skill_id)

    def activate_skill(self, token: str) -> tuple[bool, str, str]:
        """Activate a visible skill: ``(activated, skill_id, its SKILL.md text)``."""
        with self._trace.opened("skill.activate", attributes={"skill.token": str(token)}) as span:
            skill_id = self.resolve_skill_id(token)
            doc = self._registry.read_skill_doc(skill_id) if skill_id else ""
            if doc:
                self._activated.add(skill_id)
            reason = (
                ""
                if doc
                else ("no visible skill by that id or name" if not skill_id else "its SKILL.md cannot be read")
            )
            self._trace.end_span(
                span, ok=bool(doc), message=reason, attributes={"skill.id": skill_id, "skill.activated": bool(doc)}
            )
        return bool(doc), skill_id, doc

    def activate_skill_by_name(self, skill_name: str) -> tuple[bool, str, str]:
        """Deprecated alias of :meth:`activate_skill`."""
        _deprecated("activate_skill_by_name", "activate_skill")
        return self.activate_skill(skill_name)

    def deactivate_skill(self, token: str) -> tuple[bool, str]:
        """Deactivate a skill: ``(was active, skill_id)``."""
        skill_id = self.resolve_skill_id(token)
        removed = skill_id in self._activated
        self._activated.discard(skill_id)
        if skill_id:
            span = self._trace.start_span("skill.deactivate", attributes={"skill.id": skill_id})
            self._trace.end_span(span, attributes={"skill.deactivated": removed})
        return removed, skill_id

    def deactivate_skill_by_name(self, skill_name: str) -> tuple[bool, str]:
        """Deprecated alias of :meth:`deactivate_skill`."""
        _deprecated("deactivate_skill_by_name", "deactivate_skill")
        return self.deactivate_skill(skill_name)

    def activated_skill_ids(self) -> set[str]:
        """A copy of the active skill ids."""
        return set(self._activated)

    def activated_skill_count(self) -> int:
        """How many skills are active."""
        return len(self._activated)

    def infer_single_script_skill_id(self) -> str:
        """The one active visible skill with a default script, or ``''`` when not exactly one."""
        scripted = [
            skill_id
            for skill_id in sorted(self._activated & self._visible)
            if (info := self._registry.get(skill_id)) is not None and info.script
        ]
        return scripted[0] if len(scripted) == 1 else ""

    def active_hook_skills(self, hook_type: str) -> list[SkillDescriptor]:
        """Visible, active skills declaring ``hook_type``, sorted by id."""
        eligible = self._activated & self._visible
        return [info for info in self._registry.list_hooks(hook_type) if info.skill_id in eligible]

    def activated_skill_content_xml(self) -> str:
        """The documents of the active skills, with their files listed, for the model's context.

        One ``<skill_content name=... id=...>`` block per active skill, read
        from disk now (edits show up at once), separated by blank lines.
        """
        blocks: list[str] = []
        for skill_id in sorted(self._activated & self._visible):
            info = self._registry.get(skill_id)
            doc = self._registry.read_skill_doc(skill_id) if info else ""
            if not info or not doc:
                continue
            lines = [f'<skill_content name="{html.escape(info.name)}" id="{html.escape(skill_id)}">', doc.rstrip("\n")]
            resources = [path for path in info.resource_files() if info.skill_md is None or path != info.skill_md.name]
            if resources:
                lines.append("  <skill_resources>")
                lines += [f"    <file>{html.escape(path)}</file>" for path in resources]
                lines.append("  </skill_resources>")
            lines.append("</skill_content>")
            blocks.append("\n".join(lines))
        return "\n\n".join(blocks)

    # -- documents and files ------------------------------------------------------

    def load_skill_doc(self, skill_id: str) -> str:
        """A visible skill's SKILL.md text; empty when not visible or unreadable."""
        resolved = self.resolve_skill_id(skill_id)
        with self._trace.opened(
            "skill.read_doc", attributes={"skill.token": str(skill_id), "skill.id": resolved}
        ) as span:
            doc = self._registry.read_skill_doc(resolved) if resolved else ""
            self._trace.end_span(
                span,
                ok=bool(doc),
                message="" if doc else "no visible, readable skill document",
                attributes={"file.bytes": len(doc.encode("utf-8"))},
            )
        return doc

    def read_skill_file(self, skill_id: str, relative_path: str) -> str:
        """A file of a visible skill as text; empty when not visible, outside the skill or unreadable."""
        resolved = self.resolve_skill_id(skill_id)
        with self._trace.opened(
            "skill.read_file",
            attributes={"skill.token": str(skill_id), "skill.id": resolved, "file.path": str(relative_path)},
        ) as span:
            info = self._registry.get(resolved) if resolved else None
            text = ""
            problem = "" if info else "no visible skill by that id or name"
            if info is not None:
                try:
                    text = self._registry.skill_file_text(info.skill_id, relative_path)
                except SkillPathError as exc:
                    problem = str(exc)
                except OSError:
                    problem = "no readable file at that path in the skill"
            self._trace.end_span(
                span, ok=not problem, message=problem, attributes={"file.bytes": len(text.encode("utf-8"))}
            )
        return text

    def resolve_skill_path(self, path: str | os.PathLike[str]) -> tuple[str, str] | None:
        """Map a path onto ``(skill_id, relative_path)`` of an existing file of a visible skill, or None.

        First by containment (the path lies inside a visible skill's folder),
        then by a path segment equal to a visible skill's id or name, the rest
        of the path naming a file under that skill (``.../skills/x/references/a.md``).
        """
        visible = self.list_visible_skills()
        raw = str(path)
        if "\x00" in raw:
            return None
        target = os.path.realpath(os.path.expanduser(raw))
        for info in visible:
            base = os.path.realpath(info.root)
            if target.startswith(base + os.sep) and os.path.isfile(target):
                return info.skill_id, Path(os.path.relpath(target, base)).as_posix()
        by_segment: dict[str, SkillDescriptor] = {}
        for info in visible:
            by_segment.setdefault(info.name, info)
            by_segment[info.skill_id] = info
        parts = [part for part in Path(raw).parts if part not in ("", "/", ".")]
        for index, part in enumerate(parts[:-1]):
            owner = by_segment.get(part)
            if owner is None:
                continue
            relative = Path(*parts[index + 1 :]).as_posix()
            try:
                if resolve_inside(owner.root, relative).is_file():
                    return owner.skill_id, relative
            except SkillPathError:
                continue
        return None

    # -- scripts and hooks (run by the ScriptRunner) ------------------------------

    async def run_skill_script(
        self, skill_id: str, script_path: str, argv: Sequence[str], *, timeout_sec: float = DEFAULT_TIMEOUT_SEC
    ) -> ScriptRunResult:
        """Run a script of a visible skill in a confined process (:meth:`.ScriptRunner.run_skill_script`)."""
        return await self._scripts.run_skill_script(skill_id, script_path, argv, timeout_sec=timeout_sec)

    async def run_skill_hook(
        self, skill_id: str, hook_type: str, argv: Sequence[str], *, timeout_sec: float = DEFAULT_TIMEOUT_SEC
    ) -> ScriptRunResult:
        """Run the ``hook_type`` hook (``pre_step``, ``post_step``, any declared type) of a visible skill."""
        return await self._scripts.run_skill_hook(skill_id, hook_type, argv, timeout_sec=timeout_sec)

    async def run_active_hooks(
        self,
        hook_type: str,
        argv: Sequence[str] = (),
        *,
        timeout_sec: float = DEFAULT_TIMEOUT_SEC,
        skill_ids: Collection[str] | None = None,
    ) -> dict[str, ScriptRunResult]:
        """Run ``hook_type`` of every visible, active skill declaring it (of ``skill_ids``, when given), concurrently;
        results by skill id."""
        skills = [
            info for info in self.active_hook_skills(hook_type) if skill_ids is None or info.skill_id in skill_ids
        ]
        results = await asyncio.gather(
            *(self.run_skill_hook(info.skill_id, hook_type, argv, timeout_sec=timeout_sec) for info in skills)
        )
        return {info.skill_id: result for info, result in zip(skills, results)}

    def run_skill_script_sync(
        self, skill_id: str, script_path: str, argv: Sequence[str], *, timeout_sec: float = DEFAULT_TIMEOUT_SEC
    ) -> ScriptRunResult:
        """:meth:`run_skill_script` for synchronous callers (not inside a running event loop)."""
        return run_sync(
            self.run_skill_script(skill_id, script_path, argv, timeout_sec=timeout_sec), "run_skill_script_sync"
        )

    def run_skill_hook_sync(
        self, skill_id: str, hook_type: str, argv: Sequence[str], *, timeout_sec: float = DEFAULT_TIMEOUT_SEC
    ) -> ScriptRunResult:
        """:meth:`run_skill_hook` for synchronous callers (not inside a running event loop)."""
        return run_sync(self.run_skill_hook(skill_id, hook_type, argv, timeout_sec=timeout_sec), "run_skill_hook_sync")

    # -- saved state -------------------------------------------------------------

    def to_state(self) -> dict[str, object]:
        """This agent's skill state as JSON-ready data (restore with :meth:`load_state`)."""
        return {
            "version": STATE_VERSION,
            "agent_id": self.agent_id,
            "visible": sorted(self._visible),
            "activated": sorted(self._activated),
            "saved_at": time.time(),
        }

    def load_state(self, state: dict[str, Any]) -> list[str]:
        """Restore visible and active skills saved by :meth:`to_state`.

        Skills the registry no longer has are dropped (with a warning); returns their ids.
        """
        visible = [str(item) for item in state.get("visible", [])]
        activated = [str(item) for item in state.get("activated", [])]
        known = {skill_id for skill_id in visible if self._registry.get(skill_id) is not None}
        dropped = sorted(set(visible) - known)
        self._visible = known
        self._activated = {skill_id for skill_id in activated if skill_id in known}
        if dropped:
            warnings.warn(
                f"agent {self.agent_id}: saved skills no longer registered: {', '.join(dropped)}", stacklevel=2
            )
        return dropped

    @classmethod
    def from_state(
        cls, state: dict[str, Any], registry: SkillRegistryLike, *, agent_id: int | str | None = None, **kwargs: Any
    ) -> AgentSkillRuntime:
        """A new runtime with the visible and active skills of ``state``."""
        runtime = cls(state.get("agent_id", "") if agent_id is None else agent_id, registry, **kwargs)
        runtime.load_state(state)
        return runtime


def _deprecated(old: str, new: str) -> None:
    warnings.warn(f"AgentSkillRuntime.{old}() is deprecated; use {new}()", DeprecationWarning, stacklevel=3)
