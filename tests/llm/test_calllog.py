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
from semif_agent.records import DecisionLog, ModelCallRow
from semif_agent.starter import create_workspace
from semif_agent.workspace import Workspace


def test_invoke_and_stream_are_logged_with_usage_and_latency(tmp_path: Path) -> None:
    log = DecisionLog(tmp_path / "calls.jsonl")
    provider = LoggedProvider(ScriptedProvider(["Hello!", "Streamed."]), log, context={"purpose": "test"})
    assert provider.invoke("Hi").text == "Hello!"
    assert "".join(getattr(c, "text", "") for c in provider.stream("Again")) == "Streamed."
    rows = [r for r in log.read() if isinstance(r, ModelCallRow)]
    assert [(r.response or {})["text"] for r in rows] == ["Hello!", "Streamed."]
    assert rows[0].messages == [{"content": "Hi", "role": "user"}]
    assert all(r.kind == "model_call" and r.context["purpose"] == "test" and r.latency_ms >= 0 for r in rows)
    assert "input_tokens" in (rows[0].usage or {})


def test_a_failed_call_is_logged_and_still_raised(tmp_path: Path) -> None:
    log = DecisionLog(tmp_path / "calls.jsonl")
    failing = ScriptedProvider([RateLimitError("slow down", provider="scripted", model="m")])
    with pytest.raises(RateLimitError):
        LoggedProvider(failing, log).invoke("Hi")
    (row,) = list(log.read())
    assert isinstance(row, ModelCallRow) and row.response is None and (row.error or "").startswith("RateLimitError")


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


def _stepping_agent(log: DecisionLog, rounds: int, step):
    from semif_agent.agent import Agent

    replies = [{"tool_calls": [{"id": f"c{k}", "name": "step", "arguments": {"n": k}}]} for k in range(rounds)]
    model = LoggedProvider(ScriptedProvider([*replies, "All done."]), log)
    return Agent(llm=model, max_rounds=rounds + 2).with_tools([step])


def test_a_turn_writes_its_rows_together_by_the_time_it_finishes(tmp_path: Path) -> None:
    from semif_agent.agent import tool

    log = DecisionLog(tmp_path / "calls.jsonl")
    seen: list[int] = []

    @tool
    def step(n: int) -> str:
        """Take step n."""
        seen.append(len(list(log.read())))  # what is on disk while the turn runs
        return "ok"

    events = list(_stepping_agent(log, 3, step).stream("Go."))
    assert seen == [0, 0, 0]  # held while the turn runs
    assert events[-1].type == "turn_finished" and len(list(log.read())) == 4


def test_no_row_is_lost_when_the_turn_crashes(tmp_path: Path) -> None:
    from semif_agent.agent import tool

    log = DecisionLog(tmp_path / "calls.jsonl")

    @tool
    async def step(n: int) -> str:
        """Take step n."""
        if n == 2:
            raise KeyboardInterrupt  # not a tool failure: it ends the turn
        return "ok"

    with pytest.raises(KeyboardInterrupt):
        list(_stepping_agent(log, 5, step).stream("Go."))
    rows = list(log.read())
    assert len(rows) == 3 and isinstance(rows[0], ModelCallRow) and isinstance(rows[1], ModelCallRow)
    assert rows[1].continues == rows[0].call_id


def test_held_rows_are_written_when_the_process_exits_mid_turn(tmp_path: Path) -> None:
    """A tool exits the process in the third round; a held block never closed is written at exit too."""
    import subprocess
    import sys

    script = """
import sys
from semif_agent.agent import Agent, tool
from semif_agent.llm import ScriptedProvider
from semif_agent.llm.calllog import LoggedProvider
from semif_agent.records import DecisionLog

log = DecisionLog(sys.argv[1])
other = LoggedProvider(ScriptedProvider(["Held."]), DecisionLog(sys.argv[2]))
block = other.batching()
block.__enter__()  # never left: its row waits for the exit
assert other.invoke("Hi").text == "Held." and not list(DecisionLog(sys.argv[2]).read())

@tool
def step(n: int) -> str:
    '''Take step n.'''
    if n == 2:
        sys.exit(3)
    return "ok"

replies = [{"tool_calls": [{"id": f"c{k}", "name": "step", "arguments": {"n": k}}]} for k in range(5)]
agent = Agent(llm=LoggedProvider(ScriptedProvider([*replies, "done"]), log), max_rounds=7).with_tools([step])
for event in agent.stream("Go."):
    pass
"""
    calls, held = tmp_path / "calls.jsonl", tmp_path / "held.jsonl"
    done = subprocess.run([sys.executable, "-c", script, str(calls), str(held)], capture_output=True, text=True)
    assert done.returncode == 3, done.stderr
    assert len(list(DecisionLog(calls).read())) == 3
    assert [(r.response or {})["text"] for r in DecisionLog(held).read() if isinstance(r, ModelCallRow)] == ["Held."]


def test_a_failed_call_inside_a_batch_is_written_at_once(tmp_path: Path) -> None:
    log = DecisionLog(tmp_path / "calls.jsonl")
    provider = LoggedProvider(ScriptedProvider(["Fine.", RateLimitError("slow down")]), log)
    with provider.batching():
        provider.invoke("Hi")
        assert list(log.read()) == []
        with pytest.raises(RateLimitError):
            provider.invoke("Again")
        assert [(r.error or "")[:14] for r in log.read() if isinstance(r, ModelCallRow)] == ["", "RateLimitError"]


def test_held_rows_are_written_after_a_while_even_when_no_other_call_comes(tmp_path: Path, monkeypatch) -> None:
    import time

    from semif_agent.agent import tool
    from semif_agent.llm import calllog

    monkeypatch.setattr(calllog, "BATCH_SECONDS", 0.05)
    log = DecisionLog(tmp_path / "calls.jsonl")

    @tool
    def step(n: int) -> str:
        """Runs long: until the first call's row is on disk."""
        deadline = time.monotonic() + 60  # generous: a busy machine may run the writer's timer late
        while time.monotonic() < deadline:
            if list(log.read()):
                return "written while the tool ran"
            time.sleep(0.01)
        return "still held"

    events = list(_stepping_agent(log, 1, step).stream("Go."))
    assert [e.result for e in events if e.type == "tool_finished"] == ["written while the tool ran"]
    assert len(list(log.read())) == 2
