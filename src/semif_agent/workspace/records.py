"""The workspace's records, and the rule that keeps skills' write dirs away from them.

Records are what the workspace keeps about itself, next to what skills
write: the settings, the data dir's own files (manifests, the admitted
bodies' hashes, the stored tree, tuned routing, the trained router), the
skill bodies, the decision and model-call logs, the folder the host keeps
its own files in (:data:`HOST_DIR`: the SKILL.md skills' trace, the MCP client tokens), and the SKILL.md skill
folders (the workspace's, those ``[skills] folders`` lists, the user's
``~/.agents/skills``), and the secrets file provider keys are read from. A
write dir may not be, contain or lie inside any of them, nor
contain the data dir; a relative one stays inside the workspace; an
absolute one elsewhere must be a folder of its own, not a system folder,
the home folder or anything above them, nor be, hold or lie inside another
workspace (a folder with its own ``semif.toml``, or the user's own workspace).
The records the host writes (the data dir and the two logs) stay inside the
workspace, wherever ``semif.toml`` puts them.
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from ..errors import WorkspaceError
from .credentials import SECRETS_ENV, secrets_file

if TYPE_CHECKING:
    from . import Workspace

FOLDERS = ("drafts", "notes", "calendar", "todos")
"""The kinds of data the starter skills write, each in its own folder (``[paths]``), by default under the data dir:
the write dirs unless ``[skills] write_dirs`` says otherwise."""

DATA_RECORDS = {
    "categories.json": "the skill manifests",
    "admitted.json": "the admitted bodies' hashes",
    "tree.json": "the stored skill tree",
    "routing.json": "the tuned routing",
    "router.json": "the trained router",
    "router.npz": "the trained router's weights",
    "encoder": "the tuned encoder and the routings kept for each encoder",
    "undo": "the before-images runs keep for semif undo",
    "act.lock": "the lock runs act under",
}
"""Files of the data dir that are records (name -> what it holds). The tree, routing and router modules keep their own names."""

HOST_DIR = ".semif"
"""The folder of the workspace the host writes its own files in (the SKILL.md skills' trace, the MCP client tokens),
never a skill."""

SETTINGS_FILE = "semif.toml"
"""The file that makes a folder a workspace: its settings."""

_MAX_LINKS = 40  # links one resolution follows, as the kernel's own limit

_SYSTEM = ("/bin", "/boot", "/dev", "/etc", "/lib", "/lib32", "/lib64", "/proc", "/run", "/sbin", "/sys", "/usr")


@dataclass(frozen=True)
class Record:
    """A path skills may not write: ``what`` it is and the ``setting`` that places it."""

    path: Path
    what: str
    setting: str


def records(ws: Workspace) -> list[Record]:
    """Every record of ``ws``, resolved."""
    found = [
        Record(ws.settings_file, "the settings", "semif.toml"),
        Record(ws.bodies_dir, "the skill bodies", "[paths] data"),
        Record(ws.log_path, "the decision log", "[log] path"),
        Record(ws.model_calls_path, "the model-call log", "[log] model_calls_path"),
        Record(ws.skills_md_dir, "the SKILL.md skills", "skills/"),
        Record(ws.root / ".agents" / "skills", "the SKILL.md skills", ".agents/skills/"),
        Record(ws.root / HOST_DIR, "the host's own folder", "the skill trace, the MCP client tokens"),
    ]
    found += [Record(ws.data_dir / name, what, "[paths] data") for name, what in DATA_RECORDS.items()]
    found += [
        Record(ws.resolve(folder), "a folder of SKILL.md skills", "[skills] folders")
        for folder in ws.settings.skills.folders
    ]
    home = os.environ.get("HOME") or str(Path.home())  # as the catalog finds the user's skills folder
    found += [
        Record(
            Path(os.path.realpath(Path(home, ".agents", "skills"))), "the user's SKILL.md skills", "~/.agents/skills"
        ),
        Record(Path(os.path.realpath(secrets_file())), "the secrets file", f"${SECRETS_ENV}, else ~/.config/semif"),
    ]
    return found


def default_workspace_dir() -> Path:
    """The per-user workspace: ``$SEMIF_HOME``, else ``$XDG_DATA_HOME/semif/workspace``."""
    home = os.environ.get("SEMIF_HOME")
    if home:
        return Path(home).expanduser()
    base = os.environ.get("XDG_DATA_HOME") or os.path.join(Path.home(), ".local", "share")
    return Path(base) / "semif" / "workspace"


def check_records_inside(ws: Workspace) -> None:
    """Refuse, with one line naming the setting, a record the host writes that leads outside the workspace.

    The host appends to the logs and writes the data dir's files (manifests,
    the tree, the trained router, undo records): a ``semif.toml`` someone
    handed over could otherwise have it write into any file its user can (a
    shell's start-up file, another workspace's log), through a path or a link.
    """
    for setting, given, path in (
        ("[paths] data", ws.settings.paths.data, ws.data_dir),
        ("[log] path", ws.settings.log.path, ws.log_path),
        ("[log] model_calls_path", ws.settings.log.model_calls_path, ws.model_calls_path),
    ):
        if _overlap(ws.root, path) not in ("is", "holds"):
            leads = (
                "" if str(path) == os.path.normpath(ws.root / os.path.expanduser(given)) else f" (it leads to {path})"
            )
            raise WorkspaceError(
                f'{ws.settings_file}: {setting} "{given}" lies outside the workspace{leads}: the host writes there, so '
                "it must be a path inside the workspace, relative to it"
            )


def check_write_dirs(ws: Workspace) -> None:
    """Refuse, with one line naming ``[skills] write_dirs``, a write dir that reaches a record or is too broad."""
    where = f"{ws.settings_file}: [skills] write_dirs"
    home = Path(os.path.realpath(Path.home()))
    data_dir, known = ws.data_dir, records(ws)
    for given in ws.settings.skills.write_dirs:
        path = ws.resolve(given)
        shown = f'"{given}"'
        inside = _overlap(ws.root, path) in ("is", "holds")
        if inside and _overlap(path, data_dir) in ("is", "holds"):
            raise WorkspaceError(
                f"{where} {shown} holds the data dir {_rel(ws, data_dir)}, where the workspace keeps its "
                f"records (manifests, skill bodies, logs): list only the folders skills write, such as "
                f'"{_rel(ws, data_dir / "drafts")}"'
            )
        if not inside and not Path(os.path.expanduser(given)).is_absolute():
            raise WorkspaceError(
                f"{where} {shown} lies outside the workspace: a relative write dir must stay "
                "inside it (give a folder elsewhere as an absolute path)"
            )
        if not inside and (
            _overlap(path, ws.root) == "holds"
            or _overlap(path, home) in ("is", "holds")
            or len(path.parts) <= 2
            or any(_overlap(Path(s), path) for s in _SYSTEM)
        ):
            raise WorkspaceError(
                f"{where} {shown} is too broad: a write dir outside the workspace must be a "
                "folder of its own, not a system folder, the home folder or one above them"
            )
        other = _another_workspace(ws, path)
        if other is not None:
            raise WorkspaceError(
                f"{where} {shown} {other[0]} another workspace, {other[1]}: skills may not write another "
                "workspace's records"
            )
        for record in known:
            clash = _overlap(path, record.path)
            if clash:
                raise WorkspaceError(
                    f"{where} {shown} {clash} {record.what} {_rel(ws, record.path)} "
                    f"({record.setting}): skills may not write the workspace's records"
                )


def _another_workspace(ws: Workspace, path: Path) -> tuple[str, str] | None:
    """How the write dir ``path`` reaches a workspace other than ``ws`` ("is", "holds", "lies inside") and which,
    or None: it is or lies inside a folder with a ``semif.toml`` of its own, or it is or holds the user's own
    workspace.

    For a write dir inside ``ws``, only the folders between it and ``ws``'s root count: one a skill wrote in its
    own write dir does not stop the workspace from loading.
    """
    inside = _overlap(ws.root, path) in ("is", "holds")
    for folder in (path, *path.parents):
        if folder == ws.root or (inside and (folder == path or folder in ws.root.parents)):
            continue
        if (folder / SETTINGS_FILE).is_file():
            return ("is" if folder == path else "lies inside", f"{folder} (it has a {SETTINGS_FILE})")
    own = Path(os.path.realpath(default_workspace_dir()))
    clash = _overlap(path, own)
    if clash in ("is", "holds") and own != ws.root:
        return (clash, f"your own {own}")
    return None


def check_unmoved(ws: Workspace, checked: tuple[Path, ...]) -> None:
    """Refuse, with one line naming ``[skills] write_dirs``, a write dir of ``ws`` that leads elsewhere than when its
    paths were ``checked`` (resolved then, in the same order) and that a skill could have moved: it had no link on
    its way then, or the way to it now goes through a folder skills may write. Then check them all again as
    loading does (:func:`check_write_dirs`).

    A skill that may write a folder may put a link in place of a write dir
    below it, or of a link on the way to one; a long-lived host (an MCP
    server, the web UI, an application) would otherwise resolve the link at
    its next run and let a skill write wherever it leads. A link the user put
    where no skill writes is theirs to point elsewhere between runs: it
    passes if it passes the check of loading.
    """
    writable = (*checked, *ws.write_roots)
    where = f"{ws.settings_file}: [skills] write_dirs"
    for given, now, then in zip(ws.settings.skills.write_dirs, ws.write_roots, checked, strict=False):
        if now == then:
            continue
        lexical = Path(os.path.normpath(ws.root / os.path.expanduser(given)))
        if then == lexical:
            raise WorkspaceError(
                f'{where} "{given}" became a link since the workspace was loaded (it leads to {now}, not to {then}); '
                "refusing to run skills there, nothing was written"
            )
        through = next(
            (f for f in _consulted(lexical) if any(_overlap(w, f) in ("is", "holds") for w in writable)), None
        )
        if through is not None:
            raise WorkspaceError(
                f'{where} "{given}" leads to {now} since the workspace was loaded, not to {then}, through {through} '
                "where skills write; refusing to run skills there, nothing was written"
            )
    check_write_dirs(ws)


def _consulted(path: Path) -> list[Path]:
    """The folders whose entries resolving the absolute ``path`` looks up, each link on the way followed as the
    kernel follows it (at most :data:`_MAX_LINKS` of them)."""
    folders: list[Path] = []
    pending = list(reversed(path.parts[1:]))
    current, links = Path(path.anchor), 0
    while pending and links <= _MAX_LINKS:
        part = pending.pop()
        if part == "..":
            current = current.parent
            continue
        folders.append(current)
        try:
            target = Path(os.readlink(current / part))
        except OSError:  # not a link, or missing
            current = current / part
            continue
        links += 1
        if target.is_absolute():
            current = Path(target.anchor)
        pending.extend(reversed(target.parts[1:] if target.is_absolute() else target.parts))
    return folders


def _overlap(write_dir: Path, record: Path) -> str:
    """How ``write_dir`` reaches ``record`` ("is", "holds", "lies inside"), or ``""`` (both resolved)."""
    folder, other = str(write_dir), str(record)
    if folder == other:
        return "is"
    if other.startswith(folder.rstrip(os.sep) + os.sep):
        return "holds"
    if folder.startswith(other.rstrip(os.sep) + os.sep):
        return "lies inside"
    return ""


def _rel(ws: Workspace, path: Path) -> str:
    try:
        return path.relative_to(ws.root).as_posix()
    except ValueError:
        return str(path)
