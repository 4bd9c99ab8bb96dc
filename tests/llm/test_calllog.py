"""Every model call can be logged as a row: request, answer or error, usage, latency."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from click.testing import CliRunner

from semif_agent.cli import main
from semif_agent.llm import ScriptedProvider
from semif_agent.llm.calllog import LoggedProvider, logged
from semif_agent.llm.errors import RateLimitError
from semif_agent.llm.testing import override_provider
from semif_agent.records import DecisionLog
from semif_agent.starter import create_workspace
from semif_agent.workspace import Workspace


def test_invoke_and_stream_are_logged_with_usage_and_latency(tmp_path: Path) -> None:
    log = DecisionLog(tmp_path / "calls.jsonl")
    provider = LoggedProvider(ScriptedProvider(["Hello!", "Streamed."]), log, context={"purpose": "test"})
    assert provider.invoke("Hi").text == "Hello!"
    assert "".join(getattr(c, "text", "") for c in provider.stream("Again")) == "Streamed."
    rows = list(log.read())
    assert [r["response"]["text"] for r in rows] == ["Hello!", "Streamed."]
    assert rows[0]["messages"] == [{"content": "Hi", "role": "user"}]
    assert all(r["kind"] == "model_call" and r["purpose"] == "test" and r["latency_ms"] >= 0 for r in rows)
    assert "input_tokens" in rows[0]["usage"]


def test_a_failed_call_is_logged_and_still_raised(tmp_path: Path) -> None:
    log = DecisionLog(tmp_path / "calls.jsonl")
    failing = ScriptedProvider([RateLimitError("slow down", provider="scripted", model="m")])
    with pytest.raises(RateLimitError):
        LoggedProvider(failing, log).invoke("Hi")
    (row,) = list(log.read())
    assert row["response"] is None and row["error"].startswith("RateLimitError")


def test_the_workspace_setting_turns_it_off(tmp_path: Path) -> None:
    root = create_workspace(tmp_path / "ws")
    inner = ScriptedProvider(["x"])
    assert isinstance(logged(inner, Workspace.load(root)), LoggedProvider)
    with (root / "semif.toml").open("a") as handle:
        handle.write("model_calls = false\n")  # appended to the [log] table, the file's last
    assert logged(inner, Workspace.load(root)) is inner


def test_generation_calls_land_in_the_workspace_log_and_semif_log_lists_them(tmp_path: Path) -> None:
    from tests.forge.test_generator import COUNT, fenced

    root = create_workspace(tmp_path / "ws")
    with override_provider(ScriptedProvider([fenced(COUNT)])):
        done = CliRunner().invoke(
            main,
            [
                "skills",
                "new",
                "todos.count",
                "--description",
                "Count the open tasks.",
                "--budget",
                "1",
                "--model",
                "openai/m",
                "-w",
                str(root),
            ],
        )
    assert done.exit_code == 0, done.output
    listed = CliRunner().invoke(main, ["log", "--calls", "-w", str(root), "--json"])
    (row,) = [json.loads(line) for line in listed.stdout.splitlines()]
    assert row["purpose"] == "generate" and "## Rules" in row["messages"][0]["content"]
    human = CliRunner().invoke(main, ["log", "--calls", "-w", str(root)])
    assert human.stdout.startswith("generate")
