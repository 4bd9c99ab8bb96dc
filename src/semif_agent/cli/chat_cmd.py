"""``semif chat``: an interactive session with an agent whose tools are the workspace's skills."""

from __future__ import annotations

import json
import sys
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

import click

from .._text import clip, plural
from ._common import workspace_option
from ._engines import run_settings
from .workspace_cmds import load_tree, open_workspace

if TYPE_CHECKING:
    from ..agent.events import AgentEvent
    from ..llm.protocol import LLMProvider

_PREVIEW = 160


@click.command()
@workspace_option
@click.option(
    "--model",
    metavar="PROVIDER/MODEL",
    help="The agent's model (default: the workspace's, else that of the "
    "provider the environment sets up: OPENAI_API_KEY/OPENAI_BASE_URL or ANTHROPIC_API_KEY).",
)
@click.option(
    "--engine",
    "engine_name",
    metavar="NAME",
    help="SemIf engine for the skills' own decisions (default: the workspace's).",
)
@click.option(
    "--max-rounds", type=click.IntRange(1), default=10, show_default=True, help="Rounds (model calls) per message."
)
@click.option(
    "--allow-scripts", is_flag=True, help="Let the agent run SKILL.md skills' scripts (sandboxed, in the workspace)."
)
def chat(
    workspace: str | None, model: str | None, engine_name: str | None, max_rounds: int, allow_scripts: bool
) -> None:
    """Chat with an agent that can use this workspace's skills, code and SKILL.md.

    The skills are offered on demand, as `semif run` chooses them: the prompt
    lists the likely ones for each message and the tree's categories, and the
    agent activates a skill before using it. Every shortlist and activation is
    logged in the decision log (see `semif log`).

    Reads one message per line from standard input until end of input or
    /exit; /reset forgets the conversation. Text streams as it comes; tool
    calls and their results are shown as they happen. A turn the model
    could not answer (no connection, a refused key) is shown as one error
    line and the session goes on; the exit code is then 1.
    """
    from ..assistant.chat import skill_agent
    from ..llm.calllog import logged
    from ..loop.runner import SkillRunner

    ws = open_workspace(workspace, create_default=True)
    settings = run_settings(ws, engine=engine_name)
    engine = settings.build_engine()
    runner = SkillRunner.from_settings(settings, engine=engine, tree=load_tree(ws, engine=engine))
    agent = skill_agent(
        runner,
        logged(_provider(settings.engine_table, model), ws, purpose="chat"),
        model=model,
        max_rounds=max_rounds,
        allow_scripts=allow_scripts,
    )
    agent.llm  # noqa: B018 - build it now: a missing key is one line before the session, not mid-way
    click.echo(
        f"semif chat: {agent.llm.model_id} with {plural(len(agent.skills), 'skill')} on demand; /exit to leave",
        err=True,
    )
    failed = 0
    while True:
        click.echo("> ", nl=False, err=True)
        line = sys.stdin.readline()
        if not line:
            click.echo(err=True)  # end the prompt's line
            break
        text = line.strip()
        if text in ("/exit", "/quit"):
            break
        if text == "/reset":
            agent.clear_history()
            click.echo("(conversation cleared)", err=True)
        elif text:
            for event in agent.stream(text):
                failed += _show(event)
    if failed:
        raise click.ClickException(f"{plural(failed, 'turn')} failed (see the error lines above)")


def _provider(settings: Mapping[str, Any], model: str | None) -> LLMProvider:
    """The provider the workspace configures (``--model`` first), else that of the provider set up (said on stderr)."""
    from ..llm.registry import create_provider
    from ..llm.settings import provider_arguments
    from ..loop.settings import model_settings

    settings, model_note = model_settings(settings, model)
    if model_note is not None:
        click.echo(f"semif: {model_note}", err=True)
    ref, kwargs = provider_arguments(settings)
    return create_provider(ref, **kwargs)


def _show(event: AgentEvent) -> int:
    """Show one event; 1 for a turn that ended in an error, else 0."""
    if event.type == "text_delta":
        click.echo(event.text, nl=False)
    elif event.type == "tool_started":
        click.echo(click.style(f"\n[{event.name} {json.dumps(event.tool_input, ensure_ascii=False)}]", dim=True))
    elif event.type == "tool_finished":
        preview = clip(event.result, _PREVIEW)
        if event.is_error:
            click.echo(click.style(f"  ! {event.name}: {preview}", fg="red"))
        else:
            click.echo(click.style(f"  -> {preview}", dim=True))
    elif event.type == "usage_limit_reached":
        click.echo(
            click.style(
                f"\n(usage limit reached: {event.kind} {event.used} of {event.limit}; wrapping up)", fg="yellow"
            )
        )
    elif event.type == "turn_finished":
        click.echo()
        diagnostics = event.diagnostics
        if diagnostics.error is not None:
            click.echo(f"error: {diagnostics.error.message}", err=True)
            return 1
        if diagnostics.stopped_by != "stop":
            click.echo(click.style(f"(stopped: {diagnostics.stopped_by})", fg="yellow"), err=True)
    return 0


COMMANDS = [chat]
