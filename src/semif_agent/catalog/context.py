"""What a skill script's ``entrypoint(argv, ctx)`` receives: :class:`SkillScriptContext`.

Standard library only: the warm worker imports this module to build the context.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path


@dataclass(frozen=True)
class SkillScriptContext:
    """Per-call context handed to a skill script's ``entrypoint(argv, ctx)``.

    It carries what the subprocess path puts in the environment, so an
    entrypoint needs no global state.

    Attributes:
        workspace_root: This agent's workspace (``AGENT_WORK_DIR``); also the working directory.
        skill_dir: The skill's folder (``SKILL_DIR``).
        skill_id: Registry skill id (``SKILL_ID``).
        skill_name: Display name (``SKILL_NAME``).
        env: The environment the call runs with.
        hook_type: The lifecycle hook being run (``SKILL_HOOK``), empty for a plain script.
    """

    workspace_root: Path
    skill_dir: Path
    skill_id: str
    skill_name: str
    env: dict[str, str] = field(default_factory=dict)
    hook_type: str = ""
