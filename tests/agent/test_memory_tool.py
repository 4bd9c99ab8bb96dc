"""The /memories file tool: its commands, strict containment, and the agent wiring (tool + protocol)."""

from __future__ import annotations

import os

import pytest

from semif_agent.agent import Agent, FileMemoryBackend, MemoryToolError
from semif_agent.agent.toolkits.memory.files import MEMORY_PROTOCOL, OUTSIDE, memory_tool
from semif_agent.llm import ScriptedProvider

from ._support import calls, collect, of_type


@pytest.fixture
def backend(tmp_path):
    return FileMemoryBackend(tmp_path / "store")


def test_create_view_edit_insert_rename_delete(backend):
    assert (
        backend.create("/memories/notes.md", "line one\nline two\n")
        == "File created successfully at: /memories/notes.md"
    )
    assert (backend.root / "notes.md").read_text() == "line one\nline two\n"
    assert backend.view("/memories/notes.md") == (
        "Content of /memories/notes.md with line numbers:\n     1\tline one\n     2\tline two"
    )
    assert backend.view("/memories/notes.md", [2, -1]).endswith("     2\tline two")
    edited = backend.str_replace("/memories/notes.md", "line two", "line 2")
    assert "has been edited" in edited and "     2\tline 2" in edited
    backend.insert("/memories/notes.md", 0, "header")
    backend.insert("/memories/notes.md", 3, "footer")
    assert (backend.root / "notes.md").read_text() == "header\nline one\nline 2\nfooter\n"
    assert "overwritten" in backend.create("/memories/notes.md", "fresh\n")
    backend.create("/memories/projects/x/plan.md", "plan")
    listing = backend.view("/memories")
    assert "/memories/notes.md" in listing and "/memories/projects/" in listing and "/memories/projects/x/" in listing
    assert "plan.md" not in listing  # two levels deep
    renamed = backend.rename("/memories/notes.md", "/memories/archive/notes.md")
    assert renamed == "Renamed /memories/notes.md to /memories/archive/notes.md"
    assert (backend.root / "archive" / "notes.md").read_text() == "fresh\n"
    assert backend.delete("/memories/projects") == "Deleted /memories/projects"
    assert not (backend.root / "projects").exists()


@pytest.mark.parametrize(
    ("call", "message"),
    [
        (lambda b: b.view("/memories/missing.md"), "does not exist"),
        (lambda b: b.str_replace("/memories/a.md", "absent", "x"), "does not occur"),
        (lambda b: b.str_replace("/memories/a.md", "same", "x"), r"occurs 2 times in /memories/a.md \(lines 1, 2\)"),
        (lambda b: b.insert("/memories/a.md", 9, "x"), "outside 0..2"),
        (lambda b: b.delete("/memories"), "cannot be deleted"),
        (lambda b: b.rename("/memories/a.md", "/memories/a.md"), "already exists"),
        (lambda b: b.create("/memories", "x"), "is a directory"),
        (lambda b: b.execute({"command": "format"}), "unknown command"),
        (lambda b: b.execute({"command": "create", "path": "/memories/b.md"}), "needs file_text"),
    ],
)
def test_command_errors_are_clear(backend, call, message):
    backend.create("/memories/a.md", "same\nsame\n")
    with pytest.raises(MemoryToolError, match=message):
        call(backend)
    assert (backend.root / "a.md").read_text() == "same\nsame\n"


ESCAPES = [
    "/memories/../secret.txt",
    "/memories/notes/../../secret.txt",
    "/memories/..",
    "../secret.txt",
    "/etc/passwd",
    "memories/notes.md",
    "/memoriesX/notes.md",
    "/memories/%2e%2e/secret.txt",
    "/memories/%2E%2E%2Fsecret.txt",
    "/memories/notes%00.md",
    "/memories/notes\x00.md",
    "/memories/./notes.md",
    "/memories\\..\\secret.txt",
    "/memories/link-out/secret.txt",
    "/memories/link-in",
    "",
]


@pytest.mark.parametrize("path", ESCAPES)
def test_every_escape_gets_the_one_error(tmp_path, path):
    outside = tmp_path / "store" / "secret.txt"
    backend = FileMemoryBackend(tmp_path / "store")
    outside.write_text("keep out")
    (backend.root / "inside").mkdir()
    os.symlink(tmp_path / "store", backend.root / "link-out")
    os.symlink(backend.root / "inside", backend.root / "link-in")
    for attempt in (
        lambda: backend.view(path),
        lambda: backend.create(path, "pwned"),
        lambda: backend.str_replace(path, "keep", "pwned"),
        lambda: backend.insert(path, 0, "pwned"),
        lambda: backend.delete(path),
        lambda: backend.rename(path, "/memories/moved.txt"),
        lambda: backend.rename("/memories/inside", path),
    ):
        with pytest.raises(MemoryToolError) as caught:
            attempt()
        assert str(caught.value) == OUTSIDE
    assert outside.read_text() == "keep out"
    assert (backend.root / "inside").is_dir() and not (backend.root / "moved.txt").exists()


def test_the_tool_in_a_turn_and_the_protocol_in_the_prompt(tmp_path):
    provider = ScriptedProvider(
        [
            calls(("memory", {"command": "view", "path": "/memories"})),
            calls(("memory", {"command": "create", "path": "/memories/progress.md", "file_text": "step 1 done\n"})),
            calls(("memory", {"command": "view", "path": "/memories/../../etc/passwd"})),
            "Recorded.",
        ]
    )
    agent = Agent(llm=provider).with_system_prompt("You help.").with_memory_tool(tmp_path)
    finished = of_type(collect(agent.stream("Work on the task")), "tool_finished")
    assert finished[0].result.startswith("Files and directories up to 2 levels deep in /memories")
    assert finished[1].result == "File created successfully at: /memories/progress.md" and not finished[1].is_error
    assert finished[2].is_error and finished[2].result == f"Error: memory failed: MemoryToolError: {OUTSIDE}"
    assert (tmp_path / "memories" / "progress.md").read_text() == "step 1 done\n"
    request = provider.requests[0]
    assert request.system == f"You help.\n\n{MEMORY_PROTOCOL}"
    assert [t.name for t in request.tools] == ["memory"]
    assert request.tools[0].input_schema["properties"]["command"]["enum"] == [
        "view",
        "create",
        "str_replace",
        "insert",
        "delete",
        "rename",
    ]


def test_a_backend_can_be_shared_and_the_tool_is_not_read_only(tmp_path):
    backend = FileMemoryBackend(tmp_path)
    tool = memory_tool(backend)
    assert tool.name == "memory" and not tool.read_only
    agent = Agent(
        llm=ScriptedProvider([calls(("memory", {"command": "create", "path": "/memories/a", "file_text": "x"})), "ok"])
    )
    collect(agent.with_memory_tool(backend).stream("go"))
    assert backend.view("/memories/a").endswith("1\tx")
