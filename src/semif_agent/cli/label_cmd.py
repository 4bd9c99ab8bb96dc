"""``semif label``: a person's label of a logged run, appended to the decision log as one row."""

from __future__ import annotations

import click

from ..errors import UnknownSkillError, UserError
from ..workspace import Workspace
from ._common import json_option, print_json, workspace_option
from ._run_lines import describe_run
from .workspace_cmds import open_workspace


@click.command("label")
@click.argument("run_id")
@click.option(
    "--skill", metavar="NAME", help="The skill the request should have gone to (a skill of the workspace's tree)."
)
@click.option("--none", "no_skill", is_flag=True, help="No skill fits the request: it should have been handed back.")
@click.option("--outcome", type=click.Choice(["success", "failure"]), help="How the run really ended.")
@click.option("--note", metavar="TEXT", help="A note kept with the label.")
@click.option("--by", metavar="NAME", help="Who gives the label (default: your login name).")
@click.option(
    "--undo", "take_back", is_flag=True, help="Take back every label people gave the run (the same as `semif unlabel`)."
)
@workspace_option
@json_option
def label(
    run_id: str,
    skill: str | None,
    no_skill: bool,
    outcome: str | None,
    note: str | None,
    by: str | None,
    take_back: bool,
    workspace: str | None,
    as_json: bool,
) -> None:
    """Label a logged run: the skill its request should have gone to (or none), and its real outcome.

    \b
    RUN_ID is a run's id as `semif log --runs` lists it, or a unique prefix of it.
    The label is appended to the decision log (earlier rows are never changed);
    labelling a run again overrides only what the new label says. --undo takes
    the run's labels back: it is unlabelled again (until the next `semif train`
    the router keeps what it learned from them).

    \b
      semif label 20261130-101500-a1b2c3 --skill notes.add
      semif label 20261130-1015 --outcome failure --note "wrote to the wrong Alice"
      semif label 20261130-1015 --none
      semif label 20261130-1015 --undo
    """
    from ..records import DecisionLog, login_name

    if take_back:
        if skill is not None or no_skill or outcome is not None or note is not None:
            raise UserError("--undo takes the run's labels back: give it no --skill, --none, --outcome or --note")
        _take_back(run_id, by, workspace, as_json)
        return
    if skill is not None and no_skill:
        raise UserError("give --skill NAME or --none, not both")
    if skill is None and not no_skill and outcome is None:
        raise UserError("say what the label is: --skill NAME, --none, or --outcome success|failure")
    ws = open_workspace(workspace)
    log = DecisionLog.for_workspace(ws)
    if skill is not None:
        skill = _skill_id(ws, skill)
    row = log.add_label(run_id, by=by or login_name(), skill=skill, no_skill=no_skill, outcome=outcome, note=note)
    if as_json:
        print_json(row.to_dict())
        return
    click.echo(describe_run(log.run(row.run_id)))


@click.command("unlabel")
@click.argument("run_id")
@click.option("--by", metavar="NAME", help="Who takes the labels back (default: your login name).")
@workspace_option
@json_option
def unlabel(run_id: str, by: str | None, workspace: str | None, as_json: bool) -> None:
    """Take back every label people gave a logged run (the same as `semif label RUN_ID --undo`).

    \b
    The run is unlabelled again: a row saying so is appended to the decision log
    (earlier rows are never changed), and what the assessment or a client said of
    the run counts again. The next `semif train` learns without the labels.

    \b
      semif unlabel 20261130-101500-a1b2c3
    """
    _take_back(run_id, by, workspace, as_json)


def _take_back(run_id: str, by: str | None, workspace: str | None, as_json: bool) -> None:
    from ..records import DecisionLog, login_name

    ws = open_workspace(workspace)
    log = DecisionLog.for_workspace(ws)
    row = log.take_back_labels(run_id, by=by or login_name())
    if as_json:
        print_json(row.to_dict())
        return
    click.echo(describe_run(log.run(row.run_id)))
    click.echo("labels taken back; `semif train` learns without them")


def _skill_id(ws: Workspace, name: str) -> str:
    """The id of the skill ``name`` names (its id, or a SKILL.md skill's name as written: the tree's one resolver);
    else one line naming the closest leaves."""
    from ..tree.tree import closest_names
    from .workspace_cmds import load_tree

    tree = load_tree(ws)
    leaves = tree.skills
    found = tree.find(name)
    if found is not None:
        return found.name
    close = closest_names(name, leaves, limit=3)
    hint = f"; did you mean {', '.join(close)}?" if close else " (see `semif skills list`)"
    raise UnknownSkillError(f"no skill named {name!r} in this workspace's tree{hint}")


COMMANDS = [label, unlabel]
