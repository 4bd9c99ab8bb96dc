"""Tool answers as structured content (an object a client reads as it is), and argument mistakes as one line."""

from __future__ import annotations

import asyncio
import json

import pytest

from ._client import stdio

STRUCTURED = {"find_skills", "load_skill", "run_skill", "report_outcome"}


@pytest.mark.slow
def test_tools_answer_with_objects_not_json_strings_inside_result(corpus_workspace):
    root, env = corpus_workspace

    async def session():
        async with stdio(root, env) as client:
            calls = client.session.call_tool
            tools = {tool.name: tool for tool in (await client.session.list_tools()).tools}
            found = await calls("find_skills", {"request": "Email Grace that I accept the offer"})
            loaded = await calls("load_skill", {"name": "linear"})
            ran = await calls("run_skill", {"name": "email.compose", "request": "Email Grace that I accept the offer"})
            run_id = ran.structured_content["run_id"]
            reported = await calls("report_outcome", {"id": run_id, "outcome": "success"})
            read = await calls("read_skill_file", {"name": "linear", "path": "SKILL.md"})
            return tools, found, loaded, ran, reported, read

    tools, found, loaded, ran, reported, read = asyncio.run(session())
    for name in STRUCTURED:
        assert tools[name].output_schema is not None and tools[name].output_schema["type"] == "object", name
    assert tools["read_skill_file"].output_schema is None
    for result in (found, loaded, ran, reported):
        assert not result.is_error
        assert list(result.structured_content) != ["result"]  # the object itself, not {"result": "<its JSON>"}
        text = result.content[0].text
        assert json.loads(text) == result.structured_content and "\n" not in text  # the same object, as compact text
    assert found.structured_content["best"] == "email.compose"
    assert found.structured_content["skills"][0]["name"] == "email.compose"
    assert isinstance(found.structured_content["skills"][0]["probability"], float)
    assert loaded.structured_content["name"] == "linear"
    assert ran.structured_content["skill"] == "email.compose"
    assert reported.structured_content == {"labelled": ran.structured_content["run_id"]}
    assert read.structured_content is None and read.content[0].text.startswith("---")


def test_an_argument_mistake_is_one_line_naming_the_argument(corpus_workspace):
    root, env = corpus_workspace

    async def session():
        async with stdio(root, env) as client:
            answers = []
            for tool, arguments in (
                ("find_skills", {"request": "email", "k": "many"}),
                ("find_skills", {}),
                ("run_skill", {"name": "email.compose", "request": ["a", "list"]}),
            ):
                result = await client.session.call_tool(tool, arguments)
                answers.append((result.is_error, result.content[0].text))
            return answers

    answers = asyncio.run(session())
    assert all(is_error for is_error, _ in answers)
    texts = [text for _, text in answers]
    assert all("\n" not in text.strip() for text in texts), texts
    assert texts[0] == 'Error executing tool find_skills: k must be an integer, not "many"'
    assert texts[1] == "Error executing tool find_skills: request is missing"
    assert texts[2] == 'Error executing tool run_skill: request must be a string, not ["a", "list"]'
