"""AgentTool and @tool: schemas from hints and docstrings, validation, calling conventions."""

from __future__ import annotations

import pytest
from pydantic import BaseModel, Field, ValidationError

from semif_agent.agent import AgentTool, ToolDefinitionError, tool
from semif_agent.agent._schema import parse_docstring
from semif_agent.agent.tools import result_text
from semif_agent.llm import ToolSpec


class Address(BaseModel):
    street: str
    city: str = Field(description="The city name.")


class Person(BaseModel):
    name: str
    home: Address
    past: list[Address] = []


def test_bare_decorator_builds_a_frozen_tool_with_schema_and_description():
    @tool
    def add(a: int, b: int = 2) -> str:
        """Add two numbers."""
        return str(a + b)

    assert isinstance(add, AgentTool)
    assert add.name == "add" and add.description == "Add two numbers."
    assert add.input_schema == {
        "type": "object",
        "properties": {"a": {"type": "integer"}, "b": {"type": "integer", "default": 2}},
        "required": ["a"],
        "additionalProperties": False,
    }
    with pytest.raises(ValidationError):
        add.name = "other"  # frozen
    assert add.to_tool_schema() == ToolSpec(name="add", description="Add two numbers.", input_schema=add.input_schema)


def test_parameterised_decorator_and_options():
    @tool(name="custom_add", description="Add two numbers together", read_only=True, timeout=3, max_result_tokens=50)
    def add_numbers(a: int, b: int) -> str:
        return str(a + b)

    assert (add_numbers.name, add_numbers.description) == ("custom_add", "Add two numbers together")
    assert add_numbers.read_only and add_numbers.timeout == 3 and add_numbers.max_result_tokens == 50
    assert add_numbers.fn(1, 2) == "3"


def test_google_numpy_and_sphinx_docstrings_describe_parameters():
    def google(query: str, limit: int = 5) -> str:
        """Search the notes.

        Longer text about searching.

        Args:
            query (str): What to look for,
                in plain words.
            limit: How many results.

        Returns:
            The matches.
        """

    def numpy(query: str, limit: int = 5) -> str:
        """Search the notes.

        Parameters
        ----------
        query : str
            What to look for.
        limit : int, optional
            How many results.

        Returns
        -------
        str
        """

    def sphinx(query: str, limit: int = 5) -> str:
        """Search the notes.

        :param query: What to look for.
        :param int limit: How many results.
        :returns: The matches.
        """

    assert parse_docstring(google.__doc__) == (
        "Search the notes.\n\nLonger text about searching.",
        {"query": "What to look for, in plain words.", "limit": "How many results."},
    )
    assert parse_docstring(numpy.__doc__) == (
        "Search the notes.",
        {"query": "What to look for.", "limit": "How many results."},
    )
    assert parse_docstring(sphinx.__doc__) == (
        "Search the notes.",
        {"query": "What to look for.", "limit": "How many results."},
    )
    schema = tool(google).input_schema
    assert schema["properties"]["query"]["description"] == "What to look for, in plain words."
    assert tool(numpy).description == "Search the notes."


def test_nested_models_keep_defs_and_arrive_as_instances():
    seen = {}

    @tool
    def register(person: Person, note: str | None = None) -> str:
        """Register a person."""
        seen["person"] = person
        return person.home.city

    schema = register.input_schema
    assert schema["properties"]["person"] == {"$ref": "#/$defs/Person"}
    assert set(schema["$defs"]) == {"Person", "Address"}
    assert schema["$defs"]["Address"]["properties"]["city"] == {"type": "string", "description": "The city name."}
    assert "title" not in str(schema)
    value, error = register.parse_input({"person": {"name": "Ann", "home": {"street": "1 Main", "city": "Porto"}}})
    assert error == ""
    assert register.call(value) == "Porto"
    assert isinstance(seen["person"].home, Address)


def test_validate_input_reports_what_is_wrong():
    @tool
    def add(a: int, b: int) -> str:
        """Add."""
        return str(a + b)

    assert add.validate_input({"a": 1, "b": 2}) == (True, "")
    ok, error = add.validate_input({"a": "x"})
    assert not ok
    assert "a: Input should be a valid integer" in error and "b: Field required" in error
    assert "errors.pydantic.dev" not in error
    assert add.validate_input({"a": 1, "b": 2, "c": 3}) == (False, "c: Extra inputs are not permitted")


def test_raw_schema_tools_get_the_basic_check():
    raw = AgentTool(
        name="lookup",
        description="Look up a word.",
        input_schema={
            "type": "object",
            "properties": {
                "word": {"type": "string"},
                "n": {"type": "integer"},
                "mode": {"type": "string", "enum": ["a", "b"]},
            },
            "required": ["word"],
        },
        fn=lambda word, n=1, mode="a": word * n,
    )
    assert raw.validate_input({"word": "x", "n": 2}) == (True, "")
    assert raw.validate_input({}) == (False, "word: field required")
    assert raw.validate_input({"word": "x", "n": True}) == (False, "n: expected integer, got bool")
    assert raw.validate_input({"word": "x", "mode": "c"}) == (False, "mode: must be one of 'a', 'b'")
    assert raw.call(raw.parse_input({"word": "ab", "n": 2})[0]) == "abab"


def test_an_input_model_is_the_schema_and_a_single_model_parameter_gets_the_instance():
    class Query(BaseModel):
        text: str
        limit: int = 3

    @tool(input_model=Query)
    def search(query: Query) -> str:
        """Search."""
        return f"{query.text}:{query.limit}"

    @tool(input_model=Query)
    def spread(text: str, limit: int) -> str:
        """Search with fields."""
        return f"{text}/{limit}"

    assert search.input_schema["properties"]["text"] == {"type": "string"}
    assert search.call(search.parse_input({"text": "hi"})[0]) == "hi:3"
    assert spread.call(spread.parse_input({"text": "hi", "limit": "4"})[0]) == "hi/4"


def test_async_functions_positional_only_parameters_and_unannotated_ones():
    @tool
    async def fetch(url, /, retries: int = 1) -> str:
        """Fetch a page."""
        return url

    assert fetch.is_async
    assert fetch.input_schema["properties"]["url"] == {}
    assert fetch._positional == ("url",)


def test_bad_names_and_options_are_definition_errors():
    with pytest.raises(ToolDefinitionError):
        tool(name="has space")(lambda: "x")
    with pytest.raises(ToolDefinitionError):
        tool(colour="red")
    with pytest.raises(ValidationError):
        AgentTool(name="bad name", description="", input_schema={}, fn=print)


def test_results_become_text():
    assert result_text("x") == "x"
    assert result_text(None) == ""
    assert result_text({"a": [1, 2]}) == '{"a": [1, 2]}'
    assert result_text(Address(street="s", city="c")) == '{"street":"s","city":"c"}'
    assert result_text(3.5) == "3.5"
