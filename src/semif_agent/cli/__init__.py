"""The ``semif`` command: a thin face over the library."""

from __future__ import annotations

import click

from ._common import SemifGroup


@click.group(cls=SemifGroup, context_settings={"help_option_names": ["-h", "--help"]})
@click.version_option(package_name="semif-agent", prog_name="semif")
def main() -> None:
    """semif: route requests through a tree of skills, run them, judge them, log every decision.

    \b
    Start here:
      semif init ws                       make a starter workspace
      semif run "Email Alice ..." -w ws   route a request, run the skill, assess it
      semif log -w ws                     the decisions it made (training rows)
    """


def _register() -> None:
    from . import catalog_cmds, chat_cmd, eval_cmd, forge_cmds, log_cmd, models_cmd, run_cmd, skills_cmd
    from . import tree_build_cmd, tree_cmds, workspace_cmds

    for command in (catalog_cmds.validate, catalog_cmds.prompt, *forge_cmds.SKILL_COMMANDS):
        skills_cmd.skills.add_command(command)
    for command in tree_build_cmd.COMMANDS:
        tree_cmds.tree.add_command(command)

    for module in (workspace_cmds, tree_cmds, run_cmd, chat_cmd, skills_cmd, log_cmd, eval_cmd, models_cmd):
        for command in module.COMMANDS:
            main.add_command(command)


_register()
