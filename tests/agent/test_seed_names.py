"""The seeds' names work as written: their import blocks and worked examples run with only the package name replaced
(on a scripted model where one is needed).

The excerpts are committed under ``tests/fixtures/seeds`` (one file each, verbatim; the README there says which seed
document each comes from), so these tests run in any checkout. Where the seed documents themselves are beside the
checkout, one more test reads each excerpt out of its document again and checks the committed copy is still its text."""

from __future__ import annotations

import contextlib
import io
import json
import re
import textwrap
from pathlib import Path
from typing import Any

import pytest

from semif_agent.engine import ScriptedEngine
from semif_agent.llm import ScriptedProvider, override_provider
from semif_agent.skills import ActionContext, ActionResult, Prediction, Request

from ._support import calls

EXCERPTS = Path(__file__).resolve().parents[1] / "fixtures" / "seeds"
SEEDS = Path(__file__).resolve().parents[3] / "shared" / "seeds"
AGENT_API = SEEDS / "001_43d5561be7f8098a.txt"
SKILL_CONTRACT = SEEDS / "000_43507218654df69c.txt"


def excerpt(name: str) -> str:
    """A seed's excerpt as committed in the fixtures, verbatim (package ``anchor`` as the seed writes it)."""
    return (EXCERPTS / name).read_text(encoding="utf-8")


def ours(code: str) -> str:
    """The seed's code with its package (``anchor``) read as ``semif_agent``: the one change made to it."""
    return re.sub(r"\banchor\b", "semif_agent", code)


def code_at(text: str, first_line: str) -> str:
    """The code that starts at the line ``first_line`` in a seed written as plain text: paragraph after paragraph,
    while the whole still compiles (the prose that follows does not)."""
    lines = text.splitlines()
    start = lines.index(first_line)
    paragraphs: list[list[str]] = [[]]
    for line in lines[start:]:
        if line.strip():
            paragraphs[-1].append(line)
        elif paragraphs[-1]:
            paragraphs.append([])
    code = ""
    for paragraph in paragraphs:
        candidate = "\n\n".join(part for part in (code, "\n".join(paragraph)) if part)
        try:
            compile(candidate, "<seed>", "exec")
        except SyntaxError:
            break
        code = candidate
    assert code, f"no code at {first_line!r}"
    return code


def test_the_agent_apis_import_block_runs_as_written() -> None:
    block = excerpt("agent_api_import_block.py")
    assert block.count("import") == 4 and "from anchor.llm import LLMProvider, create_provider" in block
    names: dict[str, Any] = {}
    exec(ours(block), names)
    imported = sorted(n for n in names if n != "__builtins__")
    assert len(imported) == 32  # 30 from the root, 2 from semif_agent.llm
    from semif_agent import agent

    for name in imported:
        if name not in ("LLMProvider", "create_provider"):
            assert names[name] is getattr(agent, name), name


def test_every_name_of_the_agent_api_imports_from_the_root_as_from_the_agent_package() -> None:
    """The README's promise: ``from semif_agent import X`` works for every X of ``semif_agent.agent``."""
    import semif_agent
    from semif_agent import agent

    missing = sorted(set(agent.__all__) - set(semif_agent.__all__))
    assert not missing, f"the root does not export {missing}"
    for name in agent.__all__:
        assert getattr(semif_agent, name) is getattr(agent, name), name


def test_the_agent_example_runs_as_written_on_a_scripted_model() -> None:
    example = excerpt("agent_api_agent_example.py")
    assert "Agent(model=" in example and "agent.chat(" in example
    provider = ScriptedProvider([calls(("greet", {"name": "Alice"})), "Alice has been greeted."])
    printed = io.StringIO()
    names: dict[str, Any] = {}
    with override_provider(provider), contextlib.redirect_stdout(printed):
        exec(ours(example), names)
    assert printed.getvalue() == "Alice has been greeted."
    [greeting] = [m for m in names["agent"].history if m.role == "tool"]
    assert greeting.content == "Hello, Alice!"


def test_the_tool_examples_run_as_written() -> None:
    example = excerpt("agent_api_tool_examples.py")
    assert "@tool(name=" in example
    names: dict[str, Any] = {}
    exec(ours(example), names)
    add, custom = names["add"], names["add_numbers"]
    assert add.name == "add" and add.fn(a=2, b=3) == "5"
    assert custom.name == "custom_add" and custom.description == "Add two numbers together"
    schema = custom.to_tool_schema()
    assert type(schema).__name__ == "ToolSpec" and schema.input_schema["required"] == ["a", "b"]
    from semif_agent.llm import ToolSchema

    assert isinstance(schema, ToolSchema)


def test_the_event_stream_example_runs_as_written() -> None:
    example = excerpt("agent_api_event_stream.py")
    from semif_agent import Agent, tool

    @tool
    def read_report() -> str:
        """Read the report."""
        return "Sales rose."

    provider = ScriptedProvider([calls(("read_report", {})), "Sales rose 4%."])
    agent = Agent(llm=provider).with_tools([read_report])
    printed = io.StringIO()
    with contextlib.redirect_stdout(printed):
        exec(ours(example), {"agent": agent})
    assert agent.last_turn is not None
    tokens = agent.last_turn.total_tokens
    assert printed.getvalue() == f"\n[read_report...]\nSales rose 4%.\n({tokens} tokens)\n"


def test_the_skill_contracts_worked_example_runs_as_written(tmp_path: Path) -> None:
    helpers = textwrap.dedent(
        """
        import json
        from pathlib import Path
        from semif_agent.skills import ActionResult, DecisionRequest, Option, Prediction

        def read_contacts(config):  # the skill's own helper, which the seed leaves out
            return json.loads(Path(config["contacts"]).read_text(encoding="utf-8"))
        """
    )
    names: dict[str, Any] = {}
    exec(helpers + ours(excerpt("skill_contract_worked_example.py")), names)
    contacts = tmp_path / "contacts.json"
    contacts.write_text(json.dumps([{"name": "ana", "description": "Ana, the accountant."}]))
    ctx = ActionContext(engine=ScriptedEngine(["ana"]), config={"contacts": str(contacts), "drafts": str(tmp_path)})
    request = Request("Tell Ana the invoice is paid", id="r1")
    prediction = names["predict"](ctx, request)
    assert isinstance(prediction, Prediction) and prediction.text == "recipient is ana"
    result = names["act"](ctx, request, prediction)
    assert isinstance(result, ActionResult) and result.new_state == "Draft written to r1.txt for ana."
    assert (tmp_path / "r1.txt").read_text() == "To: ana\nBody: Tell Ana the invoice is paid\n"


def worked_example(text: str) -> str:
    """The code block of the skill contract's worked example."""
    worked = text[text.index("## Worked example") :]
    body = re.search(r"```python\n(.*?)```", worked, re.S)
    assert body is not None
    return body.group(1)


SEED_EXCERPTS = {
    "agent_api_import_block.py": (AGENT_API, "from anchor import Agent, AgentTool, tool, Skill, SkillRegistry"),
    "agent_api_agent_example.py": (AGENT_API, "from anchor import Agent, tool"),
    "agent_api_tool_examples.py": (AGENT_API, "from anchor import tool"),
    "agent_api_event_stream.py": (AGENT_API, 'for event in agent.stream("Summarize the report"):'),
    "skill_contract_worked_example.py": (SKILL_CONTRACT, "## Worked example"),
}


def test_every_committed_excerpt_is_named_with_its_seed_and_in_the_readme() -> None:
    committed = sorted(p.name for p in EXCERPTS.glob("*.py"))
    assert committed == sorted(SEED_EXCERPTS)
    readme = (EXCERPTS / "README.md").read_text(encoding="utf-8")
    assert all(f"`{name}`" in readme for name in committed)


if SEEDS.is_dir():  # the seed documents are beside this checkout: the committed excerpts must still be their text

    @pytest.mark.parametrize("name", sorted(SEED_EXCERPTS))
    def test_the_committed_excerpt_is_still_the_seeds_text(name: str) -> None:
        document, first_line = SEED_EXCERPTS[name]
        text = document.read_text(encoding="utf-8")
        expected = worked_example(text) if first_line == "## Worked example" else code_at(text, first_line) + "\n"
        assert excerpt(name) == expected
