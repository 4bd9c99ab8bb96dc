"""A turn cancelled while its work runs leaves no span open: what was under way ends, with status ERROR.

A caller that gives up on a long turn (a client timeout) cancels its task. A span left open would be missing from
the trace file and held by OpenTelemetry for the life of the process.
"""

from __future__ import annotations

import asyncio
import contextlib
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from semif_agent import spans
from semif_agent.agent import Agent, SubagentDefinition, TracingAgentCallback, tool
from semif_agent.catalog import MemoryTraceWriter
from semif_agent.llm import ScriptedProvider

from ..agent._support import calls
from ..agent.test_subagents import by_system


class Watching(MemoryTraceWriter):
    """Keeps ended spans and the started ones; says when a span of the name waited for starts."""

    def __init__(self) -> None:
        super().__init__()
        self.started: dict[str, str] = {}
        self.waited_for = ""
        self.seen: asyncio.Event | None = None
        self.loop: asyncio.AbstractEventLoop | None = None

    def on_span_start(self, span: spans.Span) -> None:
        self.started[span.span_id] = span.name
        if span.name == self.waited_for and self.seen is not None and self.loop is not None:
            self.loop.call_soon_threadsafe(self.seen.set)

    def ended(self) -> dict[str, spans.SpanRecord]:
        return {record["name"]: record for record in self.records}

    def left_open(self) -> list[str]:
        done = {record["span_id"] for record in self.records}
        return [name for span_id, name in self.started.items() if span_id not in done]


@pytest.fixture
def watching() -> Iterator[Watching]:
    before = spans.span_processors()
    kept = Watching()
    spans.set_span_processors([kept])
    try:
        yield kept
    finally:
        spans.set_span_processors(before)


def cancel_once_started(agent: Agent, watching: Watching, span_name: str) -> None:
    """Run a turn of ``agent`` and cancel it as soon as a span named ``span_name`` starts."""

    async def cancel() -> None:
        watching.waited_for, watching.seen, watching.loop = span_name, asyncio.Event(), asyncio.get_running_loop()

        async def drain() -> None:
            async for _ in agent.astream("go"):
                pass

        turn = asyncio.create_task(drain())
        seen = asyncio.create_task(watching.seen.wait())
        await asyncio.wait({turn, seen}, timeout=60, return_when=asyncio.FIRST_COMPLETED)
        seen.cancel()
        assert not turn.done(), "the turn ended before it was to be cancelled"
        turn.cancel()
        with contextlib.suppress(asyncio.CancelledError):
            await turn

    asyncio.run(cancel())


@pytest.mark.skipif(sys.platform == "win32", reason="the sandbox is POSIX")
@pytest.mark.parametrize("running", ["skill.script", "skill.hook"])
def test_a_turn_cancelled_while_a_script_or_hook_runs_ends_its_spans_as_errors(
    tmp_path: Path, watching: Watching, running: str
) -> None:
    folder = tmp_path / "skills" / "sleeper"
    (folder / "scripts").mkdir(parents=True)
    hooks = "hooks:\n  pre_step: scripts/s.py\n" if running == "skill.hook" else ""
    (folder / "SKILL.md").write_text(f"---\nname: sleeper\ndescription: Sleeps.\n{hooks}---\nRun scripts/s.py.\n")
    (folder / "scripts" / "s.py").write_text("import time\ntime.sleep(60)\n")
    provider = ScriptedProvider([calls(("run_skill_script", {"name": "sleeper", "script": "scripts/s.py"})), "done"])
    agent = (
        Agent(llm=provider)
        .with_skills_directory(tmp_path / "skills", allow_scripts=True, workspace=tmp_path / "work")
        .with_callbacks([TracingAgentCallback()])
    )
    agent.skills.activate("sleeper")
    cancel_once_started(agent, watching, running)
    assert watching.left_open() == []
    ended = watching.ended()
    assert ended[running]["status"] == {"code": "ERROR", "message": "CancelledError"}
    assert ended["invoke_agent semif-agent"]["status"]["code"] == "ERROR"
    if running == "skill.script":
        assert ended["execute_tool run_skill_script"]["status"]["code"] == "ERROR"


@tool
async def wait_for_ever(term: str) -> str:
    """Look a term up, slowly."""
    await asyncio.Event().wait()
    return term


def test_a_turn_cancelled_while_a_subagent_works_ends_the_subagents_spans_too(watching: Watching) -> None:
    researcher = SubagentDefinition(
        name="researcher", description="Looks terms up.", system_prompt="Researcher: be exact.", tools=(wait_for_ever,)
    )
    provider = by_system(
        {
            "Orchestrator:": [calls(("task", {"agent_name": "researcher", "task": "Dig."})), "ok"],
            "Researcher:": [calls(("wait_for_ever", {"term": "entropy"})), "found"],
        }
    )
    agent = (
        Agent(llm=provider)
        .with_system_prompt("Orchestrator: delegate.")
        .with_subagents([researcher])
        .with_callbacks([TracingAgentCallback()])
    )
    cancel_once_started(agent, watching, "execute_tool wait_for_ever")
    assert watching.left_open() == []
    ended = watching.ended()
    for name in ("execute_tool wait_for_ever", "invoke_agent semif-agent subagent", "execute_tool task"):
        assert ended[name]["status"]["code"] == "ERROR", name
        assert ended[name]["parent_span_id"] is not None
    assert ended["invoke_agent semif-agent subagent"]["parent_span_id"] == ended["execute_tool task"]["span_id"]
