"""Skills in the Agent: discovery, activation through the meta-tool, injection, tools, allowed-tools, files, scripts, state."""

from __future__ import annotations

import sys

import pytest

from semif_agent.agent import Agent, FunctionToolset, Skill, SkillNameCollisionError, ToolNameCollisionError, tool
from semif_agent.llm import ScriptedProvider

from ._skill_support import system_of, tool_names, write_skill
from ._support import calls, collect, of_type

ran: list[str] = []


@tool
def convert(path: str) -> str:
    """Convert a spreadsheet to CSV."""
    ran.append(f"convert {path}")
    return f"converted {path}"


@tool(name="Read", read_only=True)
def read(path: str) -> str:
    """Read a file."""
    ran.append(f"read {path}")
    return "contents"


@tool
def delete_file(path: str) -> str:
    """Delete a file."""
    ran.append(f"delete {path}")
    return "deleted"


@pytest.fixture(autouse=True)
def _fresh() -> None:
    ran.clear()


SHEETS = Skill(
    name="sheets",
    description="Read and convert spreadsheets.",
    instructions="Always keep the header row.",
    tools=(convert,),
    activation="on_demand",
)


def test_an_on_demand_skill_is_listed_then_activated_for_the_rest_of_the_session():
    provider = ScriptedProvider(
        [calls(("activate_skill", {"name": "sheets"})), calls(("convert", {"path": "a.xlsx"})), "Converted.", "Again."]
    )
    agent = Agent(llm=provider).with_system_prompt("You are helpful.").with_skill(SHEETS)
    events = collect(agent.stream("Convert a.xlsx"))
    first, second, third = provider.requests
    assert system_of(first).startswith("You are helpful.\n\n## Skills")
    assert "- sheets: Read and convert spreadsheets." in system_of(first)
    assert "Always keep the header row." not in system_of(first)
    assert tool_names(first) == ["activate_skill"]
    assert first.tools[0].input_schema["properties"]["name"]["enum"] == ["sheets"]
    activated = of_type(events, "tool_finished")[0]
    assert not activated.is_error and "now active" in activated.result and "convert" in activated.result
    for later in (second, third):
        assert '<skill_content name="sheets" id="python@sheets">\nAlways keep the header row.' in system_of(later)
        assert tool_names(later) == ["activate_skill", "convert"]
    assert ran == ["convert a.xlsx"] and agent.skills.is_active("sheets")
    collect(agent.stream("Once more"))  # the next turn: still active
    assert "Always keep the header row." in system_of(provider.requests[-1])
    agent.clear_history()  # a new session
    assert not agent.skills.is_active("sheets")


def test_always_on_skills_are_in_the_prompt_and_their_tools_available_from_the_start():
    base = Skill(
        name="house-style", description="House style.", instructions="Write in British English.", tools=(convert,)
    )
    provider = ScriptedProvider(["ok"])
    collect(Agent(llm=provider).with_skill(base).stream("hi"))
    request = provider.requests[0]
    assert "Write in British English." in system_of(request) and "## Skills" not in system_of(request)
    assert tool_names(request) == ["convert"]  # no on-demand skill: no activate_skill


def test_activation_errors_are_results_and_the_turn_goes_on():
    other = Skill(
        name="other-sheets",
        description="Other.",
        tools=(tool(name="convert")(lambda path: path),),
        activation="on_demand",
    )
    provider = ScriptedProvider(
        [
            calls(("activate_skill", {"name": "nope"}), ("activate_skill", {"name": "sheets"})),
            calls(("activate_skill", {"name": "other-sheets"})),
            "done",
        ]
    )
    agent = Agent(llm=provider).with_skills([SHEETS, other])
    events = collect(agent.stream("go"))
    unknown, good, clash = of_type(events, "tool_finished")
    assert unknown.is_error and "no skill named 'nope'" in unknown.result
    assert not good.is_error
    assert clash.is_error and "'convert' is provided by both active skills" in clash.result
    assert events[-1].diagnostics.stopped_by == "stop" and not agent.skills.is_active("other-sheets")


def test_tool_names_stay_one_namespace():
    with pytest.raises(ToolNameCollisionError, match="'convert' is already used by another tool"):
        Agent(llm=ScriptedProvider()).with_tools([convert]).with_skill(SHEETS)
    with pytest.raises(ToolNameCollisionError, match="a tool of skill 'sheets'"):
        Agent(llm=ScriptedProvider()).with_skill(SHEETS).with_tools([convert])
    with pytest.raises(ToolNameCollisionError, match="'activate_skill'"):
        Agent(llm=ScriptedProvider()).with_tools([tool(name="activate_skill")(lambda name: name)]).with_skill(SHEETS)
    with pytest.raises(SkillNameCollisionError):
        Agent(llm=ScriptedProvider()).with_skills([SHEETS, SHEETS])


def test_allowed_tools_are_enforced_while_the_skill_is_active(tmp_path):
    write_skill(tmp_path, "careful", "Inspect files without changing them.", extra="allowed-tools: Read")
    provider = ScriptedProvider(
        [
            calls(("delete_file", {"path": "x"})),  # before activation: allowed
            calls(("activate_skill", {"name": "careful"})),
            calls(("delete_file", {"path": "y"}), ("Read", {"path": "y"})),
            "done",
        ]
    )
    agent = Agent(llm=provider).with_tools([read, delete_file]).with_skills_directory(tmp_path)
    events = collect(agent.stream("tidy up"))
    results = of_type(events, "tool_finished")
    assert [r.name for r in results] == ["delete_file", "activate_skill", "delete_file", "Read"]
    denied = results[2]
    assert denied.is_error and not denied.ran
    assert denied.result == (
        "Denied: tool 'delete_file' is not allowed while skill 'careful' is active "
        "(allowed-tools: Read); use one of the allowed tools."
    )
    assert ran == ["delete x", "read y"]
    agent.skills.deactivate("careful")
    provider.push(calls(("delete_file", {"path": "z"})), "ok")
    collect(agent.stream("and z"))
    assert ran[-1] == "delete z"


def test_a_tool_that_takes_a_meta_tools_name_is_gated_like_any_other(tmp_path):
    # No subagents, no deferred tools: nothing real is called task or search_tools, so another holder of those
    # names (the agent's own tool, a toolset's, an MCP server's) must not slip past a skill's allowed-tools.
    write_skill(tmp_path, "careful", "Inspect files without changing them.", extra="allowed-tools: Read")

    @tool(name="task")
    def impostor_task(task: str) -> str:
        """Run a task."""
        ran.append(f"task {task}")
        return "ran"

    @tool(name="search_tools")
    def impostor_search(query: str) -> str:
        """Search."""
        ran.append(f"search {query}")
        return "ran"

    provider = ScriptedProvider(
        [
            calls(("activate_skill", {"name": "careful"})),
            calls(("task", {"task": "wipe"}), ("search_tools", {"query": "wipe"})),
            "done",
        ]
    )
    agent = (
        Agent(llm=provider)
        .with_tools([read, impostor_task])
        .add_toolset(FunctionToolset([impostor_search], name="third party"))
        .with_skills_directory(tmp_path)
    )
    ran.clear()
    task, search = of_type(collect(agent.stream("tidy up")), "tool_finished")[1:]
    assert ran == []
    assert task.is_error and task.result.startswith("Denied: tool 'task' is not allowed while skill 'careful'")
    assert search.is_error and search.result.startswith("Denied: tool 'search_tools' is not allowed")


def test_the_real_search_tools_stays_allowed_under_allowed_tools(tmp_path):
    write_skill(tmp_path, "careful", "Inspect files without changing them.", extra="allowed-tools: Read")

    @tool(defer_loading=True)
    def shred(path: str) -> str:
        """Shred a paper document into strips."""
        return "shredded"

    provider = ScriptedProvider(
        [calls(("activate_skill", {"name": "careful"})), calls(("search_tools", {"query": "shred paper"})), "done"]
    )
    agent = Agent(llm=provider).with_tools([read, shred]).with_skills_directory(tmp_path)
    found = of_type(collect(agent.stream("go")), "tool_finished")[1]
    assert not found.is_error and "shred" in found.result


def test_skill_files_are_read_through_the_runtime_and_confined(tmp_path):
    write_skill(tmp_path, "guide", "A guide.", files={"references/howto.md": "Step one.", "../outside.txt": "secret"})
    provider = ScriptedProvider(
        [
            calls(
                ("read_skill_file", {"name": "guide", "path": "references/howto.md"}),
                ("read_skill_file", {"name": "guide", "path": "../outside.txt"}),
                ("read_skill_file", {"name": "plain", "path": "x"}),
            ),
            "done",
        ]
    )
    plain = Skill(name="plain", description="No folder.", activation="on_demand")
    agent = Agent(llm=provider).with_skills_directory(tmp_path).with_skill(plain)
    howto, escape, nofolder = of_type(collect(agent.stream("read")), "tool_finished")
    assert howto.result == "Step one." and not howto.is_error
    assert escape.is_error and "no readable file '../outside.txt'" in escape.result and "secret" not in escape.result
    assert nofolder.is_error and "has no folder" in nofolder.result


def test_activation_lists_the_skill_files(tmp_path):
    write_skill(tmp_path, "guide", "A guide.", files={"references/howto.md": "Step one."})
    provider = ScriptedProvider([calls(("activate_skill", {"name": "guide"})), "ok"])
    events = collect(Agent(llm=provider).with_skills_directory(tmp_path).stream("go"))
    assert (
        "Its files (read them with read_skill_file): references/howto.md." in of_type(events, "tool_finished")[0].result
    )
    assert "<file>references/howto.md</file>" in system_of(provider.requests[1])


def test_scripts_are_off_unless_allowed_then_run_sandboxed_for_active_skills(tmp_path):
    skills = tmp_path / "skills"
    write_skill(
        skills,
        "greeter",
        "Greets people.",
        extra="script: scripts/hello.py",
        files={"scripts/hello.py": "import sys\nprint('hello', *sys.argv[1:])\n"},
    )
    provider = ScriptedProvider(["no scripts"])
    collect(Agent(llm=provider).with_skills_directory(skills).stream("hi"))
    assert "run_skill_script" not in tool_names(provider.requests[0])

    provider = ScriptedProvider(
        [
            calls(("run_skill_script", {"name": "greeter", "args": ["Ana"]})),
            calls(("activate_skill", {"name": "greeter"})),
            calls(("run_skill_script", {"name": "greeter", "args": ["Ana"]})),
            "done",
        ]
    )
    agent = Agent(llm=provider).with_skills_directory(skills, allow_scripts=True, workspace=tmp_path / "work")
    early, _, run = of_type(collect(agent.stream("greet Ana")), "tool_finished")
    assert "run_skill_script" in tool_names(provider.requests[0])
    assert early.is_error and "not active" in early.result
    assert not run.is_error and '"exit_code": 0' in run.result and "hello Ana" in run.result


@pytest.mark.skipif(sys.platform == "win32", reason="the sandbox is POSIX")
def test_a_failing_script_is_an_error_result(tmp_path):
    write_skill(
        tmp_path,
        "broken",
        "Breaks.",
        files={"scripts/fail.py": "import sys\nsys.stderr.write('it broke')\nsys.exit(3)\n"},
    )
    provider = ScriptedProvider(
        [
            calls(("activate_skill", {"name": "broken"})),
            calls(("run_skill_script", {"name": "broken", "script": "scripts/fail.py"})),
            "done",
        ]
    )
    agent = Agent(llm=provider).with_skills_directory(tmp_path, allow_scripts=True, workspace=tmp_path / "work")
    result = of_type(collect(agent.stream("go")), "tool_finished")[-1]
    assert result.is_error and "it broke" in result.result and '"exit_code": 3' in result.result


def test_activation_survives_save_and_restore():
    def build(provider) -> Agent:
        mail = Skill(name="mail", description="Send mail.", activation="on_demand", instructions="Sign as Ana.")
        return Agent(llm=provider).with_skills([SHEETS, mail])

    first = build(ScriptedProvider([calls(("activate_skill", {"name": "sheets"})), "ok"]))
    collect(first.stream("go"))
    state = first.save_state()
    assert state["skills"]["runtime"]["activated"] == ["python@sheets"]
    provider = ScriptedProvider(["ok"])
    second = build(provider)
    second.restore_state(state)
    collect(second.stream("continue"))
    request = provider.requests[0]
    assert "Always keep the header row." in system_of(request) and "Sign as Ana." not in system_of(request)
    assert "convert" in tool_names(request)


def test_skills_registered_on_the_registry_itself_show_from_the_next_round():
    provider = ScriptedProvider(["first", "second"])
    agent = Agent(llm=provider)
    collect(agent.stream("hi"))
    agent.skills.register(SHEETS)
    collect(agent.stream("again"))
    assert tool_names(provider.requests[0]) == [] and "- sheets:" in system_of(provider.requests[1])
