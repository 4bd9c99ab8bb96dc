"""MCP: a real local MCP server (tests/agent/mcp_server.py) over stdio and streamable HTTP, through Agent turns."""

from __future__ import annotations

import asyncio
import os
import shlex
import signal
import socket
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest
from pydantic import ValidationError

from ._support import calls, of_type

pytest.importorskip("mcp")

from semif_agent.agent import (
    Agent,
    AgentConfigError,
    MCPError,
    MCPServerConfig,
    ToolNameCollisionError,
    tool,
)
from semif_agent.llm import ScriptedProvider

SERVER = str(Path(__file__).with_name("mcp_server.py"))


def stdio(name: str = "local", **options) -> MCPServerConfig:
    return MCPServerConfig(name=name, command=sys.executable, args=(SERVER,), **options)


@pytest.fixture(scope="module")
def http_url():
    """The test server over streamable HTTP on a free loopback port, for the whole module."""
    process = subprocess.Popen([sys.executable, SERVER, "--http"], stdout=subprocess.PIPE, text=True)
    lines: list[str] = []
    reader = threading.Thread(target=lambda: lines.append(process.stdout.readline()), daemon=True)
    reader.start()
    reader.join(30)
    try:
        assert lines and lines[0].startswith("PORT "), f"the MCP test server did not start: {lines}"
        port = int(lines[0].split()[1])
        _wait_for_port(port)
        yield f"http://127.0.0.1:{port}/mcp"
    finally:
        process.terminate()
        try:
            process.wait(10)
        except subprocess.TimeoutExpired:  # pragma: no cover
            process.kill()


def _wait_for_port(port: int) -> None:
    deadline = time.monotonic() + 20
    while time.monotonic() < deadline:
        with socket.socket() as sock:
            if sock.connect_ex(("127.0.0.1", port)) == 0:
                return
        time.sleep(0.05)
    raise AssertionError("the MCP test server never listened")


async def drain(agent: Agent, message: str) -> list:
    return [event async for event in agent.astream(message)]


def turn_script() -> ScriptedProvider:
    return ScriptedProvider(
        [
            calls(("add", {"a": 2, "b": 40}), ("lookup", {"country": "Portugal"}), ("remember", {"note": "buy milk"})),
            "2 + 40 = 42, the capital is Lisbon, and the note is saved.",
        ]
    )


def check_round_trip(events: list, provider: ScriptedProvider) -> None:
    finished = {e.name: e for e in of_type(events, "tool_finished")}
    assert (finished["add"].result, finished["lookup"].result, finished["remember"].result) == (
        "42",
        "Lisbon",
        "noted: buy milk",
    )
    assert not any(e.is_error for e in finished.values())
    assert events[-1].text == "2 + 40 = 42, the capital is Lisbon, and the note is saved."
    assert {t.name for t in provider.requests[0].tools} == {"add", "lookup", "remember", "fail"}
    results = [m for m in provider.requests[1].messages if m.role == "tool"]
    assert [r.content for r in results] == ["42", "Lisbon", "noted: buy milk"]


def test_a_turn_calls_tools_on_a_stdio_server(tmp_path):
    log = tmp_path / "notes.txt"
    provider = turn_script()

    async def main():
        async with Agent(llm=provider).with_mcp_servers([stdio(env={"MCP_TEST_LOG": str(log)})]) as agent:
            assert agent.tools == ()  # lazy: nothing happens before the first turn
            events = await drain(agent, "Add 2 and 40, find Portugal's capital, note 'buy milk'.")
            tools = {t.name: t for t in agent.tools}
        return events, tools, agent

    events, tools, agent = asyncio.run(main())
    check_round_trip(events, provider)
    assert log.read_text() == "buy milk\n"
    assert {n: t.read_only for n, t in tools.items()} == {"add": True, "lookup": True, "remember": False, "fail": False}
    assert tools["add"].description == "Add two integers. (MCP server local)"
    assert tools["add"].input_schema["required"] == ["a", "b"]
    assert agent.tools == ()  # closed with the context: the tools left with the connection


def test_a_turn_calls_tools_on_an_http_server(http_url):
    provider = turn_script()

    async def main():
        agent = Agent(llm=provider).with_mcp_servers([http_url])
        try:
            return await drain(agent, "Add 2 and 40, find Portugal's capital, note 'buy milk'.")
        finally:
            await agent.aclose()

    check_round_trip(asyncio.run(main()), provider)


def test_tool_errors_come_back_as_error_results(http_url):
    provider = ScriptedProvider([calls(("fail", {"reason": "the disk is full"}), ("add", {"a": "x"})), "Sorry."])

    async def main():
        async with Agent(llm=provider).with_mcp_servers([MCPServerConfig(name="web", url=http_url)]) as agent:
            return await drain(agent, "try")

    finished = sorted(of_type(asyncio.run(main()), "tool_finished"), key=lambda e: e.name)
    assert finished[0].name == "add" and finished[0].is_error and "invalid input for add" in finished[0].result
    assert finished[1].is_error and "the disk is full" in finished[1].result


def test_an_mcp_tool_colliding_with_a_local_tool_is_an_error(http_url):
    @tool
    def add(a: int, b: int) -> str:
        """A local add."""
        return str(a + b)

    provider = ScriptedProvider(["never"])

    async def main():
        agent = Agent(llm=provider).with_tools([add]).with_mcp_servers([MCPServerConfig(name="web", url=http_url)])
        with pytest.raises(ToolNameCollisionError, match=r"MCP server 'web': tool name 'add' is already used"):
            await drain(agent, "hi")
        assert [t.name for t in agent.tools] == ["add"] and provider.requests == []
        await agent.aclose()

    asyncio.run(main())


@pytest.mark.slow
def test_two_servers_collide_unless_prefixed(http_url):
    async def main():
        command_line = shlex.join([sys.executable, SERVER])  # a convenience string: a command run over stdio
        clash = Agent(llm=ScriptedProvider(["x"])).with_mcp_servers([http_url, command_line])
        with pytest.raises(ToolNameCollisionError, match=f"MCP server '{os.path.basename(sys.executable)}'"):
            await drain(clash, "hi")
        await clash.aclose()
        assert clash.tools == ()
        provider = ScriptedProvider([calls(("one_add", {"a": 1, "b": 2}), ("two_lookup", {"country": "Japan"})), "ok"])
        both = Agent(llm=provider).with_mcp_servers(
            [
                MCPServerConfig(name="one", url=http_url, tool_prefix="one_", include_tools=("add",)),
                stdio("two", tool_prefix="two_", exclude_tools=("fail", "remember")),
            ]
        )
        async with both:
            events = await drain(both, "hi")
            names = sorted(t.name for t in both.tools)
        return events, names

    events, names = asyncio.run(main())
    assert names == ["one_add", "two_add", "two_lookup"]
    assert sorted(e.result for e in of_type(events, "tool_finished")) == ["3", "Tokyo"]


def test_tools_are_picked_by_the_agent_side_name_too():
    # The agent's name for a server tool (prefixed, characters it cannot hold made '_') is the one a person sees:
    # naming a tool that way in exclude_tools must keep it out, as the server's own name does.
    async def main():
        config = stdio(tool_prefix="x_", include_tools=("x_add", "lookup", "fail"), exclude_tools=("x_lookup",))
        async with Agent(llm=ScriptedProvider(["ok"])).with_mcp_servers([config]) as agent:
            await drain(agent, "hi")
            return sorted(t.name for t in agent.tools)

    assert asyncio.run(main()) == ["x_add", "x_fail"]


def test_sync_methods_ask_for_the_async_variant():
    agent = Agent(llm=ScriptedProvider(["x"])).with_mcp_servers(["http://127.0.0.1:9/mcp"])
    for call in (lambda: agent.stream("hi"), lambda: list(agent.chat("hi")), lambda: agent.run("hi")):
        with pytest.raises(AgentConfigError, match="async variant"):
            call()


@pytest.mark.slow
def test_connections_close_and_reopen(tmp_path):
    pidfile = tmp_path / "pid"
    agent = Agent(llm=ScriptedProvider(default="ok")).with_mcp_servers([stdio(env={"MCP_TEST_PIDFILE": str(pidfile)})])

    async def turn():
        await drain(agent, "hi")
        return int(pidfile.read_text())

    async def twice_then_close():
        first = await turn()
        again = await turn()  # still connected: the same process
        await agent.aclose()
        return first, again

    first, again = asyncio.run(twice_then_close())
    assert first == again and not _running(first) and agent.tools == ()
    second = asyncio.run(turn())  # a new event loop: connects again, lazily
    assert second != first and len(agent.tools) == 4
    third = asyncio.run(turn())  # the last loop ended without aclose: its connection died with it
    assert third != second and not _running(second)
    asyncio.run(agent.aclose())


@pytest.mark.slow
def test_a_server_that_died_is_an_error_result_then_reconnected(tmp_path):
    pidfile = tmp_path / "pid"
    provider = ScriptedProvider(
        [
            calls(("add", {"a": 1, "b": 1})),
            "first",
            calls(("add", {"a": 2, "b": 2})),
            "second",
            calls(("add", {"a": 3, "b": 3})),
            "third",
        ]
    )
    agent = Agent(llm=provider).with_mcp_servers([stdio(env={"MCP_TEST_PIDFILE": str(pidfile)})])

    async def main():
        results = []
        async with agent:
            results.append(of_type(await drain(agent, "one"), "tool_finished")[0])
            first = int(pidfile.read_text())
            os.kill(first, signal.SIGKILL)
            assert not _running(first)
            results.append(of_type(await drain(agent, "two"), "tool_finished")[0])  # the call finds it gone
            results.append(of_type(await drain(agent, "three"), "tool_finished")[0])  # a new connection
            second = int(pidfile.read_text())
        return results, first, second

    (one, two, three), first, second = asyncio.run(main())
    assert (one.result, one.is_error) == ("2", False)
    assert two.is_error and "MCP server 'local' disconnected" in two.result
    assert (three.result, three.is_error) == ("6", False) and second != first


def _running(pid: int) -> bool:
    deadline = time.monotonic() + 10
    while time.monotonic() < deadline:
        try:
            os.kill(pid, 0)
        except ProcessLookupError:
            return False
        time.sleep(0.05)
    return True


@pytest.mark.parametrize(
    "server",
    [
        MCPServerConfig(name="missing", command="/nonexistent/mcp-server"),
        MCPServerConfig(
            name="silent", command=sys.executable, args=("-c", "import time; time.sleep(30)"), connect_timeout=1
        ),
        "http://127.0.0.1:9/mcp",
    ],
)
@pytest.mark.slow
def test_a_server_that_cannot_be_reached_fails_the_turn_clearly(server):
    provider = ScriptedProvider(["never"])

    async def main():
        agent = Agent(llm=provider).with_mcp_servers([server])
        started = time.monotonic()
        with pytest.raises(MCPError, match="cannot connect to MCP server") as caught:
            await drain(agent, "hi")
        await agent.aclose()
        return caught.value, time.monotonic() - started

    error, took = asyncio.run(main())
    assert provider.requests == [] and took < 20 and str(error).count("\n") == 0


def test_configs_from_strings_and_their_checks():
    http = MCPServerConfig.parse("https://example.test:8443/mcp")
    assert (http.transport, http.url, http.name) == ("http", "https://example.test:8443/mcp", "example.test:8443")
    command = MCPServerConfig.parse("uvx my-server --flag 'two words'")
    assert (command.transport, command.command, command.name) == ("stdio", "uvx", "uvx")
    assert command.args == ("my-server", "--flag", "two words")
    assert MCPServerConfig.parse({"name": "n", "url": "http://x/mcp"}).name == "n"
    for bad in ("", "ftp://host/mcp", {"name": "x"}, 42):
        with pytest.raises(AgentConfigError):
            MCPServerConfig.parse(bad)  # type: ignore[arg-type]  # a bad argument on purpose
    with pytest.raises(ValidationError):
        http.name = "other"  # type: ignore[misc]  # writing a frozen field on purpose
    with pytest.raises(AgentConfigError, match="two MCP servers are named"):
        Agent().with_mcp_servers(["http://127.0.0.1:1/mcp", "http://127.0.0.1:1/mcp"])


def test_without_the_sdk_the_error_is_one_install_hint(monkeypatch):
    monkeypatch.setitem(sys.modules, "mcp", None)
    with pytest.raises(AgentConfigError, match=r"pip install 'semif-agent\[mcp\]'"):
        Agent().with_mcp_servers(["http://127.0.0.1:1/mcp"])
