"""``semif tree build``: group a flat catalog of skills into a tree of categories."""

from __future__ import annotations

from pathlib import Path

import click


@click.command("build")
@click.argument("source", type=click.Path(exists=True, path_type=Path))
@click.option("-o", "--output", type=click.Path(dir_okay=False, path_type=Path), help="Write the tree here (default: print it).")
@click.option("--max-children", default=15, show_default=True, type=click.IntRange(min=2),
              help="Children per category at most (15: with `none`, 16 options per decision).")
def build(source: Path, output: Path | None, max_children: int) -> None:
    """Group a flat set of skills into a tree of categories.

    SOURCE is a folder of SKILL.md skills, a tree file with a "skills" list, or
    JSON lines of {"name", "description"}. The result has the shape of
    data/categories.json, so `semif eval --tree` can route on it.
    """
    import json

    from ..tree.build import build_tree, load_flat_skills

    skills = load_flat_skills(source)
    click.echo(f"grouping {len(skills)} skills...", err=True)
    built = build_tree(skills, max_children=max_children)
    text = json.dumps(built, indent=2, ensure_ascii=False) + "\n"
    if output is None:
        click.echo(text, nl=False)
    else:
        output.write_text(text, encoding="utf-8")
        click.echo(f"wrote {len(built['categories'])} categories holding {len(built['skills'])} skills to {output}", err=True)


COMMANDS = [build]
"""The commands of this module, for the ``tree`` group."""
