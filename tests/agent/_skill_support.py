"""Helpers for the agent's skill tests: SKILL.md folders written on the fly, the shared corpus."""

from __future__ import annotations

import textwrap
from pathlib import Path

REPO_ROOT = Path(__file__).resolve().parents[2]
CORPUS = REPO_ROOT / "tests" / "fixtures" / "skills-corpus"  # copies of real skills


def write_skill(
    root: Path,
    name: str,
    description: str = "",
    body: str = "",
    *,
    extra: str = "",
    files: dict[str, str] | None = None,
) -> Path:
    """Write ``root/name/SKILL.md`` (and ``files``); returns the skill folder."""
    folder = root / name
    folder.mkdir(parents=True, exist_ok=True)
    description = description or f"The {name} skill. Use it for {name} work."
    frontmatter = f"name: {name}\ndescription: {description}\n{textwrap.dedent(extra).strip()}".strip()
    body = body or f"# {name}\n\nDo {name} things."
    (folder / "SKILL.md").write_text(f"---\n{frontmatter}\n---\n{body}\n", encoding="utf-8")
    for relative, content in (files or {}).items():
        target = folder / relative
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_text(textwrap.dedent(content), encoding="utf-8")
    return folder


def system_of(request) -> str:
    """The system prompt a scripted provider was sent ('' when none)."""
    first = request.messages[0]
    return first.content if first.role == "system" else ""


def tool_names(request) -> list[str]:
    return [spec.name for spec in request.tools]
