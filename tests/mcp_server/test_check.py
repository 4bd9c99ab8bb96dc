"""`semif mcp --check`: what a client would see; and without the mcp extra, one line saying what to install."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from .conftest import starter_workspace

NO_SDK = Path(__file__).resolve().parents[1] / "fixtures" / "without-mcp"  # an `mcp` that cannot be imported


def semif(env: dict[str, str], *args: str) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, "-m", "semif_agent", *args], env=env, capture_output=True, text=True, timeout=120
    )


@pytest.mark.slow
def test_check_prints_the_tools_the_resources_and_the_listing_size(corpus_workspace):
    root, env = corpus_workspace
    done = semif(env, "mcp", "-w", str(root), "--check", "--json")
    assert done.returncode == 0, done.stderr
    seen = json.loads(done.stdout)
    assert [t["name"] for t in seen["tools"]] == [
        "find_skills",
        "load_skill",
        "read_skill_file",
        "run_skill",
        "report_outcome",
    ]
    assert seen["resources"] == 24 and 1000 < seen["listing_chars"] < 8000
    text = semif(env, "mcp", "-w", str(root), "--check").stdout
    assert "5 tools, 24 resources" in text and f"{seen['listing_chars']} characters" in text


def test_without_the_mcp_extra_one_line_says_what_to_install(corpus_workspace):
    root, env = corpus_workspace
    done = semif({**env, "PYTHONPATH": str(NO_SDK)}, "mcp", "-w", str(root))
    assert done.returncode != 0 and "Traceback" not in done.stderr
    assert done.stderr.strip() == "Error: semif mcp needs the mcp extra: pip install 'semif-agent[mcp]'"


def test_client_tokens_are_managed_without_the_mcp_extra(tmp_path):
    root, env = starter_workspace(tmp_path)
    env = {**env, "PYTHONPATH": os.pathsep.join(filter(None, [str(NO_SDK), env.get("PYTHONPATH")]))}
    added = semif(env, "mcp", "token", "add", "ci", "-w", str(root), "--json")
    assert added.returncode == 0, added.stderr
    listed = semif(env, "mcp", "token", "list", "-w", str(root), "--json")
    assert json.loads(listed.stdout)["clients"][0]["name"] == "ci"
    assert semif(env, "mcp", "-w", str(root)).returncode != 0  # serving still needs it
