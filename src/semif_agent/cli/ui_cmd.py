"""``semif ui``: serve a local web view of the workspace's runs, decisions, tree and quality."""

from __future__ import annotations

import click

from ..errors import UserError
from ._common import StageBars, workspace_option
from .workspace_cmds import open_workspace

INDEX_BAR_KIB = 16 * 1024
"""A log smaller than this (16 MiB) is indexed too fast to be worth a progress bar."""


@click.command("ui")
@workspace_option
@click.option(
    "--host", default="127.0.0.1", show_default=True, help="Address to listen on; anything but loopback needs --public."
)
@click.option(
    "--port",
    type=click.IntRange(0, 65535),
    default=8765,
    show_default=True,
    help="Port to listen on (0: any free port; the address is printed).",
)
@click.option(
    "--public",
    is_flag=True,
    help="Allow a --host other than loopback: whoever reaches it can read the log and write labels.",
)
@click.option(
    "--allow-host",
    "allow_hosts",
    multiple=True,
    metavar="NAME",
    help="A host name the pages may be asked for (repeatable; *.example.com for every subdomain); "
    "the bound address (and loopback names) always.",
)
@click.option("--open", "open_browser", is_flag=True, help="Open the page in the web browser.")
def ui(
    workspace: str | None, host: str, port: int, public: bool, allow_hosts: tuple[str, ...], open_browser: bool
) -> None:
    """Serve a local web view of the workspace's runs, decisions, tree and quality, where runs are labelled.

    \b
    Pages:
      /          the runs, newest first: search the requests, filter by skill, outcome, label, engine, date
      /runs/ID   one run: each decision with every option and its probability, what it did, the
                 files it changed, its assessment; label it (the skill it should have gone to, or none,
                 and its real outcome) in one click: the same rows `semif label` appends
      /tree      the categories and skills, searchable, with how often each was chosen and succeeded
      /quality   routing accuracy on labelled runs over time, calibration, confusions, outcomes per skill
      /train     train the router as `semif train` does, with progress and before/after accuracy
    Runs logged while the page is open appear without a reload. It listens on
    loopback only unless --host and --public say otherwise; label writes need the
    token each page carries, so another site open in the browser cannot write them.
    Pages are served only to requests naming the bound address (or a loopback
    name) as their Host, or a name given with --allow-host: another site that
    points its name at this address (DNS rebinding) gets a 400.
    Needs the ui extra: pip install 'semif-agent[ui]'.
    """
    try:
        import jinja2  # noqa: F401 - imported only to see that the ui extra is installed
        import starlette  # noqa: F401 - imported only to see that the ui extra is installed
        import uvicorn  # noqa: F401 - imported only to see that the ui extra is installed
    except ImportError as exc:
        raise UserError(f"semif ui needs the ui extra ({exc.name} is missing): pip install 'semif-agent[ui]'") from None
    from ..ui.server import is_loopback, serve

    ws = open_workspace(workspace)
    if public and not is_loopback(host):
        click.echo(
            f"warning: serving on {host}: anyone who can reach it can read the decision log and write labels", err=True
        )
    with StageBars(min_total=INDEX_BAR_KIB, only_on_terminal=True) as bars:

        def indexing(done: int, total: int) -> None:
            bars("indexing", done // 1024, total // 1024)
            if done >= total:
                bars.close()

        try:
            serve(
                ws,
                host=host,
                port=port,
                public=public,
                allow_hosts=allow_hosts,
                open_browser=open_browser,
                say=lambda line: click.echo(line),
                progress=indexing,
            )
        except KeyboardInterrupt:
            pass


COMMANDS = [ui]
