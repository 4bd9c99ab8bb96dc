"""Credentials kept out of ``semif.toml``: where the secrets file is, and which settings name a credential.

Code a skill runs can read the workspace, so a key written in its settings
would be a key handed to every skill: the settings are refused with one line
saying where the key goes instead (the environment, or the secrets file,
outside every workspace, read by :mod:`semif_agent.llm.secrets`).
"""

from __future__ import annotations

import os
import re
from collections.abc import Mapping
from pathlib import Path

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


def credential_setting(value: object, where: str = "") -> str:
    """Where ``value`` (settings, or a table or list in them) holds a credential: ``[provider.openai] api_key``."""
    if isinstance(value, dict):
        for key, inner in value.items():
            name = str(key)
            if isinstance(inner, str) and inner.strip() and _credential_name(name):
                return f"[{where}] {name}" if where else name
        for key, inner in value.items():
            found = credential_setting(inner, f"{where}.{key}" if where else str(key))
            if found:
                return found
    elif isinstance(value, list):
        for inner in value:
            found = credential_setting(inner, where)
            if found:
                return found
    return ""
