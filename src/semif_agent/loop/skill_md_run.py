"""Running a SKILL.md leaf: what ``semif run`` does when the route ends at a SKILL.md skill.

A SKILL.md skill is instructions for a model, not code. Who follows them is a
:class:`SkillMdExecutor`:

- with a model, the Agent does, with the skill activated (its executor lives
  in :mod:`semif_agent.assistant.skill_runs`; the command line passes it in);
- without one, :func:`show_instructions` says which skill fits and hands
  back its instructions, or runs the skill's ``script`` entry point in the
  sandbox when the skill declares one and scripts are allowed
  (``[skills] allow_scripts = true`` or ``semif run --allow-scripts``).

Either way the run is observed, assessed and logged like a code skill's; a
run that only handed the instructions back is ``unclear`` (nobody acted on
them yet), so it never counts against the route that chose the skill.
"""

from __future__ import annotations

import warnings
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Protocol

from .._text import clip
from ..catalog.errors import SkillCatalogWarning, SkillParseError
from ..catalog.frontmatter import read_document
from ..catalog.loader import load_skill
from ..catalog.registry import SkillCatalog
from ..catalog.runtime import AgentSkillRuntime
from ..engine.base import Engine
from ..engine.decisions import DecisionRequest, DecisionResult
from ..skills import ActionResult, Request
from ..tree.manifests import SkillManifest
from ..workspace import Workspace

SCRIPT_TIMEOUT = 60.0
_EXCERPT = 2000


@dataclass
class SkillMdRun:
    """What an executor is given: the request, the leaf, the workspace, and how to log a decision."""

    request: Request
    leaf: SkillManifest
    workspace: Workspace
    run_id: str
    allow_scripts: bool = False
    log_decision: Callable[[DecisionRequest, DecisionResult, str], None] = lambda asked, answer, kind: None

    @property
    def folder(self) -> Path:
        if self.leaf.source is None:
            raise SkillParseError("the leaf names no SKILL.md", path=self.leaf.name)
        return self.leaf.source.parent

    def instructions(self) -> str:
        """The SKILL.md body (read now, so an edit is seen)."""
        if self.leaf.source is None:
            return ""
        return read_document(self.leaf.source).body.strip()


@dataclass
class SkillMdOutcome:
    """What following the skill did.

    ``instructions`` is set when they were handed back, not followed;
    ``judge`` is the engine that should assess the run (the model's judge,
    when a model followed them), else the runner's.
    """

    action: ActionResult
    instructions: str | None = None
    details: dict[str, Any] = field(default_factory=dict)
    judge: Engine | None = None


class SkillMdExecutor(Protocol):
    async def __call__(self, run: SkillMdRun) -> SkillMdOutcome: ...


async def show_instructions(run: SkillMdRun) -> SkillMdOutcome:
    """No model: run the skill's script when it has one and scripts are allowed, else hand back its instructions."""
    leaf, text = run.leaf, run.request.text
    try:
        instructions = run.instructions()
    except (OSError, SkillParseError) as exc:
        reason = getattr(exc, "reason", None) or getattr(exc, "strerror", None) or str(exc)
        return SkillMdOutcome(ActionResult(f"{leaf.name}: cannot read {leaf.source}: {reason}", text))
    loaded = load_skill(run.folder, namespace="custom", source="workspace", source_label=str(run.folder))
    script = loaded.descriptor.script if loaded.descriptor is not None else None
    if script and run.allow_scripts:
        return await _run_script(run, script)
    where = f"{leaf.name} ({leaf.source})"
    if script:
        note = (
            f"{where} is a SKILL.md skill with a script ({script}), but scripts are not allowed "
            "(--allow-scripts or [skills] allow_scripts = true) and no model is configured; its instructions are shown."
        )
    else:
        note = f"{where} is a SKILL.md skill and no model is configured to follow it; its instructions are shown."
    return SkillMdOutcome(ActionResult(note, text), instructions=instructions)


async def _run_script(run: SkillMdRun, script: str) -> SkillMdOutcome:
    registry = SkillCatalog()
    with warnings.catch_warnings():  # what its name breaks was said when the tree was refreshed
        warnings.simplefilter("ignore", SkillCatalogWarning)
        skill_id = registry.register_folder(run.folder, source="workspace", source_label=str(run.folder))
    runtime = AgentSkillRuntime("semif-run", registry)
    runtime.add_visible_skill(skill_id)
    runtime.bind_workspace(workspace_root=run.workspace.root)
    result = await runtime.run_skill_script(skill_id, "", [run.request.text], timeout_sec=SCRIPT_TIMEOUT)
    output = _excerpt(result.stdout)
    if result.ok:
        log = f"{run.leaf.name}: ran its script {script} (exit 0): {output or 'no output'}"
        return SkillMdOutcome(ActionResult(log, output or run.request.text), details=result.as_dict())
    log = (
        f"{run.leaf.name}: its script {script} failed ({result.error_type}, exit {result.exit_code}): "
        f"{_excerpt(result.stderr) or output or 'no output'}"
    )
    return SkillMdOutcome(ActionResult(log, run.request.text), details=result.as_dict())


def _excerpt(text: str) -> str:
    return clip(text, _EXCERPT, one_line=False)
