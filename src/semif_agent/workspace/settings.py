"""``semif.toml`` as a typed model: every known table and setting, its type and its default, written once here.

A setting of the wrong type is refused with one line naming its table and
key (``[skills] timeout must be a positive number of seconds, not "slow"``):
each setting type carries, as :class:`Must`, the words that line uses.
Unknown keys of a known table, and tables of their own (a plug-in's), are
kept for the layers that read them; one that looks misspelt is a warning
(:mod:`.unread`).
"""

from __future__ import annotations

import datetime
import posixpath
from collections.abc import Mapping, Sequence
from types import UnionType
from typing import Annotated, ClassVar, Literal, Union, get_args, get_origin, get_type_hints

from annotated_types import Ge, Gt, Le
from pydantic import AfterValidator, AllowInfNan, BaseModel, ConfigDict, Field, Strict, ValidationError, model_validator

from .._text import clip
from ..errors import WorkspaceError
from .credentials import credential_setting, secrets_file
from .records import FOLDERS
from .unread import Others, warn_unread

DEFAULT_BODY_TIMEOUT = 120.0
"""Seconds a skill body may run when ``[skills] timeout`` does not say."""


class Must:
    """What a setting must be, in words: a wrong value is refused with them (``must be a number, not "high"``).

    Put in a setting type's ``Annotated`` metadata; pydantic ignores it, :func:`what_it_must_be` finds it.
    """

    __slots__ = ("what",)

    def __init__(self, what: str) -> None:
        self.what = what


def _not_blank(value: str) -> str:
    if not value.strip():
        raise ValueError("blank")
    return value


def _iso_moment(value: datetime.datetime | datetime.date | str) -> datetime.datetime | datetime.date | str:
    if isinstance(value, str):
        datetime.datetime.fromisoformat(value)  # a ValueError refuses it
    return value


Number = Annotated[float, Strict(), AllowInfNan(False), Must("a number")]
Positive = Annotated[Number, Gt(0), Must("a positive number")]
Seconds = Annotated[Number, Gt(0), Must("a positive number of seconds")]
Share = Annotated[Number, Ge(0), Le(1), Must("a probability from 0 to 1")]
Text = Annotated[str, Strict(), AfterValidator(_not_blank), Must("a non-empty string")]
PathText = Annotated[Text, Must("a path (a non-empty string)")]
PathList = Annotated[list[Text], Strict(), Must("a list of paths (strings)")]
Flag = Annotated[bool, Strict(), Must("true or false")]
EncoderChoice = Annotated[
    Literal["base", "tuned"], Must('"base" (the installed model) or "tuned" (the workspace\'s own)')
]
Count = Annotated[int, Strict(), Gt(0), Must("a positive whole number")]
Moment = Annotated[
    datetime.datetime | datetime.date | str,
    AfterValidator(_iso_moment),
    Must('an ISO date and time, like "2025-03-10T09:00:00"'),
]
"""An ISO date and time, as text or as TOML's own date-time (what ``semif_agent.skills.current_time`` reads)."""


class _Table(BaseModel):
    """A table of ``semif.toml``: its known keys typed, any other key kept for the layer that reads it."""

    model_config = ConfigDict(extra="allow", strict=True)

    others: ClassVar[Others] = "warned"
    """What a key the table does not type is: a misspelling unless the table says it is another layer's."""

    def given(self) -> dict[str, object]:
        """The table as a mapping: its known keys that have a value (a default included) and its unknown ones."""
        return self.model_dump(exclude_none=True)


class EngineSettings(_Table):
    """``[engine]``: which engine answers decisions; keys beyond these belong to the engine (its factory gets them)."""

    others: ClassVar[Others] = "near"  # the engine's own; warned of only when close to one typed here

    name: Text | None = None
    threshold: Number | None = None
    model: Text | None = None
    temperature: Number | None = None


class PathsSettings(_Table):
    """``[paths]``: the data dir, a folder per kind of data (each ``data/<kind>`` unless set), and any other path."""

    __pydantic_extra__: dict[str, PathText] = Field(init=False)
    others: ClassVar[Others] = "kept"

    data: PathText = "data"
    drafts: PathText = ""
    notes: PathText = ""
    calendar: PathText = ""
    todos: PathText = ""

    @model_validator(mode="after")
    def _folders_in_the_data_dir(self) -> PathsSettings:
        for kind in FOLDERS:
            if kind not in self.model_fields_set:
                setattr(self, kind, posixpath.join(self.data, kind))
        return self

    def entries(self) -> dict[str, str]:
        """Every path, by name (the data dir, the folders of :data:`FOLDERS`, the others)."""
        return {name: str(value) for name, value in self.model_dump().items()}


class SkillsSettings(_Table):
    """``[skills]``: where skills may write, how long a body may run, where more SKILL.md skills are."""

    write_dirs: PathList = Field(default_factory=list)  # the folders of [paths] unless set
    timeout: Seconds = DEFAULT_BODY_TIMEOUT
    folders: PathList = Field(default_factory=list)
    user_skills: Flag = True
    allow_scripts: Flag = False
    warm_processes: Flag = True


class LogSettings(_Table):
    """``[log]``: the decision log and the model-call log."""

    enabled: Flag = True
    path: Text = "data/decisions.jsonl"
    fsync: Flag = False
    model_calls: Flag = True
    model_calls_path: Text = "data/model_calls.jsonl"


class RoutingSettings(_Table):
    """``[routing]``: over the values ``semif eval --tune`` stored (see :func:`semif_agent.routing.tune.routing_settings`)."""

    strategy: Text | None = None
    threshold: Number | None = None
    temperature: Number | None = None
    act_threshold: Share | None = None
    # which encoder embeds for the local engine (unset: what semif train switched to)
    encoder: EncoderChoice | None = None


class McpSettings(_Table):
    """``[mcp]``: whether ``find`` asks the model to re-rank (unset: when the engine is an LLM), and how much
    ``semif mcp`` takes on at once (see :mod:`semif_agent.mcp_server.admission`)."""

    rerank: Flag | None = None
    rate: Positive | None = None  # tool calls a second one client may make (unset: no limit); a token may say its own
    burst: Positive | None = None  # calls a client may make at once above its rate (unset: two seconds' worth)
    working: Count = 32  # tool calls answered at once (runs aside)
    runs: Count = 4  # run_skill calls under way at once
    queue: Count = 256  # calls waiting for their turn; past it a call is answered "busy, retry"
    sessions: Positive = 20  # sessions one client may open a minute


class ForgeSettings(_Table):
    """``[forge]``: the model that writes skill code (unset: the workspace's model)."""

    model: Text | None = None


class ConfigSettings(_Table):
    """``[config]``: passed to skills as it is, in ``ctx.config``."""

    others: ClassVar[Others] = "kept"

    now: Moment | None = None


class TelemetrySettings(_Table):
    """``[telemetry]``: OpenTelemetry export (see :func:`semif_agent.telemetry.telemetry_endpoint`)."""

    enabled: Flag | None = None
    otlp_endpoint: Text | None = None
    service_name: Text | None = None


class WorkspaceSettings(BaseModel):
    """``semif.toml``, typed: each known table with its defaults; any other table kept for the plug-in that reads it.

    Build it with :func:`parse_settings`, which turns a wrong value into one line naming it.
    ``[provider]`` is the provider's own (its keys are read by :mod:`semif_agent.llm.settings`).
    """

    model_config = ConfigDict(extra="allow", strict=True)

    engine: EngineSettings = Field(default_factory=EngineSettings)
    paths: PathsSettings = Field(default_factory=PathsSettings)
    skills: SkillsSettings = Field(default_factory=SkillsSettings)
    log: LogSettings = Field(default_factory=LogSettings)
    routing: RoutingSettings = Field(default_factory=RoutingSettings)
    mcp: McpSettings = Field(default_factory=McpSettings)
    forge: ForgeSettings = Field(default_factory=ForgeSettings)
    config: ConfigSettings = Field(default_factory=ConfigSettings)
    telemetry: TelemetrySettings = Field(default_factory=TelemetrySettings)
    provider: dict[str, object] = Field(default_factory=dict)

    @model_validator(mode="after")
    def _write_dirs_default_to_the_folders(self) -> WorkspaceSettings:
        if "write_dirs" not in self.skills.model_fields_set:
            self.skills.write_dirs = [getattr(self.paths, kind) for kind in FOLDERS]
        return self

    def table(self, name: str) -> Mapping[str, object]:
        """The table ``name`` as a mapping, known or a plug-in's (empty when the file has none)."""
        known = name in type(self).model_fields
        value = getattr(self, name) if known else (self.model_extra or {}).get(name)
        if isinstance(value, _Table):
            return value.given()
        return value if isinstance(value, dict) else {}


def parse_settings(raw: Mapping[str, object], where: str) -> WorkspaceSettings:
    """``raw`` (a parsed semif.toml) as settings, defaults filled in; a wrong value or a credential is one line.

    ``where`` (the file) begins the line: ``semif.toml: [skills] timeout must be a positive number of seconds,
    not "slow"``. A table or key that looks misspelt is a :class:`~.unread.SettingsWarning` beginning the same way.
    """
    key = credential_setting(raw)
    if key:
        raise WorkspaceError(
            f"{where}: {key} holds a credential, which code a skill runs could read: put it in the environment or "
            f'in the secrets file {secrets_file()} (mode 600, as VARIABLE = "...") and name its variable instead '
            "(a provider's with api_key_env)"
        )
    try:
        settings = WorkspaceSettings.model_validate(raw)
    except ValidationError as exc:
        raise WorkspaceError(f"{where}: {_refusal(exc, raw)}") from None
    warn_unread(raw, _known_tables(), where)
    return settings


def _known_tables() -> dict[str, tuple[frozenset[str], Others]]:
    """Each table semif reads: its typed keys and what its other keys are (``[provider]``'s are the provider's)."""
    known: dict[str, tuple[frozenset[str], Others]] = {}
    for name, field_info in WorkspaceSettings.model_fields.items():
        model = field_info.annotation
        if isinstance(model, type) and issubclass(model, _Table):
            known[name] = (frozenset(model.model_fields), model.others)
        else:
            known[name] = (frozenset(), "kept")
    return known


def _refusal(exc: ValidationError, raw: Mapping[str, object]) -> str:
    """The first wrong value of ``exc`` in words, as ``[table] key must be WHAT, not VALUE``."""
    loc = exc.errors()[0]["loc"]
    table = str(loc[0])
    values = raw.get(table)
    if len(loc) == 1 or not isinstance(values, dict):
        return f"[{table}] must be a table, not {_shown(values)}"
    key = str(loc[1])
    model = WorkspaceSettings.model_fields[table].annotation
    what = what_it_must_be(model, key) if isinstance(model, type) and issubclass(model, BaseModel) else None
    return f"[{table}] {key} must be {what or 'of another type'}, not {_shown(values.get(key))}"


def what_it_must_be(model: type[BaseModel], key: str) -> str | None:
    """What the setting ``key`` of ``model`` must be, in words (its type's :class:`Must`); None if it says nothing."""
    field_info = model.model_fields.get(key)
    if field_info is not None:
        return _must(field_info.annotation, field_info.metadata)
    extra = get_type_hints(model, include_extras=True).get("__pydantic_extra__")
    return _must(get_args(extra)[1], []) if extra is not None else None


def _must(annotation: object, metadata: Sequence[object]) -> str | None:
    """The outermost :class:`Must` in ``metadata`` or ``annotation`` (through ``Annotated``, unions and ``None``).

    Nested ``Annotated`` types are flattened, inner metadata first: the last :class:`Must` is the outermost.
    """
    for item in reversed(metadata):
        if isinstance(item, Must):
            return item.what
    if get_origin(annotation) is Annotated:
        inner, *marks = get_args(annotation)
        return _must(None, marks) or _must(inner, [])
    if get_origin(annotation) in (Union, UnionType):
        return next(filter(None, (_must(arg, []) for arg in get_args(annotation) if arg is not type(None))), None)
    return None


def _shown(value: object) -> str:
    """A TOML-ish rendering of a bad value for an error line."""
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, str):
        return f'"{value}"'
    if isinstance(value, dict):
        return "a table"
    return clip(repr(value), 40)
