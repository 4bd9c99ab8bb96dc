"""Traces: a SemIf run and an Agent turn as spans, recorded by the OpenTelemetry SDK when tracing is on."""

from __future__ import annotations

import os
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest

from semif_agent import telemetry
from semif_agent.agent import Agent, TracingAgentCallback, tool
from semif_agent.engine import ScriptedEngine
from semif_agent.errors import WorkspaceError
from semif_agent.llm import ScriptedProvider, ScriptedReply
from semif_agent.loop import SkillRunner
from semif_agent.telemetry import _setup
from semif_agent.workspace import Workspace

from ..agent._support import calls, collect
from ..agent.test_subagents import RESEARCHER, by_system
from .test_span_pipeline import turn_with_a_script_and_hooks

pytest.importorskip("opentelemetry.sdk", reason="the otel extra is not installed")
from opentelemetry.sdk.trace import ReadableSpan
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter

TEXT = "Email Alice that the quarterly report is ready"


@pytest.fixture
def spans() -> Iterator[InMemorySpanExporter]:
    exporter = InMemorySpanExporter()
    assert telemetry.configure(exporter=exporter)
    yield exporter
    telemetry.shutdown()


def children(of: ReadableSpan, among: tuple[ReadableSpan, ...]) -> list[ReadableSpan]:
    found = [s for s in among if s.parent is not None and s.parent.span_id == of.context.span_id]
    return sorted(found, key=lambda s: s.start_time or 0)


def one(name: str, among: tuple[ReadableSpan, ...]) -> ReadableSpan:
    named = [s for s in among if s.name == name]
    assert len(named) == 1, [s.name for s in among]
    return named[0]


def test_a_run_is_a_span_over_its_phases_and_each_decision_a_span_under_its_phase(make_workspace, spans) -> None:
    root = make_workspace()
    engine = ScriptedEngine(["email", "email.compose", "Alice", "success"])
    result = SkillRunner(Workspace.load(root), engine=engine).run(TEXT)
    assert result.assessment.label == "success"
    finished = spans.get_finished_spans()
    run = one("semif.run", finished)
    assert run.parent is None
    assert run.attributes["semif.run.id"] == result.run_id
    assert run.attributes["semif.skill"] == "email.compose"
    assert run.attributes["semif.outcome"] == "success"
    assert run.attributes["semif.request"] == TEXT
    phases = children(run, finished)
    assert [p.name for p in phases] == ["semif.route", "semif.predict", "semif.act", "semif.assess"]
    decisions = {p.name: [d.attributes for d in children(p, finished)] for p in phases}
    assert [d["semif.decision.choice"] for d in decisions["semif.route"]] == ["email", "email.compose"]
    assert [d["semif.decision.kind"] for d in decisions["semif.route"]] == ["route", "route"]
    assert "email" in decisions["semif.route"][0]["semif.decision.options"]
    (recipient,) = decisions["semif.predict"]
    assert recipient["semif.decision.question"] == "Which contact is the intended recipient?"
    assert recipient["semif.decision.choice"] == "Alice" and recipient["semif.decision.options"][-1] == "none"
    assert decisions["semif.act"] == []  # the seed body acts without asking anything
    assert [d["semif.decision.choice"] for d in decisions["semif.assess"]] == ["success"]
    assert all(d.name == "semif.decision" for p in phases for d in children(p, finished))
    assert all(s.context.trace_id == run.context.trace_id for s in finished)


def test_a_decision_span_carries_the_probability_of_the_choice(make_workspace, spans) -> None:
    root = make_workspace()
    engine = ScriptedEngine(
        [{"selected": "email", "probabilities": {"email": 0.8, "none": 0.2}}, "email.compose", "Alice", "success"]
    )
    SkillRunner(Workspace.load(root), engine=engine).run(TEXT)
    first = min((s for s in spans.get_finished_spans() if s.name == "semif.decision"), key=lambda s: s.start_time or 0)
    assert first.attributes["semif.decision.choice"] == "email"
    assert first.attributes["semif.decision.probability"] == pytest.approx(0.8)


@tool
def lookup(city: str) -> str:
    """Today's weather in a city."""
    return f"sunny in {city}"


def test_an_agent_turn_is_invoke_agent_over_chat_and_execute_tool_spans(spans) -> None:
    provider = ScriptedProvider(
        [
            calls(("lookup", {"city": "Lisbon"}, "call_1"), usage={"input_tokens": 30, "output_tokens": 7}),
            ScriptedReply(text="It is sunny.", usage={"input_tokens": 45, "output_tokens": 4}),
        ],
        model="tiny-model",
    )
    agent = Agent(llm=provider).with_tools([lookup]).with_callbacks([TracingAgentCallback(agent_name="helper")])
    events = collect(agent.stream("Is it sunny in Lisbon?"))
    assert events[-1].text == "It is sunny."
    finished = spans.get_finished_spans()
    turn = one("invoke_agent helper", finished)
    assert turn.attributes["gen_ai.operation.name"] == "invoke_agent"
    assert turn.attributes["gen_ai.agent.name"] == "helper"
    assert turn.attributes["gen_ai.usage.input_tokens"] == 75 and turn.attributes["gen_ai.usage.output_tokens"] == 11
    inside = children(turn, finished)
    assert [s.name for s in inside] == ["chat tiny-model", "execute_tool lookup", "chat tiny-model"]
    first_call, tool_call, second_call = inside
    assert first_call.attributes["gen_ai.operation.name"] == "chat"
    assert first_call.attributes["gen_ai.provider.name"] == "scripted"
    assert first_call.attributes["gen_ai.request.model"] == "tiny-model"
    assert first_call.attributes["gen_ai.usage.input_tokens"] == 30
    assert first_call.attributes["gen_ai.usage.output_tokens"] == 7
    assert second_call.attributes["gen_ai.usage.input_tokens"] == 45
    assert tool_call.attributes["gen_ai.operation.name"] == "execute_tool"
    assert tool_call.attributes["gen_ai.tool.name"] == "lookup"
    assert tool_call.attributes["gen_ai.tool.call.id"] == "call_1"
    assert "gen_ai.tool.call.arguments" not in tool_call.attributes  # contents are opt-in
    assert first_call.end_time <= tool_call.start_time <= tool_call.end_time <= second_call.start_time


def test_contents_are_on_the_spans_only_when_asked_for_and_a_failing_tool_marks_its_span(spans) -> None:
    @tool
    def broken() -> str:
        """Always fails."""
        raise KeyError("nope")

    provider = ScriptedProvider([calls(("lookup", {"city": "Porto"}), ("broken", {})), "done"])
    agent = (
        Agent(llm=provider).with_tools([lookup, broken]).with_callbacks([TracingAgentCallback(capture_content=True)])
    )
    collect(agent.stream("go"))
    finished = spans.get_finished_spans()
    good, bad = one("execute_tool lookup", finished), one("execute_tool broken", finished)
    assert good.attributes["gen_ai.tool.call.result"] == "sunny in Porto"
    assert '"city": "Porto"' in good.attributes["gen_ai.tool.call.arguments"]
    assert good.status.is_ok
    assert not bad.status.is_ok and bad.attributes["error.type"] == "tool_error"


def test_a_failed_model_call_ends_the_turn_span_as_an_error(spans) -> None:
    provider = ScriptedProvider([])  # no reply left: the call fails as a provider error
    agent = Agent(llm=provider).with_callbacks([TracingAgentCallback()])
    events = collect(agent.stream("hello"))
    assert events[-1].diagnostics.stopped_by == "error"
    finished = spans.get_finished_spans()
    turn = one("invoke_agent semif-agent", finished)
    (chat,) = children(turn, finished)
    assert not chat.status.is_ok and not turn.status.is_ok
    assert turn.attributes["semif.stopped_by"] == "error"


def test_the_callback_records_nothing_when_tracing_is_off() -> None:
    telemetry.shutdown()
    assert telemetry.tracer() is None
    agent = Agent(llm=ScriptedProvider(["hi"])).with_callbacks([TracingAgentCallback()])
    assert collect(agent.stream("hello"))[-1].text == "hi"


def test_where_traces_go_follows_the_settings_then_the_environment() -> None:
    endpoint = telemetry.telemetry_endpoint
    assert endpoint(None, {}) is None
    assert endpoint({"enabled": True}, {}) == "http://localhost:4318/v1/traces"
    assert endpoint({"otlp_endpoint": "http://collector:4318/"}, {}) == "http://collector:4318/v1/traces"
    assert endpoint(None, {"OTEL_EXPORTER_OTLP_ENDPOINT": "http://x:4318"}) == "http://x:4318/v1/traces"
    assert endpoint(None, {"OTEL_EXPORTER_OTLP_TRACES_ENDPOINT": "http://x:9/t"}) == "http://x:9/t"
    assert endpoint({"enabled": False}, {"OTEL_EXPORTER_OTLP_ENDPOINT": "http://x:4318"}) is None
    assert endpoint({"enabled": True}, {"OTEL_SDK_DISABLED": "true"}) is None


def test_a_telemetry_setting_of_the_wrong_type_is_one_clear_line(tmp_path: Path) -> None:
    (tmp_path / "semif.toml").write_text('[telemetry]\nenabled = "yes"\n')
    with pytest.raises(WorkspaceError, match=r'\[telemetry\] enabled must be true or false, not "yes"'):
        Workspace.load(tmp_path)


def test_a_subagents_turn_nests_under_the_tool_call_that_started_it(spans) -> None:
    provider = by_system(
        {
            "Orchestrator:": [calls(("task", {"agent_name": "researcher", "task": "Define entropy."}, "t1")), "Done."],
            "Researcher:": [calls(("lookup", {"term": "entropy"}, "l1")), "Disorder."],
        }
    )
    agent = (
        Agent(llm=provider)
        .with_system_prompt("Orchestrator: delegate.")
        .with_subagents([RESEARCHER])
        .with_callbacks([TracingAgentCallback()])
    )
    assert collect(agent.stream("What is entropy?"))[-1].text == "Done."
    finished = spans.get_finished_spans()
    top = one("invoke_agent semif-agent", finished)
    task = one("execute_tool task", finished)
    assert task.parent.span_id == top.context.span_id
    child = one("invoke_agent semif-agent subagent", finished)
    assert child.parent.span_id == task.context.span_id
    assert [s.name for s in children(child, finished)] == ["execute_tool lookup"]


def test_a_skill_script_and_its_hooks_are_spans_under_the_turn_that_ran_them(spans, tmp_path) -> None:
    events = turn_with_a_script_and_hooks(tmp_path, agent_name="noter-agent")
    assert events[-1].text == "noted it"
    finished = spans.get_finished_spans()
    turn = one("invoke_agent noter-agent", finished)
    inside = [s.name for s in children(turn, finished)]
    assert sorted(n for n in inside if n.startswith("skill.")) == ["skill.hook", "skill.hook", "skill.script"]
    script = one("skill.script", finished)
    assert script.attributes["skill.name"] == "noter" and script.attributes["script.path"] == "scripts/note.py"
    assert script.attributes["script.exit_code"] == 0 and script.status.is_ok
    ran = [s for s in finished if s.name in ("skill.hook", "skill.script")]
    assert {s.context.trace_id for s in ran} == {turn.context.trace_id}


@dataclass
class Unsettled:
    asked: list[str]  # the endpoints tracing was set up for
    exporter: InMemorySpanExporter  # where the spans went


@pytest.fixture
def unsettled(monkeypatch) -> Iterator[Unsettled]:
    """Tracing as a new process has it (nothing decided, no OTEL_ variables); once set up, its spans are kept in
    memory whatever endpoint it was set up for."""
    for name in [n for n in os.environ if n.startswith("OTEL_")]:
        monkeypatch.delenv(name)
    monkeypatch.setattr(_setup, "_tracing", _setup._Tracing())
    state = Unsettled([], InMemorySpanExporter())

    def configure(endpoint: str | None = None, *, service_name: str = _setup.SERVICE_NAME) -> bool:
        state.asked.append(endpoint or "")
        return telemetry.configure(exporter=state.exporter)

    monkeypatch.setattr(_setup, "configure", configure)
    try:
        yield state
    finally:
        telemetry.shutdown()


def test_the_environment_variable_alone_traces_an_agents_turns_with_no_callback(unsettled, monkeypatch) -> None:
    monkeypatch.setenv("OTEL_EXPORTER_OTLP_ENDPOINT", "http://127.0.0.1:9")
    agent = Agent(llm=ScriptedProvider(["hi"], model="tiny-model"))
    assert collect(agent.stream("hello"))[-1].text == "hi"
    assert unsettled.asked == ["http://127.0.0.1:9/v1/traces"]
    finished = unsettled.exporter.get_finished_spans()
    turn = one("invoke_agent semif-agent", finished)
    assert [s.name for s in children(turn, finished)] == ["chat tiny-model"]


def test_an_untraced_agent_turn_leaves_tracing_for_a_workspace_to_ask_for(unsettled) -> None:
    assert collect(Agent(llm=ScriptedProvider(["hi"])).stream("hello"))[-1].text == "hi"
    assert unsettled.asked == [] and telemetry.tracer() is None
    assert telemetry.configure_from({"otlp_endpoint": "http://127.0.0.1:9"}, {})
    assert unsettled.asked == ["http://127.0.0.1:9/v1/traces"]
