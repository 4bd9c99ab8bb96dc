"""``semif mcp token``: a bearer token per HTTP client, naming it in the log whatever it calls itself."""

from __future__ import annotations

import click

from ._common import SemifGroup, inert_line, json_option, print_json, workspace_option
from .workspace_cmds import open_workspace


@click.group("token", cls=SemifGroup)
def token() -> None:
    """Give each HTTP client a token of its own: add, list and revoke them.

    \b
    A client sending its token (Authorization: Bearer TOKEN) to `semif mcp --http` is
    named by it: its finds, runs and reports are logged under the token's name, never
    the name the client gives itself, and it reports only on its own finds and runs.
    Only a hash of each token is kept, in the workspace's .semif folder (out of every
    skill's reach); a token revoked is refused from its next request on, no restart
    needed. Once the workspace has client tokens, `semif mcp --http` makes no shared
    token ($SEMIF_MCP_TOKEN still sets one).
    """


def _store(workspace: str | None):  # -> TokenStore (imported with the command, not for a --help)
    from ..mcp_server.tokens import TokenStore

    ctx = click.get_current_context()
    while workspace is None and ctx.parent is not None:  # `semif mcp -w WS token ...` names it too
        ctx = ctx.parent
        workspace = ctx.params.get("workspace")
    return TokenStore(open_workspace(workspace).root)


@token.command("add")
@click.argument("name")
@click.option(
    "--rate",
    type=click.FloatRange(min=0, min_open=True),
    metavar="N",
    help="Calls a second this client may make (default: the workspace's).",
)
@workspace_option
@json_option
def add(name: str, rate: float | None, workspace: str | None, as_json: bool) -> None:
    """Make a token for the client NAME and print it, once: only its hash is kept."""
    secret, stored = _store(workspace).add(name, rate)
    if as_json:
        print_json({**stored.to_dict(), "token": secret, "header": f"Authorization: Bearer {secret}"})
        return
    click.echo(f"the token of {inert_line(name)} (shown this once; only its hash is kept):")
    click.echo(secret)
    click.echo(f"its client sends it to semif mcp --http as the header  Authorization: Bearer {secret}")


@token.command("list")
@workspace_option
@json_option
def list_(workspace: str | None, as_json: bool) -> None:
    """List the clients that have a token: name, when it was made, rate (never a token or its hash)."""
    tokens = _store(workspace).tokens()
    if as_json:
        print_json({"clients": [stored.to_dict() for stored in tokens]})
        return
    if not tokens:
        click.echo("no client token yet (semif mcp token add NAME makes one)")
        return
    width = max(len(stored.client.name) for stored in tokens)
    for stored in tokens:
        rate = "the workspace's rate" if stored.client.rate is None else f"{stored.client.rate:g} calls/s"
        click.echo(f"{inert_line(stored.client.name):<{width}}  made {stored.made}  {rate}")


@token.command("revoke")
@click.argument("name")
@workspace_option
@json_option
def revoke(name: str, workspace: str | None, as_json: bool) -> None:
    """Revoke the token of the client NAME: refused from its next request on."""
    _store(workspace).revoke(name)
    if as_json:
        print_json({"revoked": name})
        return
    click.echo(f"revoked the token of {inert_line(name)}: refused from its next request on")
