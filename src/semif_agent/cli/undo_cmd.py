"""``semif undo RUN``: take back what a run changed, from the before-images it kept, and log why it was unwanted."""

from __future__ import annotations

import sys

import click

from ._common import json_option, print_json, workspace_option
from .workspace_cmds import open_workspace


@click.command("undo")
@click.argument("run_id")
@click.option(
    "--reason",
    type=click.Choice(["route", "result"]),
    help="What was unwanted: the route (the request should not have gone to that skill: a routing failure that "
    "`semif train` learns) or only the result (the skill was right: nothing about the route is learned). Asked when "
    "standard input is a terminal; else result.",
)
@click.option(
    "--force",
    is_flag=True,
    help="Undo what is still as the run left it; leave the files edited or deleted since as they are now.",
)
@click.option("--by", metavar="NAME", help="Who undoes the run (default: your login name).")
@workspace_option
@json_option
def undo(run_id: str, reason: str | None, force: bool, by: str | None, workspace: str | None, as_json: bool) -> None:
    """Take back what a run changed: remove the files it created, put back those it modified or deleted.

    \b
    RUN_ID is a run's id as `semif log` lists it, or a unique prefix of it.
    Each run keeps the files it changes as they were before (up to 1 MiB a
    file, 8 MiB a run, for the last 200 runs that changed files). A file that
    is no longer as the run left it (edited or deleted since), or was not
    kept, is named and nothing is undone; --force then undoes the rest and
    leaves those files as they are (it never overwrites nor removes them).

    \b
    The undo is logged with its reason. `--reason route` (the request should
    not have gone to that skill) counts as a failure label of the run's route,
    so `semif train` learns that the request should not go there. `--reason
    result` (right skill, unwanted change) teaches nothing about the route.
    Without --reason the question is asked on a terminal; elsewhere (a script)
    the reason is result, so that nothing wrong is learned.

    \b
      semif undo 20261130-101500-a1b2c3
      semif undo 20261130-1015 --reason route --json
      semif undo 20261130-1015 --reason result --force
    """
    from ..loop.undo import DEFAULT_REASON, check_undo, files_said, reason_said, undo_logged_run
    from ..records import DecisionLog, login_name

    ws = open_workspace(workspace)
    log = DecisionLog.for_workspace(ws)
    asked = reason is None and sys.stdin.isatty()
    if asked:
        record = check_undo(ws, log, run_id, force=force)  # refused before the question when it cannot be undone
        reason = _ask_reason(record.skill)
    done, row = undo_logged_run(ws, log, run_id, by=by or login_name(), reason=reason or DEFAULT_REASON, force=force)
    route_failure = row.reason == "route"
    if as_json:
        print_json({**done.to_dict(), "reason": row.reason, "routing_failure": route_failure, "row": row.to_row()})
        return
    said = files_said(done.removed, done.restored, done.skipped)
    if done.removed or done.restored:
        click.echo(f"undid run {done.run_id} ({row.skill or 'no skill'}): {said}")
    else:  # --force with every file blocked: the undo is logged, but no file was touched
        why = "; ".join(f"{path} {reason}" for path, reason in done.skipped.items())
        click.echo(
            f"nothing was changed: every file run {done.run_id} ({row.skill or 'no skill'}) changed was changed "
            f"since, and --force leaves such files as they are ({why})"
        )
    click.echo(reason_said(row.reason, row.skill))
    if route_failure:
        click.echo("`semif label RUN --skill NAME` says where it should have gone")
    elif not asked and reason is None:
        click.echo("(no --reason given: taken as result; `semif label RUN --outcome failure` says the route was wrong)")


def _ask_reason(skill: str | None) -> str:
    """Ask on the terminal whether the route or only the result was unwanted."""
    went = skill or "no skill"
    click.echo(f"What was unwanted?\n  route   the request should not have gone to {went}", err=True)
    click.echo(f"  result  {went} was right, only this change was unwanted", err=True)
    return str(click.prompt("route or result", type=click.Choice(["route", "result"]), show_choices=False, err=True))


COMMANDS = [undo]
