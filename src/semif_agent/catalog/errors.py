"""The exceptions and warnings of the SKILL.md catalog; the whole tree is drawn in :mod:`semif_agent.errors`.

A caller's mistake (a broken SKILL.md, a path out of its skill, a taken id)
is a :class:`~semif_agent.errors.UserError`; the machinery failing at run
time is a :class:`CatalogError`; lenient loading warns with
:class:`SkillCatalogWarning` instead of raising.
"""

from __future__ import annotations

from ..errors import SemifError, UnknownSkillError, UserError


class SkillParseError(UserError):
    """A SKILL.md has no frontmatter block, or its YAML cannot be parsed.

    ``path`` and ``line`` (1-based, 0 when unknown) say where.
    """

    def __init__(self, message: str, *, path: str = "", line: int = 0) -> None:
        self.path = path
        self.line = line
        self.reason = message
        where = f"{path}:{line}" if path and line else path
        super().__init__(f"{where}: {message}" if where else message)


class SkillPathError(UserError):
    """A path leaves the folder it must stay in.

    Every escape (``..``, absolute, symlink out, percent-encoded, NUL byte)
    carries the same message, which names nothing of the host.
    """


class SkillCollisionError(UserError):
    """A skill id registered from Python is already taken (pass ``replace=True`` to override)."""


class SkillsPathNotFound(UserError):
    """A path given to a catalog command does not exist."""


class SkillNotFound(UnknownSkillError):
    """No SKILL.md skill has that id or display name (or the name is ambiguous)."""


class CatalogError(SemifError):
    """The catalog machinery failed at run time."""


class RuntimeNotBound(CatalogError):
    """An :class:`AgentSkillRuntime` needs ``bind_workspace`` before it can run scripts."""


class NoEnvironmentRouter(CatalogError):
    """An environment skill (``env:...``) was run, and its runtime has no environment router to ask."""


class SkillCatalogWarning(UserWarning):
    """A skill loaded despite a problem, was skipped, or was shadowed by another."""
