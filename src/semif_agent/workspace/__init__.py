"""A workspace: a folder with ``semif.toml``, the folders its skills write, its skills and its records.

Its settings (``semif.toml``: ``[engine]``, ``[paths]``, ``[skills]``, ``[log]``...)
are a :class:`~.settings.WorkspaceSettings`, each table a model with its
keys' types and defaults (``ws.settings.skills.timeout``); a setting of the
wrong type is refused in one line naming it, and a table no layer of semif
knows is kept for the plug-in that reads it (``ws.settings.table("name")``).
``[skills] write_dirs`` defaults to the four folders of ``[paths]``
(:data:`FOLDERS`, each ``data/<kind>`` unless set). A write dir may not
reach a record nor another workspace, and the records the host writes stay
inside the workspace (see :mod:`.records`).
"""

from __future__ import annotations

import os
import tomllib
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING

from .._lazy import lazy_namespace
from ..errors import WorkspaceError
from .records import (
    FOLDERS,
    SETTINGS_FILE,
    check_records_inside,
    check_unmoved,
    check_write_dirs,
    default_workspace_dir,
)

_EXPORTS = {"WorkspaceSettings": ".settings"}  # public name -> module, imported on first use (pydantic loads late)

if TYPE_CHECKING:  # what a type checker sees: the same names, from the same modules
    from .settings import WorkspaceSettings as WorkspaceSettings
else:
    __getattr__, __dir__ = lazy_namespace(__name__, _EXPORTS, globals())

__all__ = [
    "FOLDERS",
    "SETTINGS_FILE",
    "RunPaths",
    "Workspace",
    "WorkspaceSettings",
    "default_workspace_dir",
    "find_workspace",
]


@dataclass
class Workspace:
    """A loaded workspace. Build it with :meth:`load`."""

    root: Path
    settings: WorkspaceSettings = field(default_factory=lambda: _settings_of({}, SETTINGS_FILE))
    checked_roots: tuple[Path, ...] | None = field(default=None, repr=False, compare=False)
    """The write dirs as they were resolved when they passed :func:`.records.check_write_dirs` (at :meth:`load`,
    else the first :meth:`at_run_start`): each run's are checked against them."""

    @classmethod
    def load(cls, root: str | os.PathLike[str]) -> Workspace:
        """The workspace at ``root``, its settings checked."""
        root = Path(root).expanduser().resolve()
        settings_file = root / SETTINGS_FILE
        if not root.is_dir():
            raise WorkspaceError(f"{root}: no such workspace directory")
        if not settings_file.is_file():
            raise WorkspaceError(f"{root}: not a workspace (no {SETTINGS_FILE}); create one with: semif init {root}")
        return cls._checked(root, _read(settings_file))

    @classmethod
    def _checked(cls, root: Path, raw: dict[str, object]) -> Workspace:
        """The workspace at ``root`` with settings ``raw``, once their types and write dirs passed."""
        workspace = cls(root=root, settings=_settings_of(raw, str(root / SETTINGS_FILE)))
        check_records_inside(workspace)
        check_write_dirs(workspace)
        workspace.checked_roots = workspace.write_roots
        return workspace

    @property
    def settings_file(self) -> Path:
        return self.root / SETTINGS_FILE

    def resolve(self, path: str | os.PathLike[str]) -> Path:
        """``path`` made absolute against the workspace root."""
        return (self.root / Path(path).expanduser()).resolve()

    def at_run_start(self) -> RunPaths:
        """This workspace with its paths resolved at most once, from now on (:class:`RunPaths`): one run's view.

        Before it writes, the run checks its write dirs (:meth:`RunPaths.check_write_dirs`)."""
        if self.checked_roots is None:  # built without load: the write dirs as they lead now are the ones kept
            self.checked_roots = self.write_roots
        return RunPaths(root=self.root, settings=self.settings, checked_roots=self.checked_roots)

    @property
    def data_dir(self) -> Path:
        return self.resolve(self.settings.paths.data)

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
        """The folders skills may write (``[skills] write_dirs``), resolved."""
        return tuple(self.resolve(d) for d in self.settings.skills.write_dirs)

    def make_write_dirs(self) -> None:
        """Create the write dirs that lie inside the workspace and are missing."""
        for folder in self.write_roots:
            if self.root in folder.parents:
                folder.mkdir(parents=True, exist_ok=True)

    @property
    def admitted_path(self) -> Path:
        """The admitted bodies' sha256 digests (see :mod:`semif_agent.contract.admitted`)."""
        return self.data_dir / "admitted.json"

    @property
    def log_path(self) -> Path:
        return self.resolve(self.settings.log.path)

    @property
    def model_calls_path(self) -> Path:
        return self.resolve(self.settings.log.model_calls_path)

    @property
    def engine_settings(self) -> dict[str, object]:
        """What the engine's factory gets: the ``[engine]`` table, the workspace root and the ``[provider]`` table."""
        return {**self.settings.engine.given(), "workspace": str(self.root), "provider": dict(self.settings.provider)}

    def skill_config(self) -> dict[str, object]:
        """The ``ctx.config`` skills see: every ``[paths]`` entry absolute, plus ``[config]``."""
        config = self.settings.config.given()
        for key, value in self.settings.paths.entries().items():
            config[key] = str(self.resolve(value))
        config["workspace"] = str(self.root)
        return config


@dataclass
class RunPaths(Workspace):
    """One run's view of a workspace: each path is resolved the first time it is asked, then kept for the run.

    Made fresh for each run (:meth:`Workspace.at_run_start`) and never kept
    past it: a folder or link changed between runs is seen by the next run,
    and everything one run confines, observes and records names the same
    folders, the ones the paths led to when the run first asked. Those are
    checked before the run's skill writes (:meth:`check_write_dirs`): a write
    dir that leads elsewhere since the workspace was loaded, in a way a skill
    could have made it (a link put on its way, or a link moved where skills
    write), stops the run, as does one the check of loading refuses.
    """

    _resolved: dict[str, Path] = field(default_factory=dict, init=False, repr=False, compare=False)

    def resolve(self, path: str | os.PathLike[str]) -> Path:
        key = os.fspath(path)
        resolved = self._resolved.get(key)
        if resolved is None:
            resolved = self._resolved[key] = super().resolve(path)
        return resolved

    def check_write_dirs(self) -> None:
        """Raise :class:`~semif_agent.errors.WorkspaceError` (one line) for a write dir a skill could have sent
        elsewhere since it was checked (:func:`.records.check_unmoved`), or that the check of :meth:`Workspace.load`
        refuses."""
        check_unmoved(self, self.checked_roots if self.checked_roots is not None else self.write_roots)


def _settings_of(raw: dict[str, object], where: str) -> WorkspaceSettings:
    """``raw`` typed (see :func:`.settings.parse_settings`); pydantic loads here, not for a command's ``--help``."""
    from .settings import parse_settings

    return parse_settings(raw, where)


def _read(settings_file: Path) -> dict[str, object]:
    try:
        return tomllib.loads(settings_file.read_text(encoding="utf-8"))
    except tomllib.TOMLDecodeError as exc:
        raise WorkspaceError(f"{settings_file}: invalid TOML ({exc})") from exc
    except UnicodeDecodeError as exc:
        raise WorkspaceError(f"{settings_file}: not UTF-8 text ({exc.reason} at byte {exc.start})") from exc
    except OSError as exc:
        raise WorkspaceError(f"{settings_file}: cannot read ({exc.strerror})") from exc


def find_workspace(explicit: str | os.PathLike[str] | None = None, *, cwd: Path | None = None) -> Workspace:
    """The workspace to use: ``explicit`` if given, else the current directory if it is one."""
    if explicit is not None:
        return Workspace.load(explicit)
    here = cwd or Path.cwd()
    if (here / SETTINGS_FILE).is_file():
        return Workspace.load(here)
    raise WorkspaceError(f"{here}: not a workspace (no {SETTINGS_FILE}); pass -w DIR or run: semif init DIR")
