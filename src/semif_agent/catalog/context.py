"""What a skill script's ``entrypoint(argv, ctx)`` receives: :class:`SkillScriptContext`.

Standard library only: the warm worker imports this module to build the context.
"""

from __future__ import annotations

import os
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from pathlib import Path

_FIELDS = ("workspace_root", "skill_dir", "skill_id", "skill_name", "env", "hook_type")


class SkillScriptContext:
    """Per-call context handed to a skill script's ``entrypoint(argv, ctx)``; read-only.

    It carries what the subprocess path puts in the environment, so an
    entrypoint needs no global state. The two folders are kept as given and made
    :class:`~pathlib.Path` objects when first read: building them costs a call's
    child a fifth of a millisecond, which a hook that never reads them is spared.

    Attributes:
        workspace_root: This agent's workspace (``AGENT_WORK_DIR``); also the working directory.
        skill_dir: The skill's folder (``SKILL_DIR``).
        skill_id: Registry skill id (``SKILL_ID``).
        skill_name: Display name (``SKILL_NAME``).
        env: The environment the call runs with.
        hook_type: The lifecycle hook being run (``SKILL_HOOK``), empty for a plain script.
    """

    __slots__ = ("_folders", "_paths", "skill_id", "skill_name", "env", "hook_type")
    _folders: tuple[str | os.PathLike[str], str | os.PathLike[str]]
    _paths: tuple[Path, Path] | None
    skill_id: str
    skill_name: str
    env: dict[str, str]
    hook_type: str

    def __init__(
        self,
        workspace_root: str | os.PathLike[str],
        skill_dir: str | os.PathLike[str],
        skill_id: str,
        skill_name: str,
        env: dict[str, str] | None = None,
        hook_type: str = "",
    ) -> None:
        """``workspace_root`` and ``skill_dir``: paths or strings (read back as paths)."""
        initial = object.__setattr__
        initial(self, "_folders", (workspace_root, skill_dir))
        initial(self, "_paths", None)
        initial(self, "skill_id", skill_id)
        initial(self, "skill_name", skill_name)
        initial(self, "env", {} if env is None else env)
        initial(self, "hook_type", hook_type)

    @property
    def workspace_root(self) -> Path:
        return self._folder_paths()[0]

    @property
    def skill_dir(self) -> Path:
        return self._folder_paths()[1]

    def _folder_paths(self) -> tuple[Path, Path]:
        paths = self._paths
        if paths is None:
            from pathlib import Path  # here: the warm worker imports it once a call has needed it

            workspace_root, skill_dir = self._folders
            paths = (Path(workspace_root), Path(skill_dir))
            object.__setattr__(self, "_paths", paths)
        return paths

    def __setattr__(self, name: str, value: object) -> None:
        from dataclasses import FrozenInstanceError  # what a frozen dataclass raises, as this was one

        raise FrozenInstanceError(f"cannot assign to field {name!r}")

    def __delattr__(self, name: str) -> None:
        from dataclasses import FrozenInstanceError

        raise FrozenInstanceError(f"cannot delete field {name!r}")

    def _values(self) -> tuple[object, ...]:
        return tuple(getattr(self, name) for name in _FIELDS)

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, SkillScriptContext) or other.__class__ is not self.__class__:
            return NotImplemented
        return self._values() == other._values()  # unhashable, as a class with __eq__ and no __hash__: env is a dict

    def __reduce__(self) -> tuple[type[SkillScriptContext], tuple[object, ...]]:
        """Copied and pickled through the constructor (its fields are read-only)."""
        return self.__class__, (*self._folders, self.skill_id, self.skill_name, self.env, self.hook_type)

    def __repr__(self) -> str:
        fields = ", ".join(f"{name}={getattr(self, name)!r}" for name in _FIELDS)
        return f"{self.__class__.__name__}({fields})"
