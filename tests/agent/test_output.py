"""Structured output: the final_result tool, prompted JSON, retries, output_missing, run/arun."""

from __future__ import annotations

import asyncio

import pytest
from pydantic import BaseModel, Field

from semif_agent.agent import Agent, AgentConfigError, OutputMissingError, ToolNameCollisionError, UsageLimits, tool
from semif_agent.llm import ScriptedProvider, ScriptedReply, ToolResultMessage, Usage

from ._support import calls, collect, of_type


class Verdict(BaseModel):
    """Whether the claim holds."""

    holds: bool
    confidence: float = Field(ge=0, le=1)


@tool
def check(claim: str) -> str:
    """Check a claim."""
    return "true"


def test_tool_mode_offers_final_result_forces_a_tool_and_run_returns_the_instance():
    provider = ScriptedProvider(
        [calls(("check", {"claim": "sky is blue"})), calls(("final_result", {"holds": True, "confidence": 0.9}))]
    )
    agent = Agent(llm=provider).with_tools([check]).with_output_model(Verdict)
    verdict = agent.run("Is the sky blue?")
    assert verdict == Verdict(holds=True, confidence=0.9) and agent.last_output == verdict
    first = provider.requests[0]
    assert first.tool_choice == "any" and [t.name for t in first.tools] == ["check", "final_result"]
    final_tool = first.tools[1]
    assert final_tool.input_schema["required"] == ["holds", "confidence"]
    assert "Whether the claim holds." in final_tool.description
    assert agent.last_turn.stopped_by == "stop"
    # the final_result call is answered in the conversation, so a later turn is well formed
    assert isinstance(agent.history[-1], ToolResultMessage) and agent.history[-1].content == "Final answer recorded."


def test_invalid_output_comes_back_as_an_error_result_and_is_retried():
    provider = ScriptedProvider(
        [
            calls(("final_result", {"holds": "maybe", "confidence": 2})),
            calls(("final_result", {"holds": False, "confidence": 0.5})),
        ]
    )
    agent = Agent(llm=provider).with_output_model(Verdict)
    assert agent.run("?") == Verdict(holds=False, confidence=0.5)
    [error] = [m for m in provider.requests[1].messages if isinstance(m, ToolResultMessage)]
    assert error.is_error and "holds: Input should be a valid boolean" in error.content
    assert "confidence: Input should be less than or equal to 1" in error.content


def test_output_that_never_validates_ends_with_output_missing_and_run_raises():
    provider = ScriptedProvider([calls(("final_result", {"holds": "no"})) for _ in range(3)])
    agent = Agent(llm=provider).with_output_model(Verdict, max_output_retries=1)
    events = collect(agent.stream("?"))
    final = events[-1]
    assert final.diagnostics.stopped_by == "output_missing" and final.output is None
    assert len(provider.requests) == 2  # one try and one retry
    provider.push(*[calls(("final_result", {})) for _ in range(2)])
    with pytest.raises(OutputMissingError, match="stopped_by='output_missing'") as caught:
        agent.run("?")
    assert caught.value.diagnostics.stopped_by == "output_missing"


def test_a_plain_text_answer_in_tool_mode_is_nudged_toward_final_result():
    provider = ScriptedProvider(["It holds.", calls(("final_result", {"holds": True, "confidence": 1}))])
    agent = Agent(llm=provider).with_output_model(Verdict)
    assert asyncio.run(agent.arun("?")).holds is True
    assert "calling the final_result tool" in provider.requests[1].messages[-1].content


def test_prompted_mode_puts_the_schema_in_the_prompt_and_validates_the_text():
    provider = ScriptedProvider(
        ['```json\n{"holds": true, "confidence": 3}\n```', 'Sure: {"holds": true, "confidence": 0.7}']
    )
    agent = Agent(llm=provider).with_system_prompt("Judge claims.").with_output_model(Verdict, mode="prompted")
    assert agent.run("?") == Verdict(holds=True, confidence=0.7)
    first = provider.requests[0]
    assert first.system.startswith("Judge claims.") and '"confidence"' in first.system and not first.tools
    assert "does not match the required JSON schema: confidence" in provider.requests[1].messages[-1].content
    events = collect(
        Agent(llm=ScriptedProvider(["no json here"]))
        .with_output_model(Verdict, mode="prompted", max_output_retries=0)
        .stream("?")
    )
    assert events[-1].diagnostics.stopped_by == "output_missing"


def test_the_wrap_up_round_forces_final_result_while_output_is_pending():
    big = Usage(input_tokens=500)
    provider = ScriptedProvider(
        [calls(("check", {"claim": "x"}), usage=big), calls(("final_result", {"holds": True, "confidence": 0.2}))]
    )
    agent = (
        Agent(llm=provider)
        .with_tools([check])
        .with_output_model(Verdict)
        .with_usage_limits(UsageLimits(total_tokens_limit=100))
    )
    events = collect(agent.stream("?"))
    assert provider.requests[1].tool_choice == "final_result"
    assert "calling the final_result tool now" in provider.requests[1].messages[-1].content
    final = events[-1]
    assert final.output == Verdict(holds=True, confidence=0.2) and final.diagnostics.stopped_by == "usage_limit"
    assert of_type(events, "tool_finished")[-1].name == "check"  # final_result is not a tool event


def test_run_needs_an_output_model_and_final_result_is_a_reserved_name_in_tool_mode():
    with pytest.raises(AgentConfigError, match="need with_output_model"):
        Agent(llm=ScriptedProvider()).run("?")

    @tool
    def final_result(x: int) -> str:
        """A tool that takes the reserved name."""
        return ""

    with pytest.raises(ToolNameCollisionError):
        Agent(llm=ScriptedProvider()).with_tools([final_result]).with_output_model(Verdict)
    with pytest.raises(ToolNameCollisionError):
        Agent(llm=ScriptedProvider()).with_output_model(Verdict).with_tools([final_result])
    Agent(llm=ScriptedProvider()).with_output_model(Verdict, mode="prompted").with_tools([final_result])
    with pytest.raises(AgentConfigError):
        Agent(llm=ScriptedProvider()).with_output_model(Verdict, mode="json")
    with pytest.raises(AgentConfigError):
        Agent(llm=ScriptedProvider()).with_output_model(dict)


def test_a_provider_error_makes_run_raise_it():
    from semif_agent.llm import ServerError

    agent = Agent(llm=ScriptedProvider([ServerError("down", status=500)])).with_output_model(Verdict)
    with pytest.raises(ServerError):
        agent.run("?")
    assert agent.last_turn.stopped_by == "error"


def test_two_final_results_in_one_answer_keep_the_first_valid_one():
    provider = ScriptedProvider(
        [
            ScriptedReply(
                tool_calls=[
                    {"id": "a", "name": "final_result", "arguments": {"holds": True, "confidence": 0.1}},
                    {"id": "b", "name": "final_result", "arguments": {"holds": False, "confidence": 0.9}},
                ]
            )
        ]
    )
    agent = Agent(llm=provider).with_output_model(Verdict)
    assert agent.run("?") == Verdict(holds=True, confidence=0.1)
    assert agent.history[-1].content == "A final answer was already recorded."
