"""Every exception semif-agent raises, rooted in :class:`SemifError`: the one drawing of the tree.

Standard library only: the kernel imports this module. The classes of the
upper layers live beside their code (listed under the tree) and are drawn
here too; no other docstring repeats the tree. "Also X" means the class is
also the standard exception X, so code that catches X keeps working.

::

    SemifError                          anything semif-agent raises on purpose
    ├── UserError                       a caller's mistake; the CLI prints it as one line
    │   ├── InvalidArgumentError        a constructor or function got a value it cannot use (also ValueError)
    │   │   ├── ArgumentTypeError       ... an argument of the wrong type (also TypeError)
    │   │   ├── ArgumentValidationError a pydantic-built object (Skill, AgentTool, UsageLimits, an event...)
    │   │   │                           refused its fields (also pydantic's ValidationError)
    │   │   ├── InvalidModelRequestError bad model-call arguments: no messages, an unknown role...
    │   │   │   └── UnsupportedOptionError   a provider option the provider does not declare
    │   │   └── AgentConfigError        an agent or tool set up wrongly, found when it is configured
    │   │       ├── ToolNameCollisionError   two tools configured under one name
    │   │       ├── ToolDefinitionError      @tool cannot describe a function
    │   │       ├── SkillNameCollisionError  two skills registered under one name
    │   │       └── SubagentNestingError     a subagent that would start subagents of its own
    │   ├── WorkspaceError              no workspace, bad semif.toml, unknown data dir
    │   ├── ManifestError               a bad entry in data/categories.json
    │   ├── UnknownSkillError           no leaf of that name
    │   │   ├── SkillNotFound           no SKILL.md skill with that id or name
    │   │   └── SkillNotRegisteredError no skill of that name in an agent's registry (also KeyError)
    │   ├── EngineConfigError           unknown engine, missing extra, bad engine settings
    │   │   └── ProviderConfigError     a model provider cannot be built
    │   │       ├── UnknownProviderError     no provider of that name
    │   │       ├── MissingCredentialsError  no API key: names the variable to set
    │   │       └── MissingExtraError        the SDK is not installed: names the extra
    │   ├── SyncInAsyncError            a sync method (run, invoke, stream, *_sync) inside a running event loop
    │   ├── ModelRequestsBlockedError   a real model call while they are blocked (tests)
    │   ├── SkillParseError             a SKILL.md without frontmatter, or with broken YAML
    │   ├── SkillPathError              a path that leaves its skill or workspace (one uniform message)
    │   ├── SkillCollisionError         registering a SKILL.md skill id that is already taken
    │   ├── SkillsPathNotFound          a path given to a catalog command does not exist
    │   ├── CallTargetError             a confined call's target is not a function of this package
    │   ├── RouterMismatch              the stored router does not fit the tree or the engine
    │   ├── GenerationFailed            no generated skill passed the contract; nothing was written
    │   ├── TokenStoreError             the MCP client tokens' file cannot be read or written
    │   └── SkillsRefError              the skills-ref compatible API's errors (its ``SkillError``)
    │       ├── ParseError              a SKILL.md missing, or its frontmatter unreadable
    │       └── ValidationError         skill properties invalid (``errors`` lists each)
    ├── DecisionError                   an engine could not decide (no ``none`` option to fall back on)
    │   ├── TooManyOptionsError         more options than one decision may show
    │   └── DecisionTooLarge            a skill's decision over a cap: its options, state, question or option
    │                                   texts (also ValueError; ``engine.decisions`` holds the caps)
    ├── SkillError                      a code skill misbehaved
    │   ├── SkillLoadError              a body that does not compile or import
    │   ├── SkillContractError          a body without predict/act, or wrong return types
    │   ├── BudgetExceeded              more engine calls than the skill's cost_budget
    │   └── WriteRefused                a write outside the data dirs (also PermissionError)
    ├── LogError                        the decision log cannot be written or read
    ├── ProviderError                   a model call failed at run time
    │   ├── AuthenticationError         401/403: the key was refused
    │   ├── RateLimitError              429                                (retried)
    │   ├── ServerError                 5xx                                (retried)
    │   │   └── ProviderOverloadedError 529/503: overloaded                (retried)
    │   ├── ProviderConnectionError     no connection, or it dropped       (retried)
    │   ├── ProviderTimeoutError        no answer in time                  (retried)
    │   ├── BadRequestError             400/404/422...: the request was refused
    │   ├── StreamInterruptedError      a stream broke after it started
    │   └── ResponseError               an answer we cannot read
    ├── CatalogError                    the SKILL.md catalog machinery failed at run time
    │   ├── RuntimeNotBound             a runtime used before ``bind_workspace``
    │   └── NoEnvironmentRouter         an ``env:`` skill run with no environment router to ask
    ├── SandboxError                    the sandbox's machinery failed at run time
    │   ├── WorkerError                 the warm worker pool cannot start a worker
    │   └── ChannelError                a confined call's question got an error, not an answer
    ├── WorkerFailed                    a batch could not be done on a Ray cluster (its worker died too often)
    ├── ServerBusy                      semif mcp takes no more of a call now (queue full, client over its rate)
    └── AgentError                      an agent's turn or toolkit failed at run time
        ├── OutputMissingError          run()/arun(): no valid structured output
        ├── SkillActivationError        a skill's instructions cannot be read to activate it
        ├── FactNotFoundError           no memory fact with that id (also LookupError)
        ├── MemoryToolError             a memory-tool command failed (the model sees it)
        ├── UnknownVaultError           a search named a vault that is not mounted (also LookupError)
        ├── MCPError                    an MCP server unreachable, or failed while connected
        └── MCPToolError                an MCP tool answered with an error (the model sees it)

    UserWarning
    ├── SkillCatalogWarning             lenient loading: a skill loaded with a problem, skipped or shadowed
    ├── SettingsWarning                 a name in semif.toml semif does not read (a misspelt table or key)
    └── TornLineWarning                 a log line that cannot be parsed (a write cut by a crash)

Where they live, besides this module: ``llm.errors`` (InvalidModelRequestError, UnsupportedOptionError,
ProviderConfigError and below, ModelRequestsBlockedError, TooManyOptionsError,
ProviderError and below); ``catalog.errors`` (SkillNotFound, SkillParseError,
SkillPathError, SkillCollisionError, SkillsPathNotFound,
CatalogError and below, SkillCatalogWarning); ``sandbox.errors`` (CallTargetError,
SandboxError and below); ``agent.errors``
(ArgumentValidationError, AgentConfigError and below, SkillNotRegisteredError,
AgentError, OutputMissingError, SkillActivationError); ``agent.toolkits.memory``
(FactNotFoundError, MemoryToolError);
``agent.toolkits.retrieval`` (UnknownVaultError); ``agent.toolkits.mcp`` (MCPError,
MCPToolError); ``routing.learned`` (RouterMismatch); ``forge.generator``
(GenerationFailed); ``distributed.pool`` (WorkerFailed); ``mcp_server.tokens`` (TokenStoreError);
``mcp_server.admission`` (ServerBusy); ``compat.skills_ref`` (its SkillError, ParseError,
ValidationError); ``records.log`` (TornLineWarning); ``workspace.unread`` (SettingsWarning).

Errors that wrap a lower-level failure keep it as ``__cause__``. Every
:class:`~semif_agent.llm.ProviderError` also carries ``provider``, ``model``,
``status`` (the HTTP status, or ``None``), ``body`` and ``retry_after``. A
provider's failure ends a streamed agent turn with a ``TurnFinished`` whose
diagnostics carry it; ``run``/``arun`` and ``chat``/``achat`` raise it. Tool
failures never raise: the model sees them as error results.
"""

from __future__ import annotations


class SemifError(Exception):
    """Base of every exception semif-agent raises on purpose."""


class UserError(SemifError):
    """A caller's mistake: shown to the user as one line, never a traceback."""


class InvalidArgumentError(UserError, ValueError):
    """A public constructor or function was given a value it cannot use (also a ``ValueError``)."""


class ArgumentTypeError(InvalidArgumentError, TypeError):
    """A public constructor or function was given an argument of the wrong type (also a ``TypeError``)."""


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


class DecisionTooLarge(DecisionError, ValueError):
    """A skill's decision is over one of the caps of :mod:`semif_agent.engine.decisions`; the message names it."""


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


def check_number(what: str, value: object, *, minimum: float = 0, whole: bool = False, optional: bool = False) -> None:
    """Refuse ``value`` unless it is a number of at least ``minimum`` (``int`` if ``whole``; ``None`` if ``optional``).

    A value that is no number (a ``bool`` included) is an :class:`ArgumentTypeError`,
    one out of range an :class:`InvalidArgumentError`; both name ``what``:
    ``max_retries must be a whole number, 0 or more, got -1``.
    """
    if value is None and optional:
        return
    error: type[UserError] = ArgumentTypeError
    if isinstance(value, int if whole else (int, float)) and not isinstance(value, bool):
        if value >= minimum:
            return
        error = InvalidArgumentError
    wanted = f"{'a whole number' if whole else 'a number'}, {minimum:g} or more{', or None' if optional else ''}"
    raise error(f"{what} must be {wanted}, got {value!r}")


def check_type(what: str, value: object, kinds: type | tuple[type, ...], *, optional: bool = False) -> None:
    """Refuse ``value`` with an :class:`ArgumentTypeError` naming ``what`` unless it is one of ``kinds`` (or ``None``).

    ``memory_tools needs a MemoryManager, not str``.
    """
    if (value is None and optional) or isinstance(value, kinds):
        return
    names = " or ".join(kind.__name__ for kind in (kinds if isinstance(kinds, tuple) else (kinds,)))
    raise ArgumentTypeError(f"{what} must be a {names}{' or None' if optional else ''}, not {type(value).__name__}")
