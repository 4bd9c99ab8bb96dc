"""An agent's view of its workspace folder: :class:`WorkspaceFS`.

Every path is relative to the workspace and must stay inside it; an escape
raises :class:`~.errors.SkillPathError` with one uniform message.
"""

from __future__ import annotations

import os
from pathlib import Path

from ..errors import check_type
from .errors import SkillPathError
from .paths import OUTSIDE_WORKSPACE, relative_inside, resolve_inside


class WorkspaceFS:
    """Reads and writes files inside one workspace folder (created if missing)."""

    def __init__(self, root: str | os.PathLike[str]) -> None:
        """Bind to ``root``, creating it when absent."""
        check_type("root", root, (str, os.PathLike))
        self.root = Path(root).expanduser().resolve()
        self.root.mkdir(parents=True, exist_ok=True)

    def resolve(self, relative_path: str) -> Path:
        """The real path of ``relative_path`` inside the workspace (raises on escape)."""
        return resolve_inside(self.root, relative_path, message=OUTSIDE_WORKSPACE)

    def relative(self, path: str | os.PathLike[str]) -> str | None:
        """``path`` relative to the workspace when it lies inside it, else None."""
        return relative_inside(self.root, path)

    def exists(self, relative_path: str) -> bool:
        """True when the path exists inside the workspace (False for escapes)."""
        try:
            return self.resolve(relative_path).exists()
        except SkillPathError:
            return False

    def read_text(self, relative_path: str) -> str:
        """A file's text (UTF-8, undecodable bytes replaced)."""
        return self.resolve(relative_path).read_text(encoding="utf-8", errors="replace")

    def write_text(self, relative_path: str, content: str) -> Path:
        """Write a file, creating its folders; returns its path."""
        target = self.resolve(relative_path)
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_text(content, encoding="utf-8")
        return target

    def append_text(self, relative_path: str, content: str) -> Path:
        """Append to a file, creating it and its folders; returns its path."""
        target = self.resolve(relative_path)
        target.parent.mkdir(parents=True, exist_ok=True)
        with target.open("a", encoding="utf-8") as handle:
            handle.write(content)
        return target

    def list(self, relative_path: str = ".") -> list[str]:
        """Names in a folder of the workspace, sorted; folders end with ``/``."""
        folder = self.resolve(relative_path)
        return sorted(entry.name + ("/" if entry.is_dir() else "") for entry in os.scandir(folder))

    def delete(self, relative_path: str) -> bool:
        """Remove a file; True when it existed."""
        target = self.resolve(relative_path)
        if target == self.root or not target.is_file():
            return False
        target.unlink()
        return True
