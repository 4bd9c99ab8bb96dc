"""The allowed-tools gate: argument patterns, exact tool names, and several restricting skills together."""

from __future__ import annotations

import pytest

from semif_agent.agent import Agent, tool
from semif_agent.agent.allowed_tools import ToolPattern
from semif_agent.llm import ScriptedProvider

from ._skill_support import write_skill
from ._support import calls, collect, of_type

ran: list[str] = []


@tool(name="Bash")
def bash(command: str, cwd: str = ".") -> str:
    """Run a shell command (records it)."""
    ran.append(command)
    return "ok"


@tool(name="Read", read_only=True)
def read(path: str) -> str:
    """Read a file."""
    ran.append(f"Read {path}")
    return "contents"


@tool(name="read", read_only=True)
def other_read(path: str) -> str:
    """Read a file another way."""
    ran.append(f"read {path}")
    return "contents"


@tool(name="Grep", read_only=True)
def grep(pattern: str) -> str:
    """Search files."""
    ran.append(f"Grep {pattern}")
    return "found"


@tool
def copy(source: str, target: str) -> str:
    """Copy a file."""
    ran.append(f"copy {source} {target}")
    return "copied"


@tool
def delete_file(path: str) -> str:
    """Delete a file."""
    ran.append(f"delete {path}")
    return "deleted"


@pytest.fixture(autouse=True)
def _fresh() -> None:
    ran.clear()


def results_of(tmp_path, skills: dict[str, str], tools, *tool_calls) -> list:
    """Activate each skill (by its allowed-tools), then make the calls in one round; the calls' results."""
    for name, allowed in skills.items():
        write_skill(tmp_path, name, f"The {name} skill.", extra=f"allowed-tools: {allowed}")
    script = [calls(("activate_skill", {"name": name})) for name in skills]
    script += [calls(*tool_calls), "done"]
    agent = Agent(llm=ScriptedProvider(script)).with_tools(tools).with_skills_directory(tmp_path)
    finished = of_type(collect(agent.stream("go")), "tool_finished")[len(skills) :]
    return sorted(finished, key=lambda r: int(r.tool_call_id.rsplit("_", 1)[1]))  # read-only calls end in any order


def test_a_prefix_pattern_allows_only_the_commands_that_start_with_it(tmp_path):
    commands = [
        "git status --short",
        "git status",
        "rm -rf /srv/data",
        "git status; rm -rf ~",
        "git status && rm -rf ~",
        "git status | sh",
        "git status $(rm -rf ~)",
        "git status `rm -rf ~`",
        "git status > ~/.bashrc",
        "git status\nrm -rf ~",
    ]
    results = results_of(
        tmp_path,
        {"git-status": '"Bash(git status:*) Read"'},
        [bash, read],
        *[("Bash", {"command": c}) for c in commands],
        ("Read", {"path": "notes.txt"}),
    )
    assert ran == ["git status --short", "git status", "Read notes.txt"]
    denied = results[2]
    assert denied.is_error and not denied.ran
    assert denied.result == (
        "Denied: tool 'Bash' with command 'rm -rf /srv/data' is not allowed while skill 'git-status' is active "
        "(allowed-tools: Bash(git status:*) Read); call it only as a pattern in parentheses allows."
    )
    assert all(r.is_error and not r.ran for r in results[3:-1])


def test_an_exact_pattern_allows_that_argument_only(tmp_path):
    results_of(
        tmp_path,
        {"tests": '"Bash(npm test)"'},
        [bash],
        ("Bash", {"command": "npm test"}),
        ("Bash", {"command": "npm test --watch"}),
        ("Bash", {"command": "npm install evil"}),
    )
    assert ran == ["npm test"]


def test_other_tools_are_matched_on_their_one_required_text_argument(tmp_path):
    results = results_of(
        tmp_path,
        {"docs": '"Read(docs/:*) copy(docs/:*)"'},
        [read, copy],
        ("Read", {"path": "docs/guide.md"}),
        ("Read", {"path": "secrets.env"}),
        ("copy", {"source": "docs/guide.md", "target": "docs/b.md"}),
    )
    assert ran == ["Read docs/guide.md"]
    assert "tool 'Read' with path 'secrets.env' is not allowed" in results[1].result
    assert results[2].is_error and "no 'command' and not one required text argument" in results[2].result


def test_tool_names_are_compared_exactly(tmp_path):
    results = results_of(
        tmp_path, {"careful": "Read"}, [read, other_read], ("read", {"path": "a"}), ("Read", {"path": "b"})
    )
    assert ran == ["Read b"]
    assert results[0].result.startswith("Denied: tool 'read' is not allowed while skill 'careful' is active")


def test_a_call_must_be_allowed_by_every_restricting_skill(tmp_path):
    results = results_of(
        tmp_path,
        {"careful": "Read", "helper": '"*"'},
        [read, delete_file],
        ("delete_file", {"path": "x"}),
        ("Read", {"path": "y"}),
    )
    assert ran == ["Read y"]
    assert results[0].result == (
        "Denied: tool 'delete_file' is not allowed while skill 'careful' is active (allowed-tools: Read); "
        "use one of the allowed tools."
    )


def test_two_restrictions_leave_only_what_both_allow(tmp_path):
    results = results_of(
        tmp_path,
        {"reader": "Read Grep", "searcher": '"Grep Bash"'},
        [read, grep, bash],
        ("Read", {"path": "a"}),
        ("Bash", {"command": "ls"}),
        ("Grep", {"pattern": "todo"}),
    )
    assert ran == ["Grep todo"]
    assert results[0].result == (
        "Denied: tool 'Read' is not allowed while skill 'searcher' is active (allowed-tools: Grep Bash); "
        "use one of the allowed tools."
    )
    assert "skill 'reader' is active" in results[1].result


@pytest.mark.parametrize(
    ("text", "tool_name", "argument", "allowed"),
    [
        ("Bash", "Bash", "anything", True),
        ("Bash(*)", "Bash", "anything", True),
        ("Bash", "bash", "anything", False),
        ("mcp__*", "mcp__files_read", "x", True),
        ("Bash(git:*)", "Bash", "git log", True),
        ("Bash(git:*)", "Bash", "git log; rm x", False),
        ("Read(docs/:*)", "Read", "docs/../secrets.env", False),
        ("Read(docs/:*)", "Read", "docs/a/..", False),
        ("Bash(git log:*)", "Bash", "git log main..HEAD", True),
        ("Bash(git", "Bash", "git log", False),
        ("Bash()", "Bash", "", False),
        ("Bash(git:*)x", "Bash", "git log", False),
    ],
)
def test_patterns_read(text, tool_name, argument, allowed):
    pattern = ToolPattern.parse(text)
    assert (pattern.names(tool_name) and pattern.allows(argument)) is allowed
