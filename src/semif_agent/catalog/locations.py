"""Where SKILL.md skills conventionally live, and which wins when two share a name.

Precedence, highest first (a skill id taken by a higher location shadows the
same id further down, with a :class:`SkillCatalogWarning` for each collision):

1. ``<workspace>/skills/``          the workspace's own skills        source ``workspace``
2. ``<workspace>/.agents/skills/``  the cross-client project folder   source ``workspace``
3. ``~/.agents/skills/``            the user's skills (``$HOME``)     source ``user``

All three use the ``custom`` namespace, so ``custom@<name>`` names the winner.
Built-in skills (``built-in@``) and environment skills (``env:<name>@``) live
in their own namespaces and never collide with these.
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path

CUSTOM_NAMESPACE = "custom"
BUILTIN_NAMESPACE = "built-in"
BUILTIN_ROOT = Path(__file__).resolve().parent / "builtin"
"""Built-in skills shipped with the package (none yet: the folder may be absent)."""


@dataclass(frozen=True)
class SkillLocation:
    """A folder of skill folders, with the namespace and source its skills get.

    ``source`` says what kind of place it is: ``workspace``, ``user``,
    ``configured`` (a folder a workspace's settings list), and so on.
    """

    path: Path
    namespace: str
    source: str
    label: str


def user_home(home: str | os.PathLike[str] | None = None) -> Path:
    """``home`` if given, else ``$HOME``, else the platform's idea of the home folder."""
    if home is not None:
        return Path(home)
    env_home = os.environ.get("HOME")
    return Path(env_home) if env_home else Path.home()


def user_skills_dir(home: str | os.PathLike[str] | None = None) -> Path:
    """The user's skills folder: ``~/.agents/skills``."""
    return user_home(home) / ".agents" / "skills"


def workspace_skill_dirs(workspace_root: str | os.PathLike[str]) -> list[Path]:
    """A workspace's skill folders, highest precedence first."""
    root = Path(workspace_root)
    return [root / "skills", root / ".agents" / "skills"]


def conventional_locations(
    workspace_root: str | os.PathLike[str] | None = None,
    *,
    home: str | os.PathLike[str] | None = None,
    include_user: bool = True,
) -> list[SkillLocation]:
    """The conventional skill folders, highest precedence first (absent ones included)."""
    locations: list[SkillLocation] = []
    if workspace_root is not None:
        locations += [custom_location(path, "workspace") for path in workspace_skill_dirs(workspace_root)]
    if include_user:
        locations.append(custom_location(user_skills_dir(home), "user"))
    return locations


def custom_location(path: Path, source: str) -> SkillLocation:
    """A folder of ``custom`` skills, labelled by its path; ``source`` says what kind of place it is."""
    return SkillLocation(path, CUSTOM_NAMESPACE, source, str(path))
