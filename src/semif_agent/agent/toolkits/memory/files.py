"""The client-side memory tool (``memory_20250818``-compatible): a model's own files under ``/memories``.

::

    agent = Agent(...).with_memory_tool("agent-memory")      # or a FileMemoryBackend

The model sees one tool, ``memory``, with the commands of Anthropic's memory
tool: ``view`` (a directory listing two levels deep, or a file with line
numbers), ``create`` (write a file, replacing it), ``str_replace`` (one
unique occurrence), ``insert`` (after line N; 0 is the top), ``delete`` and
``rename``. Paths are virtual: ``/memories/notes.md`` is
``<base>/memories/notes.md`` on disk (the layout of Anthropic's local
filesystem memory tool). The agent also appends :data:`MEMORY_PROTOCOL` to
its system prompt.

Containment is strict. A path must be ``/memories`` or below it, written
plainly: a ``..`` or ``.`` segment, a backslash, a percent sign (``%2e%2e``),
a NUL or any control character, an absolute path elsewhere, or a symlink
anywhere on the way (even one pointing inside) is refused, all with the one
error :data:`OUTSIDE`. Files are opened without following symlinks.
"""

from __future__ import annotations

import os
import shutil
import stat
import threading
from collections.abc import Mapping
from pathlib import Path

from ...._json import JsonObject
from ....errors import check_type
from ...errors import AgentError
from ...tools import AgentTool
from ...toolsets import FunctionToolset

ROOT = "/memories"
OUTSIDE = "memory paths must stay inside /memories"
LINE_WIDTH = 6
MAX_FILE_BYTES = 1_000_000

MEMORY_PROTOCOL = """\
MEMORY PROTOCOL: you have a memory directory, /memories, that outlives this conversation; use the `memory` tool on it.
1. Before anything else, `view` /memories to see what earlier sessions recorded about this task.
2. As you work, record progress, decisions and facts you will need later in files there, and keep them current \
(`str_replace`, `insert`); delete what became wrong.
3. Assume your context may be cut at any moment: anything not written to /memories may be lost.
Keep the directory tidy: a few well-named files, no duplicates."""

COMMANDS = ("view", "create", "str_replace", "insert", "delete", "rename")

INPUT_SCHEMA: JsonObject = {
    "type": "object",
    "properties": {
        "command": {"type": "string", "enum": list(COMMANDS), "description": "What to do."},
        "path": {
            "type": "string",
            "description": "A path under /memories (view, create, str_replace, insert, delete).",
        },
        "view_range": {
            "type": "array",
            "items": {"type": "integer"},
            "description": "view: [first line, last line] (last -1: to the end).",
        },
        "file_text": {"type": "string", "description": "create: the file's content."},
        "old_str": {"type": "string", "description": "str_replace: the text to replace (must occur exactly once)."},
        "new_str": {"type": "string", "description": "str_replace: the replacement."},
        "insert_line": {"type": "integer", "description": "insert: the line after which to insert (0: at the top)."},
        "insert_text": {"type": "string", "description": "insert: the text to insert."},
        "old_path": {"type": "string", "description": "rename: the path to move."},
        "new_path": {"type": "string", "description": "rename: where to move it."},
    },
    "required": ["command"],
}


class MemoryToolError(AgentError):
    """A memory command failed; the model sees the message as an error result."""


class FileMemoryBackend:
    """Memory files on disk under ``<base_path>/memories``, behind strict ``/memories`` containment."""

    def __init__(self, base_path: str | os.PathLike[str]) -> None:
        check_type("base_path", base_path, (str, os.PathLike))
        self.base_path = Path(base_path).expanduser().absolute()
        self.root = self.base_path / "memories"
        self.root.mkdir(parents=True, exist_ok=True, mode=0o700)
        if self.root.is_symlink() or not self.root.is_dir():
            raise MemoryToolError(f"{self.root} must be a real directory")
        self._lock = threading.RLock()

    # -- paths ---------------------------------------------------------------

    def resolve(self, path: object) -> Path:
        """The real path for a virtual ``/memories/...`` path, or :class:`MemoryToolError` (:data:`OUTSIDE`)."""
        if not isinstance(path, str) or not _plain(path):
            raise MemoryToolError(OUTSIDE)
        if path != ROOT and not path.startswith(ROOT + "/"):
            raise MemoryToolError(OUTSIDE)
        parts = [p for p in path[len(ROOT) :].split("/") if p]
        if any(p in (".", "..") for p in parts):
            raise MemoryToolError(OUTSIDE)
        current = self.root
        for part in parts:  # no symlink anywhere on the way, even one that points inside
            current = current / part
            if current.is_symlink():
                raise MemoryToolError(OUTSIDE)
        real_root = os.path.realpath(self.root)
        real = os.path.realpath(current)
        if real != real_root and not real.startswith(real_root + os.sep):
            raise MemoryToolError(OUTSIDE)
        return current

    def _path(self, command: Mapping[str, object], key: str) -> tuple[str, Path]:
        path = command.get(key)
        return str(path), self.resolve(path)

    # -- commands ------------------------------------------------------------

    def execute(self, command: Mapping[str, object]) -> str:
        """Run one command (the tool's input); return the result text or raise :class:`MemoryToolError`."""
        name = command.get("command")
        handler = {
            "view": self._view,
            "create": self._create,
            "str_replace": self._str_replace,
            "insert": self._insert,
            "delete": self._delete,
            "rename": self._rename,
        }.get(str(name))
        if handler is None:
            raise MemoryToolError(f"unknown command {name!r}; use one of {', '.join(COMMANDS)}")
        with self._lock:
            return handler(command)

    def view(self, path: str, view_range: list[int] | None = None) -> str:
        return self.execute({"command": "view", "path": path, "view_range": view_range})

    def create(self, path: str, file_text: str) -> str:
        return self.execute({"command": "create", "path": path, "file_text": file_text})

    def str_replace(self, path: str, old_str: str, new_str: str) -> str:
        return self.execute({"command": "str_replace", "path": path, "old_str": old_str, "new_str": new_str})

    def insert(self, path: str, insert_line: int, insert_text: str) -> str:
        return self.execute({"command": "insert", "path": path, "insert_line": insert_line, "insert_text": insert_text})

    def delete(self, path: str) -> str:
        return self.execute({"command": "delete", "path": path})

    def rename(self, old_path: str, new_path: str) -> str:
        return self.execute({"command": "rename", "old_path": old_path, "new_path": new_path})

    def clear(self) -> None:
        """Delete every memory file (the /memories directory stays)."""
        with self._lock:
            for child in self.root.iterdir():
                _remove(child)

    def _view(self, command: Mapping[str, object]) -> str:
        path, target = self._path(command, "path")
        info = _lstat(target, path)
        if stat.S_ISDIR(info.st_mode):
            lines = [f"{_size(info.st_size)}\t{path}"]
            lines.extend(f"{size}\t{path.rstrip('/')}/{rel}" for size, rel in self._listing(target, "", 1))
            return f"Files and directories up to 2 levels deep in {path} (hidden items excluded):\n" + "\n".join(lines)
        content = self._read(target, path)
        lines = content.split("\n")
        if content.endswith("\n"):
            lines.pop()
        start, end = 1, len(lines)
        view_range = command.get("view_range")
        if view_range:
            if (
                not isinstance(view_range, list)
                or len(view_range) != 2
                or not all(isinstance(n, int) for n in view_range)
            ):
                raise MemoryToolError("view_range must be [first line, last line]")
            start = max(1, view_range[0])
            end = len(lines) if view_range[1] == -1 else min(view_range[1], len(lines))
            if start > max(end, 1):
                raise MemoryToolError(f"view_range {view_range} is outside the file's {len(lines)} lines")
        shown = [f"{n:>{LINE_WIDTH}}\t{lines[n - 1]}" for n in range(start, end + 1)]
        return f"Content of {path} with line numbers:\n" + "\n".join(shown)

    def _listing(self, directory: Path, prefix: str, depth: int) -> list[tuple[str, str]]:
        items: list[tuple[str, str]] = []
        for child in sorted(directory.iterdir(), key=lambda p: p.name):
            if child.name.startswith(".") or child.is_symlink():
                continue
            rel = f"{prefix}{child.name}"
            info = child.lstat()
            if stat.S_ISDIR(info.st_mode):
                items.append((_size(info.st_size), rel + "/"))
                if depth < 2:
                    items.extend(self._listing(child, rel + "/", depth + 1))
            elif stat.S_ISREG(info.st_mode):
                items.append((_size(info.st_size), rel))
        return items

    def _create(self, command: Mapping[str, object]) -> str:
        path, target = self._path(command, "path")
        text = _text(command, "file_text", allow_empty=True)
        if target == self.root or (target.exists() and target.is_dir()):
            raise MemoryToolError(f"{path} is a directory")
        existed = target.exists()
        self._mkdirs(target.parent)
        self._write(target, text)
        return f"File {'overwritten' if existed else 'created'} successfully at: {path}"

    def _str_replace(self, command: Mapping[str, object]) -> str:
        path, target = self._path(command, "path")
        old, new = _text(command, "old_str", allow_empty=False), _text(command, "new_str", allow_empty=True)
        content = self._read(target, path)
        count = content.count(old)
        if count == 0:
            raise MemoryToolError(f"no replacement was made: old_str does not occur verbatim in {path}")
        if count > 1:
            lines = sorted({content[:i].count("\n") + 1 for i in _positions(content, old)})
            raise MemoryToolError(
                f"no replacement was made: old_str occurs {count} times in {path} "
                f"(lines {', '.join(map(str, lines))}); make it unique"
            )
        line = content[: content.index(old)].count("\n")
        updated = content.replace(old, new, 1)
        self._write(target, updated)
        all_lines = updated.split("\n")
        first, last = max(0, line - 2), min(len(all_lines), line + new.count("\n") + 3)
        snippet = "\n".join(f"{n + 1:>{LINE_WIDTH}}\t{all_lines[n]}" for n in range(first, last))
        return f"The memory file {path} has been edited. The changed lines:\n{snippet}"

    def _insert(self, command: Mapping[str, object]) -> str:
        path, target = self._path(command, "path")
        text = _text(command, "insert_text", allow_empty=True)
        at = command.get("insert_line")
        if not isinstance(at, int) or isinstance(at, bool):
            raise MemoryToolError("insert needs insert_line (a line number; 0 inserts at the top)")
        content = self._read(target, path)
        lines = content.split("\n")
        if content.endswith("\n"):
            lines.pop()
        if not 0 <= at <= len(lines):
            raise MemoryToolError(f"insert_line {at} is outside 0..{len(lines)} for {path}")
        lines[at:at] = text.rstrip("\n").split("\n")
        self._write(target, "\n".join(lines) + "\n")
        return f"The memory file {path} has been edited: text inserted after line {at}."

    def _delete(self, command: Mapping[str, object]) -> str:
        path, target = self._path(command, "path")
        if target == self.root:
            raise MemoryToolError("the /memories directory itself cannot be deleted")
        _lstat(target, path)
        _remove(target)
        return f"Deleted {path}"

    def _rename(self, command: Mapping[str, object]) -> str:
        (old_path, source), (new_path, destination) = self._path(command, "old_path"), self._path(command, "new_path")
        if self.root in (source, destination):
            raise MemoryToolError("the /memories directory itself cannot be renamed")
        _lstat(source, old_path)
        if os.path.lexists(destination):
            raise MemoryToolError(f"{new_path} already exists")
        if stat.S_ISDIR(source.lstat().st_mode) and destination.is_relative_to(source):
            raise MemoryToolError(f"cannot move {old_path} into itself")
        self._mkdirs(destination.parent)
        os.rename(source, destination)
        return f"Renamed {old_path} to {new_path}"

    # -- files ---------------------------------------------------------------

    def _read(self, target: Path, path: str) -> str:
        info = _lstat(target, path)
        if not stat.S_ISREG(info.st_mode):
            raise MemoryToolError(f"{path} is not a file")
        fd = os.open(target, os.O_RDONLY | getattr(os, "O_NOFOLLOW", 0))
        with os.fdopen(fd, "rb") as handle:
            data = handle.read(MAX_FILE_BYTES + 1)
        if len(data) > MAX_FILE_BYTES:
            raise MemoryToolError(f"{path} is over {MAX_FILE_BYTES} bytes")
        return data.decode("utf-8", errors="replace")

    def _write(self, target: Path, text: str) -> None:
        data = text.encode("utf-8")
        if len(data) > MAX_FILE_BYTES:
            raise MemoryToolError(f"a memory file may hold at most {MAX_FILE_BYTES} bytes")
        temp = target.with_name(f".{target.name}.{os.getpid()}.{threading.get_ident()}.tmp")
        fd = os.open(temp, os.O_WRONLY | os.O_CREAT | os.O_TRUNC | getattr(os, "O_NOFOLLOW", 0), 0o600)
        try:
            with os.fdopen(fd, "wb") as handle:
                handle.write(data)
            os.replace(temp, target)
        except BaseException:
            temp.unlink(missing_ok=True)
            raise

    def _mkdirs(self, directory: Path) -> None:
        current = self.root
        for part in directory.relative_to(self.root).parts:
            current = current / part
            if current.is_symlink():
                raise MemoryToolError(OUTSIDE)
            if not current.exists():
                current.mkdir(mode=0o700)
            elif not current.is_dir():
                raise MemoryToolError(
                    f"/memories/{current.relative_to(self.root).as_posix()} is a file, not a directory"
                )

    def __repr__(self) -> str:
        return f"<FileMemoryBackend {str(self.root)!r}>"


def memory_tool(backend: FileMemoryBackend | str | os.PathLike[str]) -> AgentTool:
    """The ``memory`` tool over ``backend`` (a :class:`FileMemoryBackend` or its base path)."""
    store = backend if isinstance(backend, FileMemoryBackend) else FileMemoryBackend(backend)

    def memory(**command: object) -> str:
        return store.execute(command)

    return AgentTool(
        name="memory",
        description=(
            "Your persistent memory directory, /memories: view, create, str_replace, insert, delete and "
            "rename files there to keep what you learn across conversations."
        ),
        input_schema=INPUT_SCHEMA,
        fn=memory,
    )


def _plain(path: str) -> bool:
    return not any(ch in path for ch in "\\%") and all(ch >= " " and ch != "\x7f" for ch in path)


def _text(command: Mapping[str, object], key: str, *, allow_empty: bool = False) -> str:
    value = command.get(key)
    if not isinstance(value, str) or (not value and not allow_empty):
        raise MemoryToolError(f"{command.get('command')} needs {key} (a string)")
    return value


def _lstat(target: Path, path: str) -> os.stat_result:
    try:
        return target.lstat()
    except (FileNotFoundError, NotADirectoryError):
        raise MemoryToolError(f"{path} does not exist") from None


def _remove(target: Path) -> None:
    if target.is_dir() and not target.is_symlink():
        shutil.rmtree(target)
    else:
        target.unlink()


def _positions(text: str, sub: str) -> list[int]:
    found, start = [], text.find(sub)
    while start != -1:
        found.append(start)
        start = text.find(sub, start + 1)
    return found


def _size(size: int) -> str:
    value = float(size)
    for unit in ("B", "K", "M", "G"):
        if value < 1024 or unit == "G":
            return f"{int(value)}{unit}" if value == int(value) else f"{value:.1f}{unit}"
        value /= 1024
    return f"{size}B"  # pragma: no cover - the loop always returns


def memory_toolset(backend: FileMemoryBackend | str | os.PathLike[str]) -> FunctionToolset:
    """The ``memory`` tool over ``backend``, with :data:`MEMORY_PROTOCOL` for the system prompt
    (what ``Agent.with_memory_tool`` adds)."""
    return FunctionToolset([memory_tool(backend)], name="memory", instructions=MEMORY_PROTOCOL)
