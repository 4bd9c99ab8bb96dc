"""``semif encoder``: which encoder embeds for the local engine, and the one step between it and the other."""

from __future__ import annotations

from typing import Any

import click

from ._common import json_option, print_json, workspace_option


@click.command("encoder")
@click.argument("switch", required=False, type=click.Choice(["on", "off"]))
@workspace_option
@json_option
def encoder(switch: str | None, workspace: str | None, as_json: bool) -> None:
    """Say which encoder embeds for the local engine, and switch between the installed and the tuned one.

    \b
    semif encoder        which encoder is in use, and what the tuned one was tuned on
    semif encoder off    back to the installed model and the routing trained on it
    semif encoder on     to the workspace's tuned encoder (semif train --encoder makes it) and its routing

    Each encoder keeps its own routing (the router trained on its embeddings), so switching loses
    nothing and needs no training. semif.toml's [routing] encoder, when set, decides over both.
    """
    from ..errors import EngineConfigError
    from ..routing.encoder.store import encoder_in_use, stored_encoder, switch_encoder
    from .workspace_cmds import open_workspace

    ws = open_workspace(workspace)
    said = None
    if switch is not None:
        said = switch_encoder(ws, "tuned" if switch == "on" else "base")
    problem = None
    try:
        tuned: dict[str, Any] | None = stored_encoder(ws)
    except EngineConfigError as exc:  # a damaged tuned encoder: going back to the installed one must still work
        tuned, problem = None, str(exc)
    in_use = encoder_in_use(ws)
    if as_json:
        print_json({"in_use": in_use, "tuned": tuned, "said": said, "problem": problem})
        return
    if said:
        click.echo(said)
    click.echo(f"in use: the {'tuned' if in_use == 'tuned' else 'installed'} encoder")
    if problem is not None:
        click.echo(f"tuned: {problem}")
        return
    if tuned is None:
        click.echo("tuned: none (semif train --encoder makes one)")
        return
    losses = tuned.get("held_out_loss") or []
    loss = f", held-out loss {losses[0]:.3f} -> {min(losses):.3f}" if losses else ""
    click.echo(
        f"tuned: {tuned['model_id']}, on {tuned.get('pairs', '?')} pairs of {tuned.get('rows', '?')} requests "
        f"at {tuned.get('tuned_at', '?')}{loss}"
    )


COMMANDS = [encoder]
