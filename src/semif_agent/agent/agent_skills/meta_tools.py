"""The meta-tools the model uses on skills, and the ``allowed-tools`` gate.

- ``activate_skill(name)``: turn an on-demand skill on for the rest of the
  session. Its ``name`` schema is an enum of the skills the model has been
  shown (see :mod:`.discovery`); any registered skill is accepted.
- ``read_skill_file(name, path)``: a file of a skill's folder (its
  ``references/``, ``assets/``, ...), confined to that folder.
- ``run_skill_script(name, script, args)``: a script of an active skill, in
  the catalog runtime's sandbox; present only when some skill's scripts are
  allowed (``with_skills(path, allow_scripts=True)``).

While an active skill declares ``allowed-tools``, calls its patterns do
not allow are refused, and a call must be allowed by every such skill (the
model gets the reason as an error result): see
:mod:`semif_agent.agent.allowed_tools`. The skill meta-tools, the
active skills' own tools, ``task``, ``search_tools`` and ``final_result``
are always allowed, each only as the tool its own toolset provides.
"""

from __future__ import annotations

import json
from collections.abc import Iterable
from typing import TYPE_CHECKING

from pydantic import BaseModel, Field

from ...errors import InvalidArgumentError
from .._schema import model_schema
from ..errors import AgentError
from ..tools import AgentTool

if TYPE_CHECKING:
    from .registry import SkillRegistry

ACTIVATE_SKILL = "activate_skill"
READ_SKILL_FILE = "read_skill_file"
RUN_SKILL_SCRIPT = "run_skill_script"
MAX_LISTED_FILES = 40


class _ActivateInput(BaseModel):
    name: str = Field(description="The name of the skill to activate.")


class _ReadInput(BaseModel):
    name: str = Field(description="The skill's name.")
    path: str = Field(description="The file's path inside the skill folder, e.g. references/guide.md.")


class _RunInput(BaseModel):
    name: str = Field(description="The (active) skill's name.")
    script: str = Field(
        default="", description="The script's path inside the skill folder; empty for the skill's default script."
    )
    args: list[str] = Field(default_factory=list, description="Command-line arguments for the script.")


def activate_tool(registry: SkillRegistry, offered: Iterable[str]) -> AgentTool:
    """``activate_skill``, its ``name`` an enum of ``offered`` (when there are any).

    Each activation the model makes is recorded by the registry's discovery
    (a training row when it has a decision log), with what it was offered.
    """
    names = sorted(set(offered))
    schema = model_schema(_ActivateInput)
    if names:
        schema["properties"]["name"]["enum"] = names
    schema["additionalProperties"] = False

    async def activate_skill(name: str) -> str:
        skill = registry.get(name)
        if skill is None:
            raise InvalidArgumentError(
                f"no skill named {name!r}; look for one with search_skills, or use a listed name"
            )
        if skill.activation == "always":
            return f"Skill {name!r} is always active: its instructions are already in your system prompt."
        if registry.is_active(name):
            return f"Skill {name!r} is already active."
        registry.activate(name)
        registry.discovery.record_activation(name, names)
        lines = [
            f"Skill {name!r} is now active. Its instructions are in your system prompt "
            f'(<skill_content name="{name}">): read them and follow them.'
        ]
        if skill.tools:
            lines.append(f"Its tools are now available: {', '.join(skill.tool_names)}.")
        if skill.allowed_tools:
            patterns = " ".join(skill.allowed_tools)
            lines.append(f"While it is active, other tools run only as these patterns allow: {patterns}.")
        files = _files(registry, name)
        if files:
            lines.append(f"Its files (read them with {READ_SKILL_FILE}): {', '.join(files)}.")
        return "\n".join(lines)

    return AgentTool(
        name=ACTIVATE_SKILL,
        fn=activate_skill,
        input_model=_ActivateInput,
        input_schema=schema,
        description="Activate a skill by name: its instructions (and tools) become available for the rest of the conversation. "
        "Activate the skill whose description matches the task before doing the task.",
    )


def read_file_tool(registry: SkillRegistry) -> AgentTool:
    async def read_skill_file(name: str, path: str) -> str:
        return registry.read_file(name, path)

    return AgentTool(
        name=READ_SKILL_FILE,
        fn=read_skill_file,
        input_model=_ReadInput,
        read_only=True,
        input_schema=model_schema(_ReadInput),
        description="Read a file inside a skill's folder (a reference, template or script its instructions mention).",
    )


def run_script_tool(registry: SkillRegistry) -> AgentTool:
    async def run_skill_script(name: str, script: str = "", args: list[str] | None = None) -> str:
        result = await registry.run_script(name, script, args or ())
        report = json.dumps(
            {"exit_code": result.exit_code, "stdout": result.stdout, "stderr": result.stderr}, ensure_ascii=False
        )
        if not result.ok:
            raise AgentError(f"the script failed ({result.error_type}): {report}")
        return report

    return AgentTool(
        name=RUN_SKILL_SCRIPT,
        fn=run_skill_script,
        input_model=_RunInput,
        input_schema=model_schema(_RunInput),
        description="Run a script of an active skill in a sandbox (its instructions say which, and with what arguments).",
    )


def _files(registry: SkillRegistry, name: str) -> list[str]:
    descriptor = registry.catalog.get(registry.skill_id(name))
    if descriptor is None or descriptor.skill_md is None:
        return []
    files = [path for path in descriptor.resource_files() if path != descriptor.skill_md.name]
    return files[:MAX_LISTED_FILES]
