"""What every ``semif`` command shares: its group (errors, lazy commands), workspace and output options.

Errors: a :class:`~semif_agent.errors.SemifError` (or click's own) ends the
command with one line on standard error and a non-zero exit; when ``--json``
was asked, the same error is ``{"error": "..."}`` on standard output, with the
same exit code, so a script reading the output always gets JSON.
"""

from __future__ import annotations

import importlib
import io
import json
import sys
import time
import warnings
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from typing import Any, BinaryIO, TextIO, cast

import click

from .._json import json_line
from .._text import clip, inert, inert_but_colour
from ..errors import SemifError, UserError

JSON_ASKED = "semif.json"
"""The key of ``click.Context.meta`` that says ``--json`` was asked (errors are then JSON too)."""


@dataclass(frozen=True)
class LazyCommand:
    """A command known by name and summary, imported from ``target`` ("module:attribute") only when it runs.

    ``summary`` is the command's own short help (the first sentence of its
    docstring), shown by the group's ``--help`` without importing the module.
    ``subcommands`` are lazy commands added to the group ``target`` names.
    """

    name: str
    target: str
    summary: str
    subcommands: tuple[LazyCommand, ...] = ()

    def load(self) -> click.Command:
        """The real command (its module imported); a module that fails to import is one clear line."""
        module_name, _, attribute = self.target.partition(":")
        try:
            command = getattr(importlib.import_module(module_name), attribute)
        except Exception as exc:  # noqa: BLE001 - a broken or missing dependency must not become a traceback
            raise click.ClickException(
                f"the {self.name!r} command cannot be loaded ({module_name}): {type(exc).__name__}: {exc}"
            ) from None
        if self.subcommands:
            command.add_lazy_commands(self.subcommands)
        return command


class SemifGroup(click.Group):
    """A click group that turns our errors into one line and a non-zero exit.

    Its commands may be :class:`LazyCommand` entries: listed in ``--help`` from
    their summaries, and imported only when one is run (or its own help asked).
    """

    def __init__(self, *args: Any, lazy_commands: Iterable[LazyCommand] = (), **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.lazy_commands: dict[str, LazyCommand] = {}
        self.add_lazy_commands(lazy_commands)

    def add_lazy_commands(self, entries: Iterable[LazyCommand]) -> None:
        self.lazy_commands.update((entry.name, entry) for entry in entries)

    def list_commands(self, ctx: click.Context) -> list[str]:
        return sorted({*self.commands, *self.lazy_commands})

    def get_command(self, ctx: click.Context, cmd_name: str) -> click.Command | None:
        if cmd_name not in self.commands and cmd_name in self.lazy_commands:
            self.add_command(self.lazy_commands[cmd_name].load(), cmd_name)
        return self.commands.get(cmd_name)

    def resolve_command(
        self, ctx: click.Context, args: list[str]
    ) -> tuple[str | None, click.Command | None, list[str]]:
        """As click's, with close names suggested among every command, imported or not."""
        try:
            return super().resolve_command(ctx, args)
        except click.UsageError as exc:
            unknown = getattr(exc, "command_name", None)  # click's NoSuchCommand (8.4+) suggests close names
            if unknown is None:
                raise
            # Only NoSuchCommand has command_name; it is looked up by name, as older clicks have no such class.
            no_such_command = cast("type[click.exceptions.NoSuchCommand]", type(exc))
            raise no_such_command(unknown, possibilities=self.list_commands(ctx), ctx=ctx) from None

    def format_commands(self, ctx: click.Context, formatter: click.HelpFormatter) -> None:
        """The Commands section, with the summaries of commands not imported yet."""
        rows = [(name, self._listed(name)) for name in self.list_commands(ctx)]
        rows = [(name, command) for name, command in rows if not command.hidden]
        if rows:
            limit = formatter.width - 6 - max(len(name) for name, _ in rows)
            with formatter.section("Commands"):
                formatter.write_dl([(name, command.get_short_help_str(limit)) for name, command in rows])

    def _listed(self, name: str) -> click.Command:
        """The command if imported, else a stand-in carrying its summary (shortened exactly as click would)."""
        if name in self.commands:
            return self.commands[name]
        return click.Command(name, help=self.lazy_commands[name].summary)

    def parse_args(self, ctx: click.Context, args: list[str]) -> list[str]:
        ctx.meta.setdefault(JSON_ASKED, "--json" in args)  # the outermost group sees every word of the command line
        return super().parse_args(ctx, args)

    def invoke(self, ctx: click.Context) -> Any:
        warnings.showwarning = _show_warning
        stdout = sys.stdout
        if not isinstance(stdout, InertWriter):  # the outermost group only
            sys.stdout = InertWriter(stdout)
        try:
            return super().invoke(ctx)
        except (SemifError, click.ClickException) as exc:
            if isinstance(exc, UserError):
                exc = click.ClickException(inert(str(exc)))
            elif isinstance(exc, SemifError):
                exc = click.ClickException(inert(f"{type(exc).__name__}: {exc}"))
            elif type(exc) is click.ClickException:
                exc = click.ClickException(inert(exc.message))
            if ctx.meta.get(JSON_ASKED):
                click.echo(json.dumps({"error": exc.format_message()}, ensure_ascii=False))
                raise click.exceptions.Exit(exc.exit_code) from None
            raise exc from None
        except KeyboardInterrupt:
            click.echo("interrupted", err=True)
            sys.exit(130)
        finally:
            sys.stdout = stdout


class InertWriter(io.TextIOBase):
    """Standard output with every control character and escape sequence shown escaped (:func:`inert`), but our own
    colour: whatever text of a skill a command prints, a terminal never obeys it. JSON passes unchanged (its
    strings hold no raw control characters; the escapes used are JSON's own)."""

    def __init__(self, stream: TextIO) -> None:
        super().__init__()
        self.stream = stream

    def write(self, text: str) -> int:
        if not isinstance(text, str):
            raise TypeError(f"write() argument must be str, not {type(text).__name__}")
        self.stream.write(inert_but_colour(text))
        return len(text)

    def flush(self) -> None:
        self.stream.flush()

    def isatty(self) -> bool:
        return bool(self.stream.isatty())

    def fileno(self) -> int:
        return int(self.stream.fileno())

    def writable(self) -> bool:
        return True

    @property
    def encoding(self) -> str:  # type: ignore[override]  # TextIOBase declares it a plain attribute
        return str(getattr(self.stream, "encoding", "utf-8") or "utf-8")

    @property
    def errors(self) -> str | None:  # type: ignore[override]  # TextIOBase declares it a plain attribute
        return getattr(self.stream, "errors", None)

    @property
    def buffer(self) -> BinaryIO:
        """The stream's bytes underneath: for a protocol spoken over standard output (``semif mcp``'s stdio), which
        is a program's input, not a terminal's."""
        return self.stream.buffer


def _show_warning(message, category, filename, lineno, file=None, line=None) -> None:
    say_once(f"warning: {' '.join(str(message).split())}")


def say_once(line: str) -> None:
    """``line`` on stderr, once per command (a command may load its workspace, and meet its warnings, more than once)."""
    ctx = click.get_current_context(silent=True)
    said = ctx.meta.setdefault("semif.said", set()) if ctx is not None else set()
    if line not in said:
        said.add(line)
        click.echo(line, err=True)


def workspace_option(fn: Callable) -> Callable:
    return click.option(
        "-w",
        "--workspace",
        "workspace",
        type=click.Path(file_okay=False, path_type=str),
        default=None,
        help="Workspace folder (default: $SEMIF_WORKSPACE, else the current directory if it has semif.toml, "
        "else your own workspace).",
    )(fn)


def json_option(fn: Callable | None = None, *, shape: str = "one JSON object") -> Callable:
    """``--json``; ``shape`` says what is printed ("one JSON object", "JSON lines, one object per ...")."""

    def decorate(command: Callable) -> Callable:
        return click.option(
            "--json",
            "as_json",
            is_flag=True,
            help=f'Print {shape} on standard output; an error is {{"error": "..."}} there too, '
            "with the same exit code.",
        )(command)

    return decorate(fn) if fn is not None else decorate


def print_json(value: object) -> None:
    click.echo(json.dumps(value, ensure_ascii=False, indent=2, default=str))


def print_json_lines(rows: Iterable[object]) -> None:
    for row in rows:
        click.echo(json_line(row))


def inert_line(text: str) -> str:
    """``text`` (a path or a name from a skills folder) shown whole on one line: its line breaks and tabs written
    ``\\n`` and ``\\t``, every other control character escaped by :func:`inert`, so a folder's name can never
    print a line of its own."""
    return inert(text).replace("\n", "\\n").replace("\t", "\\t")


def one_line(text: str, room: int) -> str:
    """``text`` on one line (runs of white space become one space), cut to ``room`` characters with "…", made
    :func:`inert` (a skill's escape sequences shown as text)."""
    return inert(clip(text, max(room, 10)))


class StageBars:
    """A progress callback ``(stage, done, total)`` drawing one bar per stage on standard error.

    ``min_total`` skips stages too short to be worth a bar; with
    ``only_on_terminal`` no bar is drawn unless standard error is a terminal,
    and a stage of at least :attr:`LINE_FROM` items, or one named in ``slow``
    (few items, each long: the encoder's tuning steps), gets one line when it
    starts instead, and another every :attr:`EVERY` seconds it goes on (a
    script's log then says what a long wait is for, and that it still moves).
    """

    LINE_FROM = 200
    EVERY = 30.0

    def __init__(self, *, min_total: int = 0, only_on_terminal: bool = False, slow: tuple[str, ...] = ()) -> None:
        self.bar: Any = None
        self.stage = ""
        self.done = 0
        self.min_total = min_total
        self.shown = not only_on_terminal or sys.stderr.isatty()
        self.slow = slow
        self.said_at: float | None = None  # when the stage's last line was written (off a terminal)

    def __call__(self, stage: str, done: int, total: int) -> None:
        if total < self.min_total:
            return
        if not self.shown:
            self._line(stage, done, total)
            return
        if stage != self.stage:
            self.close()
            self.bar = click.progressbar(length=max(total, 1), label=f"{stage:<9}", file=sys.stderr)
            self.bar.__enter__()
            self.stage, self.done = stage, 0
        self.bar.update(max(0, done - self.done))
        self.done = max(done, self.done)

    def _line(self, stage: str, done: int, total: int) -> None:
        now = time.monotonic()
        if stage != self.stage:
            self.stage, self.said_at = stage, None
            if total >= max(self.min_total, self.LINE_FROM) or stage in self.slow:
                click.echo(f"semif: {stage} ({total:,})...", err=True)
                self.said_at = now
        elif self.said_at is not None and now - self.said_at >= self.EVERY and done < total:
            click.echo(f"semif: {stage}: {done:,} of {total:,}", err=True)
            self.said_at = now

    def close(self) -> None:
        if self.bar is not None:
            self.bar.__exit__(None, None, None)
            self.bar = None

    def __enter__(self) -> StageBars:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()
