"""A workspace: a folder with ``semif.toml``, its data dirs, skills and decision log.

Settings (``semif.toml``)::

    [engine]                  # which SemIf engine answers decisions
    name = "local"            # local | lexical | scripted | llm | a registered name

    [paths]                   # relative to the workspace; skills get them absolute in ctx.config
    data = "data"
    drafts = "data/drafts"

    [skills]
    write_dirs = ["data"]     # the only places skills may write

    [log]
    enabled = true
    path = "data/decisions.jsonl"
    fsync = false
    model_calls = true                        # every model call (generation, chat) as a row too
    model_calls_path = "data/model_calls.jsonl"

Unknown sections are kept in :attr:`Workspace.settings` for the layers that
own them (``[provider]``, ``[routing]``...).
"""

from __future__ import annotations

import os
import tomllib
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from .errors import WorkspaceError

SETTINGS_FILE = "semif.toml"
_DEFAULTS: dict[str, dict[str, Any]] = {
    "engine": {},
    "paths": {"data": "data"},
    "skills": {"write_dirs": ["data"]},
    "log": {"enabled": True, "path": "data/decisions.jsonl", "fsync": False,
            "model_calls": True, "model_calls_path": "data/model_calls.jsonl"},
}


@dataclass
class Workspace:
    """A loaded workspace. Build it with :meth:`load`."""

    root: Path
    settings: dict[str, Any] = field(default_factory=dict)

    @classmethod
    def load(cls, root: str | os.PathLike[str]) -> Workspace:
        root = Path(root).expanduser().resolve()
        settings_file = root / SETTINGS_FILE
        if not root.is_dir():
            raise WorkspaceError(f"{root}: no such workspace directory")
        if not settings_file.is_file():
            raise WorkspaceError(f"{root}: not a workspace (no {SETTINGS_FILE}); create one with: semif init {root}")
        try:
            raw = tomllib.loads(settings_file.read_text(encoding="utf-8"))
        except tomllib.TOMLDecodeError as exc:
            raise WorkspaceError(f"{settings_file}: invalid TOML ({exc})") from exc
        except OSError as exc:
            raise WorkspaceError(f"{settings_file}: cannot read ({exc.strerror})") from exc
        settings = {k: dict(v) for k, v in _DEFAULTS.items()}
        for key, value in raw.items():
            if isinstance(value, dict) and isinstance(settings.get(key), dict):
                settings[key].update(value)
            else:
                settings[key] = value
        workspace = cls(root=root, settings=settings)
        workspace._validate()
        return workspace

    def _validate(self) -> None:
        for section in ("engine", "paths", "skills", "log"):
            if not isinstance(self.settings.get(section), dict):
                raise WorkspaceError(f"{self.settings_file}: [{section}] must be a table")
        for key, value in self.settings["paths"].items():
            if not isinstance(value, str):
                raise WorkspaceError(f"{self.settings_file}: [paths] {key} must be a string path")
        dirs = self.settings["skills"].get("write_dirs")
        if not isinstance(dirs, list) or not all(isinstance(d, str) for d in dirs):
            raise WorkspaceError(f"{self.settings_file}: [skills] write_dirs must be a list of paths")

    @property
    def settings_file(self) -> Path:
        return self.root / SETTINGS_FILE

    def resolve(self, path: str | os.PathLike[str]) -> Path:
        """``path`` made absolute against the workspace root."""
        return (self.root / Path(path).expanduser()).resolve()

    @property
    def data_dir(self) -> Path:
        return self.resolve(self.settings["paths"].get("data", "data"))

    @property
    def categories_path(self) -> Path:
        return self.data_dir / "categories.json"

    @property
    def bodies_dir(self) -> Path:
        return self.data_dir / "skills"

    @property
    def skills_md_dir(self) -> Path:
        return self.root / "skills"

    @property
    def write_roots(self) -> tuple[Path, ...]:
        return tuple(self.resolve(d) for d in self.settings["skills"]["write_dirs"])

    @property
    def log_path(self) -> Path:
        return self.resolve(self.settings["log"].get("path", "data/decisions.jsonl"))

    @property
    def model_calls_path(self) -> Path:
        return self.resolve(self.settings["log"].get("model_calls_path", "data/model_calls.jsonl"))

    @property
    def engine_settings(self) -> dict[str, Any]:
        """The ``[engine]`` table, with the workspace root and the ``[provider]`` table."""
        return dict(self.settings["engine"], workspace=str(self.root), provider=dict(self.settings.get("provider", {})))

    def skill_config(self) -> dict[str, Any]:
        """The ``ctx.config`` skills see: every ``[paths]`` entry absolute, plus ``[config]``."""
        config: dict[str, Any] = dict(self.settings.get("config", {}))
        for key, value in self.settings["paths"].items():
            config[key] = str(self.resolve(value))
        config["workspace"] = str(self.root)
        return config


def find_workspace(explicit: str | os.PathLike[str] | None = None, *, cwd: Path | None = None) -> Workspace:
    """The workspace to use: ``explicit`` if given, else the current directory if it is one."""
    if explicit is not None:
        return Workspace.load(explicit)
    here = cwd or Path.cwd()
    if (here / SETTINGS_FILE).is_file():
        return Workspace.load(here)
    raise WorkspaceError(f"{here}: not a workspace (no {SETTINGS_FILE}); pass -w DIR or run: semif init DIR")


def default_workspace_dir() -> Path:
    """The per-user workspace: ``$SEMIF_HOME``, else ``$XDG_DATA_HOME/semif/workspace``."""
    home = os.environ.get("SEMIF_HOME")
    if home:
        return Path(home).expanduser()
    base = os.environ.get("XDG_DATA_HOME") or os.path.join(Path.home(), ".local", "share")
    return Path(base) / "semif" / "workspace"
