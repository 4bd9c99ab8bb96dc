"""One span pipeline: runs, turns, decisions, skill scripts and hooks all reach every processor, nested as they ran."""

from __future__ import annotations

import asyncio
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from semif_agent import spans
from semif_agent.agent import Agent, TracingAgentCallback
from semif_agent.catalog import MemoryTraceWriter, read_spans
from semif_agent.engine import ScriptedEngine
from semif_agent.llm import ScriptedProvider
from semif_agent.loop import SkillRunner
from semif_agent.starter import create_workspace
from semif_agent.workspace import Workspace

from ..agent._support import calls, collect
from ..agent.test_skills_discovery import lexical_agent
from ..agent.test_subagents import RESEARCHER, by_system
from ..loop.test_skill_md_run import write_skill

pytestmark = pytest.mark.skipif(sys.platform == "win32", reason="the sandbox is POSIX")

NOTE = 'print("noted")\n'


def noting_skill(root: Path) -> Path:
    """A skill with a script the model may run and a hook around every round."""
    folder = root / "noter"
    (folder / "scripts").mkdir(parents=True)
    (folder / "SKILL.md").write_text(
        "---\nname: noter\ndescription: Takes notes.\nhooks:\n  pre_step: scripts/note.py\n---\nRun scripts/note.py.\n"
    )
    (folder / "scripts" / "note.py").write_text(NOTE)
    return folder


def turn_with_a_script_and_hooks(
    tmp_path: Path, *, agent_name: str = "noter-agent", callback: TracingAgentCallback | None = None
) -> list:
    """One Agent turn: a hook before each of its two rounds, and the model runs the skill's script once (traced by
    ``callback``, else by a :class:`TracingAgentCallback` named ``agent_name``)."""
    noting_skill(tmp_path / "skills")
    provider = ScriptedProvider(
        [calls(("run_skill_script", {"name": "noter", "script": "scripts/note.py"}, "call_s")), "noted it"]
    )
    agent = (
        Agent(llm=provider)
        .with_skills_directory(tmp_path / "skills", allow_scripts=True, workspace=tmp_path / "work")
        .with_callbacks([callback or TracingAgentCallback(agent_name=agent_name)])
    )
    agent.skills.activate("noter")
    return collect(agent.stream("take a note"))


@pytest.fixture
def memory() -> Iterator[MemoryTraceWriter]:
    """Every span of the process kept in memory, in place of the processors there were."""
    before = spans.span_processors()
    kept = MemoryTraceWriter()
    spans.set_span_processors([kept])
    yield kept
    spans.set_span_processors(before)


def named(records, name: str) -> list:
    return [r for r in records if r["name"] == name]


def test_a_processor_the_user_adds_gets_the_turn_with_its_scripts_and_hooks_nested_under_it(memory, tmp_path):
    events = turn_with_a_script_and_hooks(tmp_path)
    assert events[-1].text == "noted it"
    records = list(memory.records)
    (turn,) = named(records, "invoke_agent noter-agent")
    hooks, scripts = named(records, "skill.hook"), named(records, "skill.script")
    assert [h["attributes"]["hook.type"] for h in hooks] == ["pre_step", "pre_step"]  # one per round
    assert [s["attributes"]["script.stdout_excerpt"] for s in scripts] == ["noted\n"]
    for span in [*hooks, *scripts]:
        assert span["parent_span_id"] == turn["span_id"] and span["trace_id"] == turn["trace_id"]
        assert span["status"]["code"] == "OK"
    assert [r["name"] for r in records if r["parent_span_id"] == turn["span_id"] and r["name"].startswith("chat")] == [
        "chat scripted",
        "chat scripted",
    ]
    # the workspace's own trace file keeps what it always held, now with the turn as the parent
    on_disk = read_spans(tmp_path / "work" / ".semif" / "skill-trace.jsonl")
    assert [r["span_id"] for r in named(on_disk, "skill.script")] == [scripts[0]["span_id"]]
    assert set(on_disk[0]) == set(scripts[0])


def test_a_run_its_phases_and_decisions_reach_the_same_processors(memory, make_workspace) -> None:
    root = make_workspace()
    engine = ScriptedEngine(["email", "email.compose", "Alice", "success"])
    result = SkillRunner(Workspace.load(root), engine=engine).run("Email Alice that the report is ready")
    records = list(memory.records)
    (run,) = named(records, "semif.run")
    assert run["parent_span_id"] is None and run["attributes"]["semif.run.id"] == result.run_id
    phases = [r for r in records if r["parent_span_id"] == run["span_id"]]
    assert sorted(p["name"] for p in phases) == ["semif.act", "semif.assess", "semif.predict", "semif.route"]
    decisions = named(records, "semif.decision")
    assert sorted(d["attributes"]["semif.decision.choice"] for d in decisions) == sorted(
        ["email", "email.compose", "Alice", "success"]
    )
    assert {d["parent_span_id"] for d in decisions} <= {p["span_id"] for p in phases}


class Failing(spans.SpanProcessor):
    def __init__(self) -> None:
        self.shut = False

    def on_span_end(self, span: spans.Span) -> None:
        raise RuntimeError("this processor is broken")

    def shutdown(self) -> None:
        self.shut = True


def test_a_failing_processor_is_skipped_and_replacing_processors_shuts_the_old_ones_down(memory, tmp_path) -> None:
    broken = Failing()
    spans.add_span_processor(broken)
    spans.add_span_processor(broken)  # added once
    assert spans.span_processors() == (memory, broken)
    events = turn_with_a_script_and_hooks(tmp_path)
    assert events[-1].text == "noted it"
    assert named(memory.records, "skill.script")  # the processor after it still got every span
    spans.set_span_processors([memory])
    assert broken.shut and spans.span_processors() == (memory,)


def test_with_no_processor_nothing_is_built_and_the_trace_file_is_as_before(tmp_path) -> None:
    before = spans.span_processors()
    spans.set_span_processors([])
    try:
        assert not spans.source().enabled
        turn_with_a_script_and_hooks(tmp_path)
    finally:
        spans.set_span_processors(before)
    on_disk = read_spans(tmp_path / "work" / ".semif" / "skill-trace.jsonl")
    assert sorted(r["name"] for r in on_disk if r["name"] != "skill.activate") == [
        "skill.hook",
        "skill.hook",
        "skill.script",
    ]
    assert all(r["parent_span_id"] is None for r in on_disk)  # no turn span was opened to nest under


class Events(spans.SpanProcessor):
    """Every start and end, in the order the processors heard of them."""

    def __init__(self) -> None:
        self.heard: list[tuple[str, spans.Span]] = []

    def on_span_start(self, span: spans.Span) -> None:
        self.heard.append(("start", span))

    def on_span_end(self, span: spans.Span) -> None:
        self.heard.append(("end", span))

    def order(self, *names: str) -> list[str]:
        return [f"{what} {span.name}" for what, span in self.heard if span.name in names]

    def one(self, name: str) -> spans.Span:
        (span,) = {id(s): s for what, s in self.heard if s.name == name}.values()
        return span


@pytest.fixture
def events() -> Iterator[Events]:
    """A processor of the test's own, in place of the processors there were."""
    before = spans.span_processors()
    heard = Events()
    spans.set_span_processors([heard])
    yield heard
    spans.set_span_processors(before)


def test_the_script_of_a_skill_md_skill_nests_under_the_act_that_ran_it_and_is_heard_of_inside_it(
    events, tmp_path
) -> None:
    root = create_workspace(tmp_path / "ws")
    write_skill(root, "greeter", "Greet someone by name.", script="import sys\nprint('hello', sys.argv[1])\n")
    engine = ScriptedEngine(fn=lambda r: r.options[0].id)
    result = SkillRunner(Workspace.load(root), engine=engine, allow_scripts=True).run("Ada", skill="greeter")
    assert "hello Ada" in result.action.action_log
    run, act, script = events.one("semif.run"), events.one("semif.act"), events.one("skill.script")
    assert script.parent_span_id == act.span_id and act.parent_span_id == run.span_id
    assert script.trace_id == act.trace_id == run.trace_id
    assert script.attributes["script.stdout_excerpt"] == "hello Ada\n"
    # the act is open while its script runs: a processor hears of it first, and of its end last
    assert events.order("semif.run", "semif.act", "skill.script") == [
        "start semif.run",
        "start semif.act",
        "start skill.script",
        "end skill.script",
        "end semif.act",
        "end semif.run",
    ]
    assert act.start_time_unix_nano <= script.start_time_unix_nano <= script.end_time_unix_nano
    assert script.end_time_unix_nano <= (act.end_time_unix_nano or 0)


def test_a_phase_cut_short_ends_with_an_error_under_its_run(events, tmp_path) -> None:
    async def cancelled(run):
        raise asyncio.CancelledError

    root = create_workspace(tmp_path / "ws")
    write_skill(root, "greeter", "Greet someone by name.")
    runner = SkillRunner(
        Workspace.load(root), engine=ScriptedEngine(fn=lambda r: r.options[0].id), skill_md_executor=cancelled
    )
    with pytest.raises(asyncio.CancelledError):
        runner.run("Ada", skill="greeter")
    run, act = events.one("semif.run"), events.one("semif.act")
    assert act.parent_span_id == run.span_id
    assert (act.ok, run.ok) == (False, False) and act.message.startswith("CancelledError")
    assert events.order("semif.run", "semif.act") == [
        "start semif.run",
        "start semif.act",
        "end semif.act",
        "end semif.run",
    ]


def test_the_route_phase_is_open_while_the_request_is_routed(events, make_workspace) -> None:
    engine = ScriptedEngine(["email", "email.compose", "Alice", "success"])
    SkillRunner(Workspace.load(make_workspace()), engine=engine).run("Email Alice that the report is ready")
    route = events.one("semif.route")
    assert route.attributes["semif.skill"] == "email.compose"
    order = events.order("semif.route", "semif.decision")
    assert order[0] == "start semif.route" and order.index("end semif.route") > order.index("start semif.decision")


def test_the_skill_shortlist_an_agent_routed_to_is_a_span_under_its_turn(memory) -> None:
    provider = ScriptedProvider(["ok"])
    agent = lexical_agent(provider).with_callbacks([TracingAgentCallback()])
    collect(agent.stream("I need to sort out my mortgages"))
    (turn,) = named(memory.records, "invoke_agent semif-agent")
    (shortlist,) = named(memory.records, "semif.shortlist")
    assert shortlist["parent_span_id"] == turn["span_id"]
    assert shortlist["attributes"]["semif.skills"][0] == "mortgages-helper"


def untraced_turn(tmp_path: Path) -> list:
    """The turn of :func:`turn_with_a_script_and_hooks` on an Agent given no callback at all."""
    noting_skill(tmp_path / "skills")
    provider = ScriptedProvider(
        [calls(("run_skill_script", {"name": "noter", "script": "scripts/note.py"}, "call_s")), "noted it"]
    )
    agent = Agent(llm=provider).with_skills_directory(tmp_path / "skills", allow_scripts=True, workspace=tmp_path / "w")
    agent.skills.activate("noter")
    return collect(agent.stream("take a note"))


def test_a_processor_alone_gets_an_agents_turn_with_its_model_and_tool_calls_nested(events, tmp_path) -> None:
    assert untraced_turn(tmp_path)[-1].text == "noted it"
    turn = events.one("invoke_agent semif-agent")
    under_turn = [s for what, s in events.heard if what == "end" and s.parent_span_id == turn.span_id]
    assert [s.name for s in under_turn if s.name.startswith(("chat", "execute_tool"))] == [
        "chat scripted",
        "execute_tool run_skill_script",
        "chat scripted",
    ]
    tool = events.one("execute_tool run_skill_script")
    assert tool.attributes["gen_ai.tool.call.id"] == "call_s" and tool.ok
    assert turn.attributes["gen_ai.usage.input_tokens"] is not None and turn.ok
    assert events.one("skill.script").parent_span_id == turn.span_id
    assert events.order("invoke_agent semif-agent")[0] == "start invoke_agent semif-agent"  # before its children
    assert "gen_ai.tool.call.arguments" not in tool.attributes  # contents stay off unless asked for


def test_a_tracing_callback_and_a_processor_make_each_span_once_with_the_callbacks_options(events, tmp_path) -> None:
    callback = TracingAgentCallback(agent_name="scribe", capture_content=True)
    turn_with_a_script_and_hooks(tmp_path, callback=callback)
    turns = {id(s): s.name for _, s in events.heard if s.name.startswith("invoke_agent")}
    assert list(turns.values()) == ["invoke_agent scribe"]
    tools = {id(s): s for _, s in events.heard if s.name.startswith("execute_tool")}
    (tool,) = tools.values()
    assert tool.attributes["gen_ai.tool.call.arguments"] == {"name": "noter", "script": "scripts/note.py"}
    assert len({id(s) for _, s in events.heard if s.name.startswith("chat")}) == 2


def test_with_a_processor_alone_a_subagents_turn_is_traced_once_under_its_tool_call(events) -> None:
    provider = by_system(
        {
            "Orchestrator:": [calls(("task", {"agent_name": "researcher", "task": "Define entropy."}, "t1")), "Done."],
            "Researcher:": [calls(("lookup", {"term": "entropy"}, "l1")), "Disorder."],
        }
    )
    agent = Agent(llm=provider).with_system_prompt("Orchestrator: delegate.").with_subagents([RESEARCHER])
    assert collect(agent.stream("What is entropy?"))[-1].text == "Done."
    task, child = events.one("execute_tool task"), events.one("invoke_agent semif-agent subagent")
    assert task.parent_span_id == events.one("invoke_agent semif-agent").span_id
    assert child.parent_span_id == task.span_id
    assert events.one("execute_tool lookup").parent_span_id == child.span_id
