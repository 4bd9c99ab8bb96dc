"""SKILL.md skills: parse, validate, catalog, and run them per agent.

- Parse and validate: :func:`parse_document` (frontmatter and body),
  :func:`validate_skill` / :func:`validate_paths` (strict, every error),
  :func:`load_skill` (lenient, as the catalog loads).
- Catalog: :class:`SkillCatalog` (shared, read-only for agents) of
  :class:`SkillDescriptor` objects; :func:`conventional_locations` and their precedence.
- Per agent: :class:`AgentSkillRuntime` (visibility, activation, documents,
  scripts and hooks in confined processes, :class:`ScriptRunResult`,
  :class:`SkillScriptContext`; the sandbox's :class:`SandboxLimits` and
  :class:`WorkerPool`, from :mod:`semif_agent.sandbox`, re-exported here);
  environment skills (``env:<name>@...``) answered by the host's
  :class:`EnvironmentRouter` (``ask_env``, given an :class:`EnvironmentQuery`).
- Traces: :class:`JsonlTraceWriter`, :class:`MemoryTraceWriter`, :func:`read_spans`.
- For commands: :func:`list_skill_rows`, :func:`show_skill`.

Names load on first use, so the warm worker can import this package's small
modules without pulling in the rest.
"""

from __future__ import annotations

from .._lazy import lazy_namespace

_EXPORTS = {
    # parse and validate
    "parse_document": ".frontmatter",
    "split_document": ".frontmatter",
    "SkillDocument": ".frontmatter",
    "validate_skill": ".validate",
    "validate_paths": ".validate",
    "ValidationReport": ".validate",
    "load_skill": ".loader",
    "find_skill_md": ".loader",
    "LoadResult": ".loader",
    # the catalog
    "SkillCatalog": ".registry",
    "SkillIssue": ".registry",
    "RefreshReport": ".registry",
    "SkillDescriptor": ".descriptor",
    "SkillLocation": ".locations",
    "conventional_locations": ".locations",
    "user_skills_dir": ".locations",
    # per agent
    "AgentSkillRuntime": ".runtime",
    "ScriptRunResult": "semif_agent.sandbox.results",
    "ErrorType": "semif_agent.sandbox.results",
    "SkillScriptContext": ".context",
    "SandboxLimits": "semif_agent.sandbox.limits",
    "WorkerPool": "semif_agent.sandbox.pool",
    "WorkspaceFS": ".fs",
    "EnvironmentRouter": ".environment",
    "EnvironmentQuery": ".environment",
    # traces
    "TraceWriter": ".trace",
    "JsonlTraceWriter": ".trace",
    "MemoryTraceWriter": ".trace",
    "NullTraceWriter": ".trace",
    "read_spans": ".trace",
    # for commands
    "list_skill_rows": ".listing",
    "show_skill": ".listing",
    "build_registry": ".listing",
    # errors and warnings
    "SkillParseError": ".errors",
    "SkillPathError": ".errors",
    "SkillNotFound": ".errors",
    "SkillCollisionError": ".errors",
    "SkillsPathNotFound": ".errors",
    "SkillCatalogWarning": ".errors",
    "CatalogError": ".errors",
    "RuntimeNotBound": ".errors",
    "NoEnvironmentRouter": ".errors",
}

__all__ = sorted(_EXPORTS)

__getattr__, __dir__ = lazy_namespace(__name__, _EXPORTS, globals())
