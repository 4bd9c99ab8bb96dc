"""Move a workspace of the old layout to the current one, all at once or not at all.

The old layout let skills write the whole data dir (``[skills] write_dirs =
["data"]``) and kept the notes at ``data/notes.sqlite3`` and the to-dos at
``data/todos.json``. Now each kind of data has its own folder and skills write
only those folders, never the records beside them. On load, a workspace of
the old layout is moved:

- ``data/notes.sqlite3`` (and its journal files) to ``data/notes/``,
  ``data/todos.json`` to ``data/todos/``; ``[paths] notes_db`` becomes
  ``notes``, and ``todos`` names the folder;
- ``write_dirs`` loses the data dir and gains the four folders (drafts,
  notes, calendar, todos), which are created;
- ``semif.toml`` is rewritten in place, its other lines and comments kept.

A workspace is of the old layout when its settings name the old files
(``notes_db``, ``todos`` as a file) or those files are where the old layout
kept them; ``write_dirs = ["data"]`` alone, in a workspace of the current
layout, is a setting to correct, and the settings check refuses it in one
line rather than rewriting ``semif.toml``.

One line on stderr says what moved. When a step fails, the files already
moved are put back, ``semif.toml`` is left as it was, and the error says why.
"""

from __future__ import annotations

import contextlib
import os
import posixpath
import sys
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from .._files import replace_file
from ..errors import WorkspaceError
from .records import FOLDERS

try:
    import fcntl
except ImportError:  # pragma: no cover
    fcntl = None  # type: ignore[assignment]  # no such module here (Windows): None, looked at before each use

_OLD_FILES = {"notes": ("notes_db", "notes.sqlite3"), "todos": ("todos", "todos.json")}
"""kind -> (its old [paths] key, the file name the starter skills use in its folder)."""
_SQLITE_SIDECARS = ("-wal", "-shm", "-journal")


@dataclass
class Plan:
    """What moving one workspace takes: file moves, the ``[paths]`` edits and the new ``write_dirs``."""

    moves: list[tuple[Path, Path]] = field(default_factory=list)
    paths: dict[str, str | None] = field(default_factory=dict)  # key -> new value, None to remove it
    write_dirs: list[str] = field(default_factory=list)
    folders: list[Path] = field(default_factory=list)


def plan_migration(root: Path, raw: dict[str, Any]) -> Plan | None:
    """The plan to move the workspace at ``root`` (settings ``raw``) to the current layout, or None if it is current.

    Settings of a shape this cannot read are left for the settings check to report.
    """
    paths = raw.get("paths", {})
    skills = raw.get("skills", {})
    if not isinstance(paths, dict) or not isinstance(skills, dict):
        return None
    data = paths.get("data", "data")
    write_dirs = skills.get("write_dirs")
    if not isinstance(data, str) or not (write_dirs is None or isinstance(write_dirs, list)):
        return None
    data_dir = _resolve(root, data)
    broad = [d for d in write_dirs or [] if isinstance(d, str) and _resolve(root, d) == data_dir]
    old_keys = isinstance(paths.get("notes_db"), str) or _is_file_setting(root, paths.get("todos"))
    old_files = (write_dirs is None or bool(broad)) and any(
        (data_dir / name).is_file() for _, name in _OLD_FILES.values()
    )
    if not (old_keys or old_files):
        return None  # the current layout: a write dir that is the data dir is refused by the settings check
    plan = Plan()
    for kind, (old_key, name) in _OLD_FILES.items():
        old = paths.get(old_key)
        # the old setting, when it names the file itself (not a folder to keep it in)
        old_file = old if isinstance(old, str) and (old_key != kind or _is_file_setting(root, old)) else None
        current = None if kind == old_key and old_file is not None else paths.get(kind)
        folder = current if isinstance(current, str) else posixpath.join(data, kind)
        if old_file is not None:
            if old_key != kind:
                plan.paths[old_key] = None
            plan.paths[kind] = folder
        source = _resolve(root, old_file) if old_file is not None else data_dir / name
        target = _resolve(root, folder) / name
        if source == target or not source.is_file():
            continue
        if data_dir not in source.parents:
            raise _failed(
                root / "semif.toml",
                f"[paths] {old_key} points outside the data dir ({source}): move it to "
                f"{_rel(root, target)} and set [paths] {kind} by hand",
            )
        for suffix in ("", *_SQLITE_SIDECARS):
            if suffix == "" or source.with_name(source.name + suffix).exists():
                plan.moves.append((source.with_name(source.name + suffix), target.with_name(name + suffix)))
    kept = [d for d in write_dirs or [] if d not in broad]
    folders = {kind: plan.paths.get(kind) or paths.get(kind) or posixpath.join(data, kind) for kind in FOLDERS}
    plan.write_dirs = kept + [f for f in folders.values() if isinstance(f, str) and f not in kept]
    plan.folders = [_resolve(root, f) for f in folders.values() if isinstance(f, str)]
    return plan


def migrate(root: Path, settings_file: Path, raw: dict[str, Any], check: Callable[[dict[str, Any]], object]) -> bool:
    """Move the workspace at ``root`` to the current layout if it needs it; True when it was moved.

    ``check`` is handed the settings the move would leave and raises if they
    are not valid; then nothing is moved. Runs under a lock on ``semif.toml``,
    re-reading it there, so two processes loading the same workspace move it once.
    """
    if plan_migration(root, raw) is None:
        return False
    import tomllib

    with _locked(settings_file):
        text = settings_file.read_text(encoding="utf-8")
        raw = tomllib.loads(text)
        plan = plan_migration(root, raw)
        if plan is None:
            return False
        new_text = _rewritten(text, plan)
        try:
            check(tomllib.loads(new_text))
        except WorkspaceError as exc:
            raise _failed(settings_file, f"the settings it would leave are not valid: {exc}") from exc
        _apply(plan, root, settings_file, new_text)
    moved = ", ".join(f"{_rel(root, a)} -> {_rel(root, b)}" for a, b in plan.moves) or "no files"
    print(
        f"semif: moved the workspace {root} to the new layout ({moved}); skills now write only to "
        f"{', '.join(plan.write_dirs)}; semif.toml updated",
        file=sys.stderr,
    )
    return True


def _apply(plan: Plan, root: Path, settings_file: Path, new_text: str) -> None:
    """Carry ``plan`` out; on any failure undo what was done and raise a WorkspaceError saying why."""
    for source, target in plan.moves:
        if target.exists() or target.is_symlink():
            raise _failed(settings_file, f"both {_rel(root, source)} and {_rel(root, target)} exist; keep one")
    done: list[tuple[Path, Path]] = []
    made: list[Path] = []
    try:
        for folder in plan.folders:
            for missing in reversed([folder, *folder.parents]):
                if not missing.exists():
                    missing.mkdir()
                    made.append(missing)
        for source, target in plan.moves:
            os.rename(source, target)
            done.append((source, target))
        _replace(settings_file, new_text)
    except Exception as exc:
        for source, target in reversed(done):
            with contextlib.suppress(OSError):
                os.rename(target, source)
        for folder in reversed(made):
            with contextlib.suppress(OSError):
                folder.rmdir()
        why = f"{exc.strerror}: {exc.filename}" if isinstance(exc, OSError) and exc.strerror else str(exc)
        raise _failed(settings_file, why) from exc


def _rewritten(text: str, plan: Plan) -> str:
    """``text`` with the plan's ``[paths]`` and ``write_dirs`` changes; every other line and comment kept."""
    try:
        import tomlkit
    except ImportError as exc:  # pragma: no cover - a dependency of the package
        raise WorkspaceError("tomlkit is not installed (pip install tomlkit)") from exc
    doc = tomlkit.parse(text)
    if plan.paths:
        paths = doc.setdefault("paths", tomlkit.table())
        for key, value in plan.paths.items():
            if value is None:
                paths.pop(key, None)
            else:
                paths[key] = value
    skills = doc.setdefault("skills", tomlkit.table())
    skills["write_dirs"] = plan.write_dirs
    return tomlkit.dumps(doc)


def _replace(path: Path, text: str) -> None:
    replace_file(path, text, fsync=True)


@contextlib.contextmanager
def _locked(path: Path) -> Iterator[None]:
    with path.open("rb") as handle:
        if fcntl is not None:
            fcntl.flock(handle, fcntl.LOCK_EX)
        yield


def _failed(settings_file: Path, why: str) -> WorkspaceError:
    return WorkspaceError(f"{settings_file}: cannot move this workspace to the new layout ({why}); nothing was changed")


def _is_file_setting(root: Path, value: Any) -> bool:
    """True when a ``[paths]`` value names a file (the old ``todos = "data/todos.json"``), not a folder."""
    if not isinstance(value, str):
        return False
    path = _resolve(root, value)
    return path.is_file() or (not path.is_dir() and path.suffix == ".json")


def _resolve(root: Path, value: str) -> Path:
    return (root / Path(value).expanduser()).resolve()


def _rel(root: Path, path: Path) -> str:
    try:
        return path.relative_to(root).as_posix()
    except ValueError:
        return str(path)
