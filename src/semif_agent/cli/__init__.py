"""The ``semif`` command: a thin face over the library.

Every command is listed in :data:`COMMANDS` by name, module and summary, and
its module is imported only when the command runs (or its own ``--help`` is
asked), so ``semif --help`` and each command start without loading the rest.
"""

from __future__ import annotations

import click

from .. import __version__
from ._common import LazyCommand, SemifGroup

_CLI = "semif_agent.cli."

COMMANDS: tuple[LazyCommand, ...] = (
    LazyCommand(
        "init",
        _CLI + "workspace_cmds:init",
        "Make a starter workspace in DIRECTORY: settings, a tree of skills, sample data (--empty: settings only), "
        "and an empty skills/ folder for SKILL.md skills.",
    ),
    LazyCommand("run", _CLI + "run_cmd:run", "Route TEXT to a skill, run it, and assess the result."),
    LazyCommand(
        "route",
        _CLI + "route_cmd:route",
        "Show where TEXT would go: each decision's top candidates and their probabilities; nothing is run or logged.",
    ),
    LazyCommand(
        "chat", _CLI + "chat_cmd:chat", "Chat with an agent that can use this workspace's skills, code and SKILL.md."
    ),
    LazyCommand(
        "tree",
        _CLI + "tree_cmds:tree",
        "Show the skill tree: categories and their skills, code skills and SKILL.md skills alike.",
        subcommands=(
            LazyCommand(
                "refresh",
                _CLI + "tree_cmds:refresh",
                "Bring the stored tree (data/tree.json) up to date with the workspace's SKILL.md skills.",
            ),
            LazyCommand(
                "build", _CLI + "tree_build_cmd:build", "Group a flat set of skills into a tree of categories."
            ),
        ),
    ),
    LazyCommand(
        "skills",
        _CLI + "skills_cmd:skills",
        "List and inspect skills.",
        subcommands=(
            LazyCommand(
                "validate",
                _CLI + "catalog_cmds:validate",
                "Check SKILL.md skills against the Agent Skills specification, and say which load.",
            ),
            LazyCommand(
                "prompt",
                _CLI + "catalog_cmds:prompt",
                "Print the <available_skills> block that lists skills in a system prompt.",
            ),
            LazyCommand(
                "check",
                _CLI + "forge_cmds:check",
                "Check a skill body against the contract; every violation with its line.",
            ),
            LazyCommand(
                "new",
                _CLI + "forge_cmds:new",
                "Have a model write a new code skill; it is admitted only if it passes the contract.",
            ),
            LazyCommand(
                "review",
                _CLI + "forge_cmds:review",
                "Show a skill's body, its check report and its run history; optionally regenerate it.",
            ),
        ),
    ),
    LazyCommand(
        "log",
        _CLI + "log_cmd:log",
        "List the logged runs, one line each: request, chosen skill, outcome and who judged it, label.",
        subcommands=(
            LazyCommand(
                "show",
                _CLI + "log_show_cmd:show",
                "Show one logged run whole: its request, route, prediction, actions, changes, assessment and label.",
            ),
        ),
    ),
    LazyCommand(
        "label",
        _CLI + "label_cmd:label",
        "Label a logged run: the skill its request should have gone to (or none), and its real outcome.",
    ),
    LazyCommand(
        "unlabel",
        _CLI + "label_cmd:unlabel",
        "Take back every label people gave a logged run (the same as `semif label RUN_ID --undo`).",
    ),
    LazyCommand(
        "undo",
        _CLI + "undo_cmd:undo",
        "Take back what a run changed: remove the files it created, put back those it modified or deleted.",
    ),
    LazyCommand(
        "train",
        _CLI + "train_cmd:train",
        "Fit the workspace's router from everything it knows, and measure it on held-out requests.",
    ),
    LazyCommand(
        "encoder",
        _CLI + "encoder_cmd:encoder",
        "Say which encoder embeds for the local engine, and switch between the installed and the tuned one.",
    ),
    LazyCommand(
        "eval",
        _CLI + "eval_cmd:eval_",
        'Route every request of DATASET (JSON lines {"text", "skill"}) and report how well each strategy did.',
    ),
    LazyCommand(
        "ui",
        _CLI + "ui_cmd:ui",
        "Serve a local web view of the workspace's runs, decisions, tree and quality, where runs are labelled.",
    ),
    LazyCommand(
        "mcp",
        _CLI + "mcp_cmd:mcp",
        "Serve the workspace's skills to any MCP client: find, load, run and report, over stdio or HTTP.",
        subcommands=(
            LazyCommand(
                "token",
                _CLI + "mcp_token_cmd:token",
                "Give each HTTP client a token of its own: add, list and revoke them.",
            ),
        ),
    ),
    LazyCommand(
        "models",
        _CLI + "models_cmd:models",
        "List the models configured (semif.toml and environment) and whether each endpoint is reachable.",
    ),
)
"""Every command of ``semif``, with its subcommands; each summary is the command's own short help."""


@click.group(cls=SemifGroup, lazy_commands=COMMANDS, context_settings={"help_option_names": ["-h", "--help"]})
@click.version_option(__version__, prog_name="semif")  # not importlib.metadata: importing it costs ~30 ms
def main() -> None:
    """semif: route requests through a tree of skills, run them, judge them, log every decision.

    \b
    Start here:
      semif run "Email Alice that the report is ready"   route it, run the skill, assess it
      semif route "Email Alice ..."       where it would go, without running anything
      semif log                           the runs (semif log show RUN: one run whole)
      semif init ws                       a starter workspace in ws (then -w ws)

    Every command finds its workspace the same way: -w DIR, else
    $SEMIF_WORKSPACE, else the current directory if it has semif.toml, else
    your own (made by the first semif run; its path is printed).
    """
