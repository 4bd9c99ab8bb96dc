"""The Agent API of the seed reference, complete: every method it names, with the parameters it names."""

from __future__ import annotations

import inspect

import pytest

from semif_agent.agent import Agent

SEED_METHODS = {
    "with_system_prompt": ["prompt"],
    "with_memory": ["memory"],
    "with_tools": ["tools"],
    "with_skill": ["skill"],
    "with_skills": ["skills"],
    "with_skills_directory": ["path"],
    "with_skill_from_path": ["path"],
    "with_mcp_servers": ["servers"],
    "with_budget": ["budget"],
    "with_usage_limits": ["limits"],
    "with_scope": ["scope"],
    "with_hooks": ["pre_tool_use", "post_tool_use"],
    "with_approval": ["callback"],
    "with_output_model": ["output_model", "mode", "max_output_retries"],
    "with_callbacks": ["callbacks"],
    "with_context_management": ["config"],
    "with_compaction": ["trigger_tokens", "keep_last", "compact_fn"],
    "with_memory_tool": ["backend"],
    "with_subagents": ["definitions"],
    "as_tool": ["name", "description", "output_model", "max_output_retries"],
    "stream": ["message"],
    "astream": ["message"],
    "chat": ["message"],
    "achat": ["message"],
    "run": ["message"],
    "arun": ["message"],
    "aclose": [],
}
SEED_CONSTRUCTOR = [
    "model",
    "api_key",
    "llm",
    "fallbacks",
    "max_tokens",
    "max_response_tokens",
    "max_rounds",
    "tool_timeout",
    "tool_result_max_tokens",
]


@pytest.mark.parametrize("name", sorted(SEED_METHODS))
def test_every_seed_method_is_there_with_its_parameters(name):
    parameters = list(inspect.signature(getattr(Agent, name)).parameters)[1:]  # after self
    assert parameters[: len(SEED_METHODS[name])] == SEED_METHODS[name]


def test_the_constructor_takes_the_seed_parameters_and_the_agent_is_an_async_context_manager():
    parameters = inspect.signature(Agent.__init__).parameters
    assert list(parameters)[1:] == [*SEED_CONSTRUCTOR, "toolsets"]  # the seed's, then the toolsets
    assert inspect.iscoroutinefunction(Agent.__aenter__) and inspect.iscoroutinefunction(Agent.__aexit__)
    assert inspect.isasyncgenfunction(Agent.astream) and inspect.isasyncgenfunction(Agent.achat)
