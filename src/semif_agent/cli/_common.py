"""What every ``semif`` command shares: error handling, workspace and output options."""

from __future__ import annotations

import json
import sys
import warnings
from collections.abc import Callable
from typing import Any

import click

from ..errors import SemifError, UserError


class SemifGroup(click.Group):
    """A click group that turns our errors into one line and a non-zero exit."""

    def invoke(self, ctx: click.Context) -> Any:
        warnings.showwarning = _show_warning
        try:
            return super().invoke(ctx)
        except UserError as exc:
            raise click.ClickException(str(exc)) from None
        except SemifError as exc:
            raise click.ClickException(f"{type(exc).__name__}: {exc}") from None
        except KeyboardInterrupt:
            click.echo("interrupted", err=True)
            sys.exit(130)


def _show_warning(message, category, filename, lineno, file=None, line=None) -> None:  # noqa: ANN001
    click.echo(f"warning: {message}", err=True)


def workspace_option(fn: Callable) -> Callable:
    return click.option(
        "-w",
        "--workspace",
        "workspace",
        type=click.Path(file_okay=False, path_type=str),
        default=None,
        help="Workspace folder (default: the current directory if it has semif.toml).",
    )(fn)


def json_option(fn: Callable) -> Callable:
    return click.option("--json", "as_json", is_flag=True, help="Print machine-readable JSON.")(fn)


def print_json(value: Any) -> None:
    click.echo(json.dumps(value, ensure_ascii=False, indent=2, default=str))


def print_json_lines(rows: Any) -> None:
    for row in rows:
        click.echo(json.dumps(row, ensure_ascii=False, default=str))


def one_line(text: str, room: int) -> str:
    """``text`` on one line (runs of white space become one space), cut to ``room`` characters with "…"."""
    text = " ".join(text.split())
    room = max(room, 10)
    if len(text) <= room:
        return text
    cut = text[: room - 1]
    before_word = cut.rsplit(" ", 1)[0]
    return (before_word if len(before_word) > room // 2 else cut).rstrip() + "…"
