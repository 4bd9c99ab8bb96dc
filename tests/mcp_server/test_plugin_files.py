"""The Claude Code plugin's server entry starts `semif mcp` whether or not SEMIF_WORKSPACE is set."""

from __future__ import annotations

import json
import re
from pathlib import Path

from semif_agent.cli.workspace_cmds import find_cli_workspace

PLUGIN = Path(__file__).resolve().parents[2] / "clients" / "claude-plugin"


def test_an_unset_workspace_variable_reaches_the_server_empty_and_empty_means_unset(tmp_path, monkeypatch) -> None:
    server = json.loads((PLUGIN / ".mcp.json").read_text(encoding="utf-8"))["mcpServers"]["semif"]
    for value in server.get("env", {}).values():
        assert all(":-" in use for use in re.findall(r"\$\{[^}]*\}", value)), value  # a default, never left literal
    monkeypatch.setenv("SEMIF_WORKSPACE", "")
    monkeypatch.chdir(tmp_path)
    assert find_cli_workspace(None) is None  # as if unset: no workspace named "" is looked for
