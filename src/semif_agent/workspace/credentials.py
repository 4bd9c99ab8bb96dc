"""Credentials kept out of ``semif.toml``: where the secrets file is, and which settings hold one (by name or shape).

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
    {"token", "secret", "secrets", "password", "passwords", "passwd", "passphrase", "pwd", "credential", "credentials"}
    | {"bearer", "authorization", "auth", "apikey", "cookie", "cookies", "passcode", "privatekey"}
)
"""Words of a setting's name that say it holds a credential, wherever they are in it (``github_token``,
``clientSecret``)."""
_LAST_WORDS = frozenset({"key", "pass", "pat", "session", "sessionid", "pw"})
"""Words that say so as the last word of a name (``api_key``, ``smtp_pass``, ``github_pat``, ``slack_session``),
not before another (``key_file``, ``session_timeout``, ``pass_through``). A name ending in ``_env`` names the
variable that holds a credential, and is fine."""
_SECRET_TABLES = frozenset({"secret", "secrets", "password", "passwords", "passwd", "credential", "credentials"})
"""Words of a table's name that make every string in it a credential (``[config.secrets] smtp = "..."``)."""

_SHAPES = (
    (r"(?<![A-Za-z0-9])sk-(?:proj-|ant-|svcacct-|admin-)?[A-Za-z0-9_-]{16,}", "an OpenAI or Anthropic key"),
    (r"(?<![A-Za-z0-9])(?:sk|rk)_(?:live|test)_[A-Za-z0-9]{10,}", "a Stripe key"),
    (r"(?<![A-Za-z0-9])whsec_[A-Za-z0-9+/=]{10,}", "a webhook signing secret"),
    (r"(?<![A-Za-z0-9])(?:gh[pousr]_[A-Za-z0-9]{20,}|github_pat_[A-Za-z0-9_]{20,})", "a GitHub token"),
    (r"(?<![A-Za-z0-9])glpat-[A-Za-z0-9_-]{20,}", "a GitLab token"),
    (r"(?<![A-Za-z0-9])xox[abposr]-[A-Za-z0-9-]{10,}", "a Slack token"),
    (r"(?<![A-Za-z0-9])(?:AKIA|ASIA)[0-9A-Z]{16}(?![0-9A-Z])", "an AWS access key"),
    (r"(?<![A-Za-z0-9])AIza[0-9A-Za-z_-]{35}", "a Google API key"),
    (r"(?<![A-Za-z0-9])hf_[A-Za-z0-9]{30,}", "a Hugging Face token"),
    (r"(?<![A-Za-z0-9])eyJ[A-Za-z0-9_-]{8,}\.eyJ[A-Za-z0-9_-]{8,}\.", "a signed token (JWT)"),
    (r"-----BEGIN [A-Z0-9 ]*PRIVATE KEY", "a private key"),
    (r"[A-Za-z][A-Za-z0-9+.-]*://[^/?#\s:@]*:[^/?#\s@]+@", "a password in a URL"),
)
_SHAPE = [(re.compile(pattern), what) for pattern, what in _SHAPES]
"""What a credential's value looks like, and what it is in words: a value shaped so is refused under any name."""


def _words(name: str) -> list[str]:
    """The words of ``name`` (snake, kebab, dotted or camel case), lower case."""
    spaced = re.sub(r"([a-z0-9])([A-Z])", r"\1_\2", name).lower().replace("-", "_").replace(".", "_")
    return [word for word in spaced.split("_") if word]


def _credential_name(name: str) -> bool:
    """Whether the setting ``name`` names a credential."""
    words = _words(name)
    if not words or words[-1] == "env":
        return False
    return words[-1] in _LAST_WORDS or words[-1].endswith("apikey") or any(word in _SECRET_WORDS for word in words)


def credential_shape(value: str) -> str:
    """What credential ``value`` looks like (``"a GitHub token"``), or ``""``."""
    return next((what for shape, what in _SHAPE if shape.search(value)), "")


def secrets_file(environ: Mapping[str, str] | None = None) -> Path:
    """Where the secrets file is: ``$SEMIF_SECRETS``, else ``$XDG_CONFIG_HOME/semif/secrets.toml``
    (``~/.config/semif/secrets.toml``): outside every workspace, read by :mod:`semif_agent.llm.secrets`."""
    environ = os.environ if environ is None else environ
    if environ.get(SECRETS_ENV):
        return Path(environ[SECRETS_ENV]).expanduser()
    config = environ.get("XDG_CONFIG_HOME") or os.path.join(os.path.expanduser("~"), ".config")
    return Path(config, "semif", "secrets.toml")


def credential_setting(
    value: object, where: str = "", *, name: str = "", named: bool = False, table: bool = False
) -> str:
    """Where ``value`` (settings, or a table, list or string in them) holds a credential, with what it looks like
    when its value says so: ``[provider.openai] api_key``, ``[config] openai (an OpenAI or Anthropic key)``.

    A string is one by its shape (:func:`credential_shape`), under a name that says so (``named``,
    :func:`_credential_name`) or in a table whose name says it holds secrets (``table``); tables and lists are
    looked through.
    """
    if isinstance(value, str):
        shape = credential_shape(value)
        shown = f"[{where}] {name}" if where else name
        if shape:
            return f"{shown} ({shape})"
        return shown if (named or table) and value.strip() else ""
    if isinstance(value, list):
        for inner in value:
            found = credential_setting(inner, where, name=name, named=named, table=table)
            if found:
                return found
    elif isinstance(value, dict):
        inner_where = f"{where}.{name}" if where and name else where or name
        secret = table or any(word in _SECRET_TABLES for word in _words(name))
        for key, inner in value.items():
            found = credential_setting(
                inner, inner_where, name=str(key), named=_credential_name(str(key)), table=secret
            )
            if found:
                return found
    return ""
