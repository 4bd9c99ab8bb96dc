"""``semif models``: the models configured here, and whether their endpoints answer."""

from __future__ import annotations

import click

from ._common import json_option, print_json, workspace_option


@click.command("models")
@workspace_option
@json_option(shape="one JSON array (an object per model)")
@click.option("--no-check", is_flag=True, help="Only list; do not contact the endpoints.")
@click.option("--timeout", type=float, default=3.0, show_default=True, help="Seconds to wait for each endpoint.")
def models(workspace: str | None, as_json: bool, no_check: bool, timeout: float) -> None:
    """List the models configured (semif.toml and environment) and whether each endpoint is reachable."""
    from ..llm.status import check_endpoints, configured_models
    from .workspace_cmds import find_cli_workspace

    found = find_cli_workspace(workspace)
    settings = found.engine_settings if found is not None else {}  # no workspace: what the environment configures
    entries = configured_models(settings)
    if not no_check:
        entries = check_endpoints(entries, timeout=timeout)
    if as_json:
        print_json([e.to_dict() for e in entries])
        return
    if not entries:
        click.echo(
            'no models configured: set model = "provider/model" under [engine] in semif.toml, '
            "or OPENAI_API_KEY / ANTHROPIC_API_KEY in the environment"
        )
        return
    rows = [("ROLE", "MODEL", "ENDPOINT", "KEY", "REACHABLE")]
    for e in entries:
        if e.problem:
            reach = f"problem: {e.problem}"
        elif e.reachable is None:
            reach = e.status
        else:
            reach = f"{'yes' if e.reachable else 'no'} ({e.status})"
        rows.append((e.role, e.model, e.base_url or "-", e.key or "-", reach))
    widths = [max(len(r[i]) for r in rows) for i in range(4)]
    for cells in rows:
        click.echo("  ".join(cell.ljust(w) for cell, w in zip(cells, widths)) + "  " + cells[4])


COMMANDS = [models]
