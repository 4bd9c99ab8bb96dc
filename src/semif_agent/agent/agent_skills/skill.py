"""Skills for the agent: :class:`Skill`, a named group of instructions and tools the model turns on when it needs them.

::

    from semif_agent.agent import Agent, Skill, tool

    @tool
    def convert(path: str) -> str:
        \"\"\"Convert a spreadsheet to CSV.\"\"\"
        ...

    sheets = Skill(name="spreadsheets", description="Read and convert spreadsheets. Use for .xlsx files.",
                   instructions="Always keep the header row.", tools=(convert,), activation="on_demand")
    agent = Agent(llm=provider).with_skill(sheets).with_skills("skills/")

A skill is either made in Python or read from a SKILL.md folder
(:meth:`Skill.from_path`, ``Agent.with_skills``); both kinds live
in one catalog (:class:`semif_agent.catalog.SkillCatalog`) and one
per-agent runtime (:class:`semif_agent.catalog.AgentSkillRuntime`), held by
the agent's :class:`~semif_agent.agent.agent_skills.registry.SkillRegistry`.

Progressive disclosure: an ``always`` skill's instructions are in the
system prompt and its tools available from the start; an ``on_demand``
skill is only listed (name and description) until the model calls
``activate_skill``; its instructions then join the system prompt and its
tools the tool list, for the rest of the session. ``allowed_tools``
(SKILL.md ``allowed-tools``) restricts the agent's other tools while the
skill is active.
"""

from __future__ import annotations

import os
import re
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Literal

from pydantic import ConfigDict, Field, field_validator, model_validator

from ...catalog.descriptor import SkillDescriptor
from ...catalog.environment import ENV_PREFIX, is_env_skill
from ...catalog.errors import SkillParseError
from ...catalog.frontmatter import read_document
from ...catalog.loader import find_skill_md, load_skill
from .._validated import ValidatedModel
from ..tools import AgentTool

PYTHON_NAMESPACE = "python"
"""The catalog namespace of skills made in Python (``python@<name>``)."""

_NAME = re.compile(r"^\S{1,64}$")

Activation = Literal["always", "on_demand"]


class Skill(ValidatedModel):
    """A named group of instructions and tools (frozen).

    The first six fields are the Agent API's; ``license``,
    ``compatibility``, ``metadata`` and ``allowed_tools`` are SKILL.md's,
    and ``path`` is the skill's folder when it has one (its files can then
    be read, and its scripts run when allowed). ``environment`` names the
    host environment that answers the skill's scripts and hooks instead of
    running them (an ``env:<environment>@<name>`` skill, see
    :mod:`semif_agent.catalog.environment`); a skill read from a catalog's
    environment skills has it set.

    ``instructions`` is what activation puts in the system prompt (a
    SKILL.md skill's body). ``allowed_tools`` holds tool-name patterns
    (``Read``, ``Bash(git:*)``, ``mcp__*``); while the skill is active, the
    calls of the agent's other tools they do not allow are refused. ``tags`` help search.
    """

    model_config = ConfigDict(frozen=True, arbitrary_types_allowed=True)

    name: str
    description: str
    instructions: str = ""
    tools: tuple[AgentTool, ...] = ()
    activation: Activation = "always"
    tags: tuple[str, ...] = ()
    license: str | None = None
    compatibility: str | None = None
    metadata: Mapping[str, str] = Field(default_factory=dict)
    allowed_tools: tuple[str, ...] = ()
    path: Path | None = None
    environment: str | None = None

    @field_validator("name")
    @classmethod
    def _check_name(cls, name: str) -> str:
        if not _NAME.match(name):
            raise ValueError(f"skill name {name!r} must be 1-64 characters without spaces")
        return name

    @field_validator("environment")
    @classmethod
    def _check_environment(cls, environment: str | None) -> str | None:
        if environment is not None and (not _NAME.match(environment) or "@" in environment):
            raise ValueError(f"environment {environment!r} must be 1-64 characters without spaces or '@'")
        return environment

    @field_validator("description")
    @classmethod
    def _check_description(cls, description: str) -> str:
        if not description.strip():
            raise ValueError("a skill needs a description: it is how the model finds it")
        return description.strip()

    @model_validator(mode="after")
    def _check_tools(self) -> Skill:
        names = [t.name for t in self.tools]
        dupes = sorted({n for n in names if names.count(n) > 1})
        if dupes:
            raise ValueError(f"skill {self.name!r} has several tools named {', '.join(dupes)}")
        return self

    @property
    def tool_names(self) -> tuple[str, ...]:
        return tuple(t.name for t in self.tools)

    @classmethod
    def from_path(
        cls,
        path: str | os.PathLike[str],
        *,
        activation: Activation = "on_demand",
        tools: tuple[AgentTool, ...] = (),
        tags: tuple[str, ...] = (),
    ) -> Skill:
        """The skill in a SKILL.md folder (loaded leniently, as the catalog loads it).

        Raises :class:`~semif_agent.catalog.SkillParseError` when it cannot be
        loaded at all (no SKILL.md, no frontmatter, no description).
        """
        folder = Path(path).expanduser().resolve()
        result = load_skill(folder, namespace="custom", source="python", source_label=str(folder))
        if result.descriptor is None:
            raise SkillParseError(result.skipped or "no SKILL.md", path=str(folder))
        return cls.from_descriptor(result.descriptor, activation=activation, tools=tools, tags=tags)

    @classmethod
    def from_descriptor(
        cls,
        descriptor: SkillDescriptor,
        *,
        activation: Activation = "on_demand",
        tools: tuple[AgentTool, ...] = (),
        tags: tuple[str, ...] = (),
    ) -> Skill:
        """The skill a catalog descriptor describes; its instructions are its SKILL.md body."""
        return cls(
            name=descriptor.name,
            description=descriptor.description,
            instructions=skill_body(descriptor),
            tools=tools,
            activation=activation,
            tags=tags,
            license=descriptor.license,
            compatibility=descriptor.compatibility,
            metadata=dict(descriptor.metadata),
            allowed_tools=descriptor.allowed_tools,
            path=descriptor.root if descriptor.skill_md is not None else None,
            environment=descriptor.namespace[len(ENV_PREFIX) :] if is_env_skill(descriptor.namespace) else None,
        )


def skill_from_tools(
    name: str,
    description: str,
    tools: Sequence[AgentTool],
    *,
    instructions: str = "",
    activation: Activation = "always",
    tags: Sequence[str] = (),
) -> Skill:
    """A ``Skill`` named ``name`` made of ``tools``: how ready-made tool groups (memory, retrieval) become a skill."""
    return Skill(
        name=name,
        description=description,
        instructions=instructions,
        tools=tuple(tools),
        activation=activation,
        tags=tuple(tags),
    )


def skill_body(descriptor: SkillDescriptor) -> str:
    """The SKILL.md body of ``descriptor`` (empty when it has none or it cannot be read)."""
    if descriptor.skill_md is None:
        return ""
    try:
        return read_document(descriptor.skill_md).body.strip()
    except SkillParseError:
        return ""


def has_skill_md(skill: Skill) -> bool:
    """True when ``skill`` lives in a SKILL.md folder (the catalog loads it from there)."""
    return skill.path is not None and find_skill_md(skill.path) is not None


def catalog_namespace(skill: Skill) -> str | None:
    """The catalog namespace ``skill`` must be entered in to keep its routing (``env:<environment>``), if any."""
    return f"{ENV_PREFIX}{skill.environment}" if skill.environment else None


def python_descriptor(skill: Skill) -> tuple[SkillDescriptor, str]:
    """The catalog entry of a skill made in Python, and the document that stands in for its SKILL.md.

    The document is the instructions (the description when there are
    none), so activation reads it like any skill's. A skill without a folder
    gets a root that names it and does not exist: it has no files.
    """
    root = Path(skill.path).resolve() if skill.path is not None else Path(f"<python-skill:{skill.name}>")
    namespace = catalog_namespace(skill) or PYTHON_NAMESPACE
    descriptor = SkillDescriptor(
        skill_id=f"{namespace}@{skill.name}",
        name=skill.name,
        namespace=namespace,
        description=skill.description,
        root=root,
        source="python",
        source_label="python",
        license=skill.license,
        compatibility=skill.compatibility,
        metadata=dict(skill.metadata),
        allowed_tools=tuple(skill.allowed_tools),
    )
    return descriptor, skill.instructions.strip() or skill.description


def describe_for_search(skill: Skill) -> str:
    """The text a skill is searched by: its description and tags."""
    tags = f" ({', '.join(skill.tags)})" if skill.tags else ""
    return f"{skill.description}{tags}"
