"""``semif.toml``'s defaults, how a file's tables are merged onto them, and the type of every known setting.

A setting of the wrong type is refused with one line naming its table and
key (``[skills] timeout must be a positive number of seconds, not "slow"``).
Unknown keys are kept for the layers that read them.
"""

from __future__ import annotations

import datetime
import math
import os
import posixpath
import re
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any

from .._text import clip
from ..errors import WorkspaceError

FOLDERS = ("drafts", "notes", "calendar", "todos")
"""The kinds of data the starter skills write, each in its own folder (``[paths]``), by default under the data dir."""

_TABLES = ("engine", "paths", "skills", "log")
_DEFAULTS: dict[str, dict[str, Any]] = {
    "engine": {},
    "paths": {"data": "data"},
    "skills": {},
    "log": {
        "enabled": True,
        "path": "data/decisions.jsonl",
        "fsync": False,
        "model_calls": True,
        "model_calls_path": "data/model_calls.jsonl",
    },
}


def _is_number(value: Any) -> bool:
    return isinstance(value, (int, float)) and not isinstance(value, bool) and math.isfinite(value)


def _is_positive(value: Any) -> bool:
    return _is_number(value) and value > 0


def _is_text(value: Any) -> bool:
    return isinstance(value, str) and value.strip() != ""


def _is_text_list(value: Any) -> bool:
    return isinstance(value, list) and all(_is_text(item) for item in value)


def _is_bool(value: Any) -> bool:
    return isinstance(value, bool)


def _is_share(value: Any) -> bool:
    return _is_number(value) and 0 <= value <= 1


def _is_moment(value: Any) -> bool:
    """An ISO date and time, as text or as TOML's own date-time (what ``semif_agent.skills.current_time`` reads)."""
    if isinstance(value, (datetime.datetime, datetime.date)):
        return True
    try:
        datetime.datetime.fromisoformat(str(value))
    except ValueError:
        return False
    return isinstance(value, str)


_Check = tuple[Callable[[Any], bool], str]
_NUMBER: _Check = (_is_number, "a number")
_TEXT: _Check = (_is_text, "a non-empty string")
_BOOL: _Check = (_is_bool, "true or false")
_PATHS: _Check = (_is_text_list, "a list of paths (strings)")
SCHEMA: dict[str, dict[str, _Check]] = {
    "engine": {"name": _TEXT, "threshold": _NUMBER, "model": _TEXT, "temperature": _NUMBER},
    "skills": {
        "write_dirs": _PATHS,
        "timeout": (_is_positive, "a positive number of seconds"),
        "folders": _PATHS,
        "user_skills": _BOOL,
        "allow_scripts": _BOOL,
        "warm_processes": _BOOL,
    },
    "log": {"enabled": _BOOL, "path": _TEXT, "fsync": _BOOL, "model_calls": _BOOL, "model_calls_path": _TEXT},
    "mcp": {"rerank": _BOOL},
    "routing": {
        "strategy": _TEXT,
        "threshold": _NUMBER,
        "temperature": _NUMBER,
        "act_threshold": (_is_share, "a probability from 0 to 1"),
    },
    "forge": {"model": _TEXT},
    "config": {"now": (_is_moment, 'an ISO date and time, like "2025-03-10T09:00:00"')},
    "telemetry": {"enabled": _BOOL, "otlp_endpoint": _TEXT, "service_name": _TEXT},
}
"""The known settings of each table and what each must be; ``[paths]`` entries are all non-empty strings."""


def merged(raw: dict[str, Any]) -> dict[str, Any]:
    """``raw`` (a parsed semif.toml) over the defaults; missing folder paths and ``write_dirs`` filled in.

    Each kind of data in :data:`FOLDERS` defaults to a folder of that name in
    the data dir, and ``write_dirs`` to those folders.
    """
    settings: dict[str, Any] = {k: dict(v) for k, v in _DEFAULTS.items()}
    for key, value in raw.items():
        if isinstance(value, dict) and isinstance(settings.get(key), dict):
            settings[key].update(value)
        else:
            settings[key] = value
    paths, skills = settings.get("paths"), settings.get("skills")
    if isinstance(paths, dict) and isinstance(paths.get("data"), str):
        for kind in FOLDERS:
            paths.setdefault(kind, posixpath.join(paths["data"], kind))
        if isinstance(skills, dict) and "write_dirs" not in skills:
            skills["write_dirs"] = [paths[kind] for kind in FOLDERS if isinstance(paths[kind], str)]
    return settings


SECRETS_ENV = "SEMIF_SECRETS"
"""The variable naming the secrets file, when it is not in the default place."""
_SECRET_WORDS = frozenset(
    {"token", "secret", "secrets", "password", "passwd", "passphrase", "pwd", "credential", "credentials"}
    | {"bearer", "authorization", "auth", "apikey", "cookie"}
)
"""Words of a setting's name that say it holds a credential; a name ending in ``key`` (``api_key``, ``OPENAI_KEY``,
``accessKey``) does too. One ending in ``_env`` names the variable that holds it, and is fine."""


def _credential_name(name: str) -> bool:
    """Whether the setting ``name`` (snake, kebab or camel case) names a credential."""
    words = re.sub(r"([a-z0-9])([A-Z])", r"\1_\2", name).lower().replace("-", "_").replace(".", "_").split("_")
    words = [word for word in words if word]
    if not words or words[-1] == "env":
        return False
    return words[-1] == "key" or words[-1].endswith("apikey") or any(word in _SECRET_WORDS for word in words)


def secrets_file(environ: Mapping[str, str] | None = None) -> Path:
    """Where the secrets file is: ``$SEMIF_SECRETS``, else ``$XDG_CONFIG_HOME/semif/secrets.toml``
    (``~/.config/semif/secrets.toml``): outside every workspace, read by :mod:`semif_agent.llm.secrets`."""
    environ = os.environ if environ is None else environ
    if environ.get(SECRETS_ENV):
        return Path(environ[SECRETS_ENV]).expanduser()
    config = environ.get("XDG_CONFIG_HOME") or os.path.join(os.path.expanduser("~"), ".config")
    return Path(config, "semif", "secrets.toml")


def check_types(settings: dict[str, Any], where: str) -> None:
    """Refuse, with one line naming the setting, a table or value of the wrong type, or a credential in the file."""
    key = _key_setting(settings)
    if key:
        raise WorkspaceError(
            f"{where}: {key} holds a credential, which code a skill runs could read: put it in the environment or "
            f'in the secrets file {secrets_file()} (mode 600, as VARIABLE = "...") and name its variable with api_key_env'
        )
    for table in (*_TABLES, *(t for t in SCHEMA if t in settings)):
        if not isinstance(settings.get(table), dict):
            raise WorkspaceError(f"{where}: [{table}] must be a table, not {_shown(settings.get(table))}")
    for key, value in settings["paths"].items():
        if not _is_text(value):
            raise WorkspaceError(f"{where}: [paths] {key} must be a path (a non-empty string), not {_shown(value)}")
    for table, keys in SCHEMA.items():
        values = settings.get(table, {})
        for key, (valid, what) in keys.items():
            if key in values and not valid(values[key]):
                raise WorkspaceError(f"{where}: [{table}] {key} must be {what}, not {_shown(values[key])}")


def _key_setting(value: Any, where: str = "") -> str:
    """Where ``value`` (settings, or a table or list in them) holds a credential: ``[provider.openai] api_key``."""
    if isinstance(value, dict):
        for key, inner in value.items():
            name = str(key)
            if isinstance(inner, str) and inner.strip() and _credential_name(name):
                return f"[{where}] {name}" if where else name
        for key, inner in value.items():
            found = _key_setting(inner, f"{where}.{key}" if where else str(key))
            if found:
                return found
    elif isinstance(value, list):
        for inner in value:
            found = _key_setting(inner, where)
            if found:
                return found
    return ""


def _shown(value: Any) -> str:
    """A TOML-ish rendering of a bad value for an error line."""
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, str):
        return f'"{value}"'
    if isinstance(value, dict):
        return "a table"
    return clip(repr(value), 40)
