"""``semif mcp``: serve the workspace's skills to any MCP client (Claude Code, Codex, Cursor, an Agent)."""

from __future__ import annotations

import os
import sys
from typing import TYPE_CHECKING

import click

from .._text import plural
from ..errors import UserError
from ._common import SemifGroup, json_option, print_json, workspace_option
from .workspace_cmds import open_workspace

if TYPE_CHECKING:
    from ..mcp_server import SkillServer


@click.group("mcp", cls=SemifGroup, invoke_without_command=True)
@workspace_option
@click.option("--http", "address", metavar="[HOST:]PORT", help="Serve streamable HTTP at /mcp instead of stdio.")
@click.option("--public", is_flag=True, help="Allow an --http HOST other than loopback.")
@click.option(
    "--allow-host",
    "allow_hosts",
    multiple=True,
    metavar="NAME",
    help="A host name clients may reach the --http server by (repeatable; *.example.com for every subdomain); "
    "the bound address (and loopback names) always.",
)
@click.option("--check", is_flag=True, help="Print what a client would see (tools, resources, listing size) and exit.")
@json_option
@click.pass_context
def mcp(
    ctx: click.Context,
    workspace: str | None,
    address: str | None,
    public: bool,
    allow_hosts: tuple[str, ...],
    check: bool,
    as_json: bool,
) -> None:
    """Serve the workspace's skills to any MCP client: find, load, run and report, over stdio or HTTP.

    \b
    Over stdio by default (a client starts it: `claude mcp add semif -- semif mcp -w WS`);
    with --http [HOST:]PORT over streamable HTTP at /mcp, loopback only unless --public,
    every request carrying a bearer token: a client's own (`semif mcp token add NAME`,
    which names the client in the log whatever it calls itself), or the shared one
    printed at start ($SEMIF_MCP_TOKEN sets it). Once the workspace has client tokens,
    no shared token is made unless $SEMIF_MCP_TOKEN gives one.
    As with semif ui, public or not, a request is answered only when its Host (and its
    Origin, when it has one) names the bound address, a loopback name (bound to loopback
    or every address), or a name given with --allow-host: a page that points its own
    name at the server (DNS rebinding) gets a 400.
    Each find_skills is logged as a decision; what the client loads or runs next is a label
    `semif train` learns from. SKILL.md skills are resources too (skill://NAME), and clients
    are told when skills change on disk. Needs the mcp extra: pip install 'semif-agent[mcp]'.
    Under load, a call past [mcp] queue, or over a client's [mcp] rate (or its token's
    --rate), is answered "busy: ... retry" and does nothing; semif.toml's [mcp] limits
    (working, runs, queue, rate, burst, sessions) are read at start.

    \b
      semif mcp token add ci --rate 2    a token for the client "ci", shown once
      semif mcp token list               the clients (never their tokens)
      semif mcp token revoke ci          refused from its next request on
    """
    if ctx.invoked_subcommand is not None:
        return
    try:
        import mcp as _sdk  # noqa: F401 - imported only to see that the mcp extra is installed
    except ImportError:
        raise UserError("semif mcp needs the mcp extra: pip install 'semif-agent[mcp]'") from None
    from .._sync import run_sync
    from ..chooser import Router
    from ..mcp_server import SkillServer
    from ..mcp_server.listing import client_view

    ws = open_workspace(workspace)
    server = SkillServer(Router(ws, source="mcp", client="mcp client"))
    if check:
        view = run_sync(client_view(server), "semif mcp --check")
        if as_json:
            print_json(view.to_dict())
            return
        for name, description in view.tools:
            click.echo(f"{name:<16} {' '.join(description.split())}")
        click.echo(f"{plural(len(view.tools), 'tool')}, {plural(view.resources, 'resource')} (SKILL.md skills)")
        click.echo(f"the tool listing a client holds: {view.listing_chars} characters, whatever the number of skills")
        return
    # the tree and act threshold are built as the server starts (tools wait for them): said on stderr, which a
    # stdio client keeps as the server's log
    server.say = lambda line: click.echo(f"semif mcp: {line}", err=True)
    if address is None:
        if public or allow_hosts:
            raise UserError(f"{'--public' if public else '--allow-host'} goes with --http: stdio is never public")
        try:
            server.run("stdio")
        finally:
            _leave_if_loading(server)
        return
    from ..mcp_server._http import parse_address, serve_http

    host, port = parse_address(address)
    try:
        serve_http(
            server,
            host=host,
            port=port,
            public=public,
            say=lambda line: click.echo(line),
            allow_hosts=allow_hosts,
        )
    except KeyboardInterrupt:
        pass
    finally:
        _leave_if_loading(server)


def _leave_if_loading(server: SkillServer) -> None:
    """A server stopped while its skills still load in a thread (a first start of thousands) exits at once: the
    model's threads, mid-run, would otherwise abort the process as it ends. Logged rows are already written."""
    if server.loading:
        sys.stdout.flush()
        sys.stderr.flush()
        os._exit(0)


COMMANDS = [mcp]
