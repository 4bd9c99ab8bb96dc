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

from typing import TYPE_CHECKING

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

if TYPE_CHECKING:  # what a type checker sees: the same names, from the same modules
    from semif_agent.sandbox.limits import SandboxLimits as SandboxLimits
    from semif_agent.sandbox.pool import WorkerPool as WorkerPool
    from semif_agent.sandbox.results import ErrorType as ErrorType
    from semif_agent.sandbox.results import ScriptRunResult as ScriptRunResult

    from .context import SkillScriptContext as SkillScriptContext
    from .descriptor import SkillDescriptor as SkillDescriptor
    from .environment import EnvironmentQuery as EnvironmentQuery
    from .environment import EnvironmentRouter as EnvironmentRouter
    from .errors import CatalogError as CatalogError
    from .errors import NoEnvironmentRouter as NoEnvironmentRouter
    from .errors import RuntimeNotBound as RuntimeNotBound
    from .errors import SkillCatalogWarning as SkillCatalogWarning
    from .errors import SkillCollisionError as SkillCollisionError
    from .errors import SkillNotFound as SkillNotFound
    from .errors import SkillParseError as SkillParseError
    from .errors import SkillPathError as SkillPathError
    from .errors import SkillsPathNotFound as SkillsPathNotFound
    from .frontmatter import SkillDocument as SkillDocument
    from .frontmatter import parse_document as parse_document
    from .frontmatter import split_document as split_document
    from .fs import WorkspaceFS as WorkspaceFS
    from .listing import build_registry as build_registry
    from .listing import list_skill_rows as list_skill_rows
    from .listing import show_skill as show_skill
    from .loader import LoadResult as LoadResult
    from .loader import find_skill_md as find_skill_md
    from .loader import load_skill as load_skill
    from .locations import SkillLocation as SkillLocation
    from .locations import conventional_locations as conventional_locations
    from .locations import user_skills_dir as user_skills_dir
    from .registry import RefreshReport as RefreshReport
    from .registry import SkillCatalog as SkillCatalog
    from .registry import SkillIssue as SkillIssue
    from .runtime import AgentSkillRuntime as AgentSkillRuntime
    from .trace import JsonlTraceWriter as JsonlTraceWriter
    from .trace import MemoryTraceWriter as MemoryTraceWriter
    from .trace import NullTraceWriter as NullTraceWriter
    from .trace import TraceWriter as TraceWriter
    from .trace import read_spans as read_spans
    from .validate import ValidationReport as ValidationReport
    from .validate import validate_paths as validate_paths
    from .validate import validate_skill as validate_skill
else:  # at run time each name is imported on first use
    __getattr__, __dir__ = lazy_namespace(__name__, _EXPORTS, globals())
