"""The exceptions and warnings of the SKILL.md catalog, rooted in :class:`~semif_agent.errors.SemifError`.

::

    SemifError
    ├── UserError
    │   ├── SkillParseError            a SKILL.md without frontmatter, or with broken YAML
    │   ├── SkillPathError             a path that leaves its skill or workspace (one uniform message)
    │   ├── SkillCollisionError        registering an id that is already taken
    │   ├── SkillsPathNotFound         a path given to a command does not exist
    │   ├── CallTargetError            a confined call's target is not a function of this package
    │   └── UnknownSkillError
    │       └── SkillNotFound          no SKILL.md skill with that id or name
    └── CatalogError                   the catalog machinery failed at run time
        ├── RuntimeNotBound            a runtime used before ``bind_workspace``
        ├── WorkerError                the warm worker pool cannot start
        └── ChannelError               a confined call's question got an error, not an answer

    UserWarning
    └── SkillCatalogWarning            lenient loading: a skill loaded with a problem, skipped, or shadowed
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


class CallTargetError(UserError):
    """:meth:`~.worker.WorkerPool.call` was given a target that is not ``semif_agent.<module>:<function>``."""


class CatalogError(SemifError):
    """The catalog machinery failed at run time."""


class RuntimeNotBound(CatalogError):
    """An :class:`AgentSkillRuntime` needs ``bind_workspace`` before it can run scripts."""


class WorkerError(CatalogError):
    """The warm worker pool could not start a worker process."""


class ChannelError(CatalogError):
    """Raised inside a confined call by ``channel.ask``: the host's handler failed, or the channel closed."""


class SkillCatalogWarning(UserWarning):
    """A skill loaded despite a problem, was skipped, or was shadowed by another."""
