"""Provider keys: from the environment, else from a secrets file outside every workspace.

A key never lives in ``semif.toml``: code a skill runs works inside the
workspace, so a key there would be one read away from it (the workspace's
settings refuse one, naming where to put it). :func:`read_secret` looks a
variable up in the environment first, then in the secrets file:
``$SEMIF_SECRETS`` when set, else ``$XDG_CONFIG_HOME/semif/secrets.toml``
(``~/.config/semif/secrets.toml``), a TOML file of variables::

    OPENAI_API_KEY = "sk-..."
    ANTHROPIC_API_KEY = "sk-ant-..."

It must be readable by its owner only (``chmod 600``): one readable by others
is refused with the command that fixes it, as ``ssh`` refuses such a key.
"""

from __future__ import annotations

import os
import stat
import tomllib
from collections.abc import Mapping
from pathlib import Path

from ..workspace.credentials import SECRETS_ENV, secrets_file
from .errors import ProviderConfigError

__all__ = ["SECRETS_ENV", "read_secret", "secret_source", "secrets_file"]

_read: dict[str, tuple[tuple[int, int, int], dict[str, str]]] = {}  # path -> ((inode, size, mtime), variables)


def read_secret(variable: str, environ: Mapping[str, str] | None = None) -> str | None:
    """The value of ``variable``: the environment's, else the secrets file's, else None."""
    found = secret_source(variable, environ)
    return found[0] if found else None


def secret_source(variable: str, environ: Mapping[str, str] | None = None) -> tuple[str, str] | None:
    """``(value, where)`` for ``variable`` (``where``: ``$VAR`` or the secrets file's path), or None."""
    environ = os.environ if environ is None else environ
    if not variable:
        return None
    if environ.get(variable):
        return environ[variable], f"${variable}"
    path = secrets_file(environ)
    value = _variables(path).get(variable)
    return (value, str(path)) if value else None


def _variables(path: Path) -> dict[str, str]:
    """The string variables of the secrets file at ``path`` (none when there is no file)."""
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK | os.O_CLOEXEC)
    except FileNotFoundError:
        return {}
    except OSError as exc:
        raise ProviderConfigError(f"cannot read the secrets file {path}: {exc.strerror or exc}") from exc
    with os.fdopen(fd, "rb") as handle:
        info = os.fstat(handle.fileno())
        if not stat.S_ISREG(info.st_mode):
            raise ProviderConfigError(f"the secrets file {path} is not a regular file")
        if info.st_mode & 0o077:
            raise ProviderConfigError(
                f"the secrets file {path} is readable by others (mode {stat.S_IMODE(info.st_mode):04o}): "
                f"run chmod 600 {path}"
            )
        version = (info.st_ino, info.st_size, info.st_mtime_ns)
        cached = _read.get(str(path))
        if cached is not None and cached[0] == version:
            return cached[1]
        try:
            document = tomllib.loads(handle.read().decode("utf-8"))
        except (UnicodeDecodeError, tomllib.TOMLDecodeError) as exc:
            raise ProviderConfigError(f"the secrets file {path} is not valid TOML: {exc}") from exc
    variables = {str(key): value for key, value in document.items() if isinstance(value, str) and value}
    _read[str(path)] = (version, variables)
    return variables
