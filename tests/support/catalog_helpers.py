"""Helpers for the SKILL.md catalog tests (the catalog and sandbox tests share them)."""

from __future__ import annotations

import textwrap
from pathlib import Path

import pytest

REPO_ROOT = Path(__file__).resolve().parents[2]
CORPUS = REPO_ROOT / "tests" / "fixtures" / "skills-corpus"  # copies of real skills (see its README)
SKILLS_REF = "skills-ref==0.1.1"


def make_skill(
    root: Path,
    folder: str,
    frontmatter: str | None = None,
    body: str = "# Instructions\n\nDo the thing.\n",
    files: dict[str, str] | None = None,
) -> Path:
    """Write a skill folder; ``frontmatter`` defaults to a valid name and description."""
    skill = root / folder
    skill.mkdir(parents=True, exist_ok=True)
    if frontmatter is None:
        frontmatter = f"name: {folder}\ndescription: The {folder} skill. Use it for {folder} things."
    (skill / "SKILL.md").write_text(f"---\n{textwrap.dedent(frontmatter).strip()}\n---\n{body}", encoding="utf-8")
    for relative, content in (files or {}).items():
        target = skill / relative
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_text(textwrap.dedent(content), encoding="utf-8")
    return skill


def corpus_skill_folders(corpus_root: Path) -> list[Path]:
    return sorted(path.parent for path in corpus_root.glob("*/*/SKILL.md"))


def cache_dir(config: pytest.Config, factory: pytest.TempPathFactory, name: str) -> Path:
    """A folder kept between runs in pytest's cache (a temporary one when the cache is off)."""
    cache = getattr(config, "cache", None)
    return Path(cache.mkdir(name)) if cache is not None else factory.mktemp(name)
