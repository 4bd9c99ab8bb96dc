"""The exceptions semif-agent raises, all rooted in :class:`SemifError`.

Standard library only: the kernel imports this module.

::

    SemifError
    ├── UserError                  a caller's mistake; the CLI prints it as one line
    │   ├── WorkspaceError         no workspace, bad semif.toml, unknown data dir
    │   ├── ManifestError          a bad entry in data/categories.json
    │   ├── UnknownSkillError      no leaf of that name
    │   ├── EngineConfigError      unknown engine, missing extra, bad engine settings
    │   └── SyncInAsyncError       a sync API called inside a running event loop
    ├── DecisionError              an engine could not decide (no `none` option to fall back on)
    ├── SkillError                 a code skill misbehaved
    │   ├── SkillLoadError         a body that does not compile or import
    │   ├── SkillContractError     a body without predict/act, or wrong return types
    │   ├── BudgetExceeded         more engine calls than the skill's cost_budget
    │   └── WriteRefused           a write outside the data dirs (also a PermissionError)
    └── LogError                   the decision log cannot be written or read

Errors that wrap a lower-level failure keep it as ``__cause__``.
"""

from __future__ import annotations


class SemifError(Exception):
    """Base of every exception semif-agent raises on purpose."""


class UserError(SemifError):
    """A caller's mistake: shown to the user as one line, never a traceback."""


class WorkspaceError(UserError):
    """The workspace is missing or its settings are invalid."""


class ManifestError(UserError):
    """An entry of ``data/categories.json`` is invalid.

    ``file`` and ``entry`` say where; the loader reports it and skips that entry.
    """

    def __init__(self, message: str, *, file: str = "", entry: str = "") -> None:
        self.file = file
        self.entry = entry
        where = ", ".join(p for p in (file, f"entry {entry!r}" if entry else "") if p)
        super().__init__(f"{where}: {message}" if where else message)


class UnknownSkillError(UserError):
    """No skill of that name exists in the tree."""


class EngineConfigError(UserError):
    """An engine cannot be built: unknown name, missing extra, or bad settings."""


class SyncInAsyncError(UserError):
    """A sync method (``run``, ``invoke``, ``stream``, ``call``) was called inside a running event loop."""


class DecisionError(SemifError):
    """An engine could not choose and the request offered no ``none`` option."""


class SkillError(SemifError):
    """A code skill failed to load or broke its contract."""


class SkillLoadError(SkillError):
    """A skill body could not be compiled or imported."""


class SkillContractError(SkillError):
    """A skill body lacks ``predict``/``act`` or returned the wrong types."""


class BudgetExceeded(SkillError):
    """A skill made more engine calls than its ``cost_budget`` allows."""


class WriteRefused(SkillError, PermissionError):
    """A skill tried to write outside the configured data dirs (or to start a process).

    Also a ``PermissionError``, so code that handles an unwritable path handles this too.
    """


class LogError(SemifError):
    """The decision log could not be written or read."""
