"""``semif tree build``: group a flat catalog of skills into a tree of categories."""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

import click

from .._text import plural
from ..errors import UserError
from ._common import StageBars


@click.command("build")
@click.argument("source", type=click.Path(exists=True, path_type=Path))
@click.option(
    "-o", "--output", type=click.Path(dir_okay=False, path_type=Path), help="Write the tree here (default: print it)."
)
@click.option(
    "--max-children",
    default=15,
    show_default=True,
    type=click.IntRange(min=2),
    help="Children per category at most (15: with `none`, 16 options per decision).",
)
def build(source: Path, output: Path | None, max_children: int) -> None:
    """Group a flat set of skills into a tree of categories.

    SOURCE is a folder of SKILL.md skills (collections of collections too), a
    tree file with a "skills" list, or JSON lines of {"name", "description"}.
    The result has the shape of data/categories.json, so `semif eval --tree`
    can route on it; SKILL.md paths in it are relative to the output file's
    folder (absolute when printed). Progress and a summary go to stderr.
    """
    import json

    from ..tree.build import build_tree, load_flat_skills

    if output is not None:
        _writable(output)
    skills = load_flat_skills(source)
    with StageBars() as bars:
        built = build_tree(skills, max_children=max_children, progress=bars)
    if output is not None:
        _relative_paths(built, output.resolve().parent)
    text = json.dumps(built, indent=2, ensure_ascii=False) + "\n"
    summary = (
        f"{plural(len(built['categories']), 'category', 'categories')}, "
        f"{plural(len(built['skills']), 'skill')}, "
        f"depth {_depth(built)} (decisions from the top to the deepest skill)"
    )
    if output is None:
        click.echo(text, nl=False)
        click.echo(f"built {summary}", err=True)
    else:
        _write(output, text)
        click.echo(f"wrote {output}: {summary}", err=True)


def _writable(output: Path) -> None:
    """Fail before the work, with one line, when the tree could not be written."""
    try:
        output.parent.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        raise UserError(f"{output}: cannot write there ({exc.strerror})") from exc
    if output.is_dir() or not os.access(output.parent, os.W_OK):
        raise UserError(f"{output}: cannot write there")


def _write(output: Path, text: str) -> None:
    """Replace ``output`` in one step: a failed write leaves the previous file whole."""
    partial = output.with_name(f".{output.name}.partial")
    try:
        partial.write_text(text, encoding="utf-8")
        os.replace(partial, output)
    except OSError as exc:
        partial.unlink(missing_ok=True)
        raise UserError(f"{output}: cannot write ({exc.strerror})") from exc


def _relative_paths(built: dict[str, Any], folder: Path) -> None:
    """SKILL.md paths made relative to ``folder`` (where the tree file is), as the manifests expect."""
    for entry in built["skills"]:
        if entry.get("path"):
            entry["path"] = os.path.relpath(entry["path"], folder)


def _depth(built: dict[str, Any]) -> int:
    """Decisions from the top down to the deepest skill: one per category level, one for the skill."""
    parents = {c["name"]: c.get("parent", "") for c in built["categories"]}

    def level(name: str) -> int:
        return 1 + (level(parents[name]) if parents.get(name) else 0)

    return max((level(s["category"]) + 1 for s in built["skills"]), default=0)


COMMANDS = [build]
"""The commands of this module, for the ``tree`` group."""
