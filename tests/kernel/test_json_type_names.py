"""The JSON type names (``semif_agent._json``) stay readable at run time: a dataclass whose fields use them still
has type hints that resolve, so pydantic and ``typing.get_type_hints`` read it as before."""

from __future__ import annotations

import dataclasses
import typing

import pytest
from pydantic import TypeAdapter

from semif_agent.chooser.results import LoadedSkill
from semif_agent.contract.report import CheckReport
from semif_agent.llm.messages import AssistantMessage, ToolCall, ToolSpec
from semif_agent.llm.responses import Response


@pytest.mark.parametrize("cls", [ToolCall, ToolSpec, AssistantMessage, Response, LoadedSkill, CheckReport])
def test_fields_typed_as_json_resolve_at_run_time(cls: type) -> None:
    hints = typing.get_type_hints(cls)
    assert {f.name for f in dataclasses.fields(cls)} <= set(hints)


def test_pydantic_reads_a_tool_call_with_nested_json_arguments() -> None:
    arguments = {"query": "weather", "where": [{"city": "Oslo", "days": 3}, None, True, 1.5]}
    call = TypeAdapter(ToolCall).validate_python({"id": "c1", "name": "look_up", "arguments": arguments})
    assert call.arguments == arguments
