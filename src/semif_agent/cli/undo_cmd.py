"""``semif undo RUN``: take back what a run changed, from the before-images it kept, and log it as a failure."""

from __future__ import annotations

import click

from ._common import json_option, print_json, workspace_option
from .workspace_cmds import open_workspace


@click.command("undo")
@click.argument("run_id")
@click.option("--by", metavar="NAME", help="Who undoes the run (default: your login name).")
@workspace_option
@json_option
def undo(run_id: str, by: str | None, workspace: str | None, as_json: bool) -> None:
    """Take back what a run changed: remove the files it created, put back those it modified or deleted.

    \b
    RUN_ID is a run's id as `semif log` lists it, or a unique prefix of it.
    Each run keeps the files it changes as they were before (up to 1 MiB a
    file, 8 MiB a run, for the last 200 runs that changed files). A file that
    changed since the run, or was not kept, is named and nothing is undone.
    The undo is logged: it counts as a failure label of the run's route, so
    `semif train` learns that the request should not go there.

    \b
      semif undo 20261130-101500-a1b2c3
      semif undo 20261130-1015 --json
    """
    from ..loop.undo import undo_logged_run
    from ..records import DecisionLog, login_name

    ws = open_workspace(workspace)
    log = DecisionLog(ws.log_path, fsync=bool(ws.settings["log"].get("fsync")))
    done, row = undo_logged_run(ws, log, run_id, by=by or login_name())
    if as_json:
        print_json({**done.to_dict(), "row": row})
        return
    said = [
        f"removed {', '.join(done.removed)}" if done.removed else "",
        f"put back {', '.join(done.restored)}" if done.restored else "",
    ]
    click.echo(f"undid run {done.run_id} ({row['skill'] or 'no skill'}): {'; '.join(s for s in said if s)}")
    click.echo(
        "logged as a failure of its route: `semif train` learns from it; `semif label RUN --skill NAME` says where it should have gone"
    )


COMMANDS = [undo]
