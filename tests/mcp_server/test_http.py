"""`semif mcp --http`: the SDK's streamable HTTP client with the printed token; refused without it or from elsewhere."""

from __future__ import annotations

import asyncio
import contextlib
import functools
import json
import os
import subprocess
import sys
import threading
import time
import urllib.error
import urllib.request
from pathlib import Path

import anyio
import pytest
import uvicorn

from semif_agent.chooser import Router
from semif_agent.mcp_server import SkillServer
from semif_agent.mcp_server._http import http_app
from semif_agent.records import DecisionLog, OutcomeRow
from semif_agent.ui.server import bind
from semif_agent.workspace import Workspace

from ._client import ToolFailed, http


@contextlib.contextmanager
def serving(root, env, *args):
    """`semif mcp -w ROOT ARGS...` in its own process: the URL it serves at and the token it printed (None: it made
    none, the workspace having client tokens)."""
    process = subprocess.Popen(
        [sys.executable, "-m", "semif_agent", "mcp", "-w", str(root), *args], stdout=subprocess.PIPE, text=True, env=env
    )
    lines: list[str] = []

    def read_two() -> None:
        assert process.stdout is not None
        lines.extend(process.stdout.readline() for _ in range(2))

    reader = threading.Thread(target=read_two, daemon=True)
    reader.start()
    reader.join(60)
    try:
        started = len(lines) == 2 and lines[1].startswith(("token ", "no shared token"))
        assert started, f"semif mcp --http did not start: {lines}"
        yield lines[0].split(" at ", 1)[1].strip(), lines[1].split()[1] if lines[1].startswith("token ") else None
    finally:
        process.terminate()
        try:
            process.wait(10)
        except subprocess.TimeoutExpired:  # pragma: no cover
            process.kill()


@pytest.fixture(scope="module")
def served(corpus_workspace):
    """`semif mcp --http 127.0.0.1:0` on the corpus workspace: its URL and the token it printed."""
    root, env = corpus_workspace
    with serving(root, env, "--http", "127.0.0.1:0") as (url, token):
        yield url, token, root


@pytest.fixture(scope="module")
def served_publicly(corpus_workspace):
    """`semif mcp --http 0.0.0.0:0 --public --allow-host trusted.example`: its loopback URL and the token."""
    root, env = corpus_workspace
    with serving(root, env, "--http", "0.0.0.0:0", "--public", "--allow-host", "trusted.example") as (url, token):
        yield url.replace("0.0.0.0", "127.0.0.1"), token


INITIALIZE = json.dumps(
    {
        "jsonrpc": "2.0",
        "id": 1,
        "method": "initialize",
        "params": {
            "protocolVersion": "2025-06-18",
            "capabilities": {},
            "clientInfo": {"name": "probe", "version": "1"},
        },
    }
).encode()


def post(url: str, token: str, **headers: str) -> int:
    """The status of an MCP initialize request carrying the token and ``headers`` (an error's status too)."""
    request = urllib.request.Request(
        url,
        data=INITIALIZE,
        headers={
            "Content-Type": "application/json",
            "Accept": "application/json, text/event-stream",
            "Authorization": f"Bearer {token}",
            **headers,
        },
    )
    try:
        with urllib.request.urlopen(request, timeout=30) as answer:
            return answer.status
    except urllib.error.HTTPError as refused:
        return refused.code


@pytest.mark.slow
def test_a_client_with_the_token_finds_loads_and_runs(served):
    url, token, root = served

    async def session():
        async with http(url, token) as client:
            tools = {t.name for t in (await client.session.list_tools()).tools}
            found = await client.call("find_skills", request="Fix the failing CI checks on my GitHub pull request")
            loaded = await client.call("load_skill", name=found["skills"][0]["name"], choice_id=found["choice_id"])
            ran = await client.call("run_skill", name="email.compose", request="Email Bob that the build is green")
            with pytest.raises(ToolFailed, match="path is not inside the skill"):
                await client.call("read_skill_file", name="linear", path="../linear/../../semif.toml")
            return tools, found, loaded, ran

    tools, found, loaded, ran = asyncio.run(session())
    assert {"find_skills", "run_skill"} <= tools
    assert found["best"] == "gh-fix-ci" and loaded["name"] == "gh-fix-ci"
    [draft] = ran["changes"]["created"]
    assert (root / draft).read_text().startswith("To: Bob")
    outcomes = [r for r in DecisionLog(root / "data" / "decisions.jsonl").read() if isinstance(r, OutcomeRow)]
    assert [r.outcome for r in outcomes if r.run_id == ran["run_id"]] == [ran["outcome"]]


@pytest.mark.parametrize("headers", [{}, {"Authorization": "Bearer wrong"}])
def test_a_request_without_the_token_is_refused(served, headers):
    url, _, _ = served
    request = urllib.request.Request(url, data=b"{}", headers={"Content-Type": "application/json", **headers})
    with pytest.raises(urllib.error.HTTPError) as refused:
        urllib.request.urlopen(request, timeout=10)
    assert refused.value.code == 401 and b"bearer token" in refused.value.read()


def test_another_host_name_is_refused_even_with_the_token(served):
    url, token, _ = served
    request = urllib.request.Request(
        url,
        data=b"{}",
        headers={"Content-Type": "application/json", "Authorization": f"Bearer {token}", "Host": "evil.example"},
    )
    with pytest.raises(urllib.error.HTTPError) as refused:
        urllib.request.urlopen(request, timeout=10)
    assert refused.value.code in (400, 403, 421)


def test_a_public_server_keeps_the_host_and_origin_checks_and_allow_host_adds_a_name(served_publicly):
    # DNS rebinding against `--public`: a page at evil.example whose name now points at the server, token in hand
    url, token = served_publicly
    port = url.split(":")[2].split("/")[0]
    assert post(url, token) == 200  # a loopback name: the server was bound to every address
    assert post(url, token, Host=f"evil.example:{port}") == 400
    assert post(url, token, Host="evil.example") == 400
    assert post(url, token, Origin="http://evil.example") == 400
    assert post(url, token, Origin="null") == 400
    assert post(url, token, Host=f"trusted.example:{port}") == 200  # --allow-host trusted.example
    assert post(url, token, Host=f"trusted.example:{port}", Origin=f"http://trusted.example:{port}") == 200
    assert post(url, "wrong", Host=f"trusted.example:{port}") == 401  # an allowed name still needs the token


def outcomes(root, request: str) -> list[OutcomeRow]:
    """The outcome rows of the runs of ``request`` in the log."""
    rows = DecisionLog(root / "data" / "decisions.jsonl").read()
    return [r for r in rows if isinstance(r, OutcomeRow) and r.request == request]


def outcome_of(root, request: str) -> OutcomeRow:
    """The outcome row of the run of ``request``, once it is in the log (waited for up to 120 s)."""
    deadline = time.monotonic() + 120
    ended: list[OutcomeRow] = []
    while not ended and time.monotonic() < deadline:
        ended = outcomes(root, request)
        time.sleep(0.2)
    [outcome] = ended
    return outcome


@contextlib.contextmanager
def serving_here(root, env, monkeypatch, prepare=None, *, token="secret", clients=None):
    """`semif mcp --http 127.0.0.1:0` on ``root``, its server in a thread of this process (``prepare(server)`` called
    before it starts), accepting the shared ``token`` (None: none) and the client tokens of ``clients`` (a store):
    the server, its URL and its token."""
    for name in ("HOME", "SEMIF_HOME"):
        monkeypatch.setenv(name, env[name])
    monkeypatch.delenv("SEMIF_WORKSPACE", raising=False)
    server = SkillServer(Router(Workspace.load(root), source="mcp", client="mcp client"))
    if prepare is not None:
        prepare(server)
    sock = bind("127.0.0.1", 0)
    app = http_app(server, host="127.0.0.1", token=token, clients=clients)
    serving = uvicorn.Server(uvicorn.Config(app, log_level="warning", lifespan="on", timeout_graceful_shutdown=1))
    thread = threading.Thread(target=anyio.run, args=(functools.partial(serving.serve, sockets=[sock]),), daemon=True)
    thread.start()
    try:
        yield server, f"http://127.0.0.1:{sock.getsockname()[1]}/mcp", token
    finally:
        deadline = time.monotonic() + 120  # the skills' load ends first: a model mid-load must not outlive the test
        while (server._ready is None or not server._ready.is_set()) and time.monotonic() < deadline:
            time.sleep(0.02)
        serving.should_exit = True
        thread.join(60)
        sock.close()


def held(started: threading.Event, go_on: threading.Event | None, step):
    """``step`` (a coroutine function), made to say it started, then wait for ``go_on`` (if any) before it goes on."""

    async def step_held(*args, **kwargs):
        started.set()
        if go_on is not None:
            await anyio.to_thread.run_sync(go_on.wait)
        return await step(*args, **kwargs)

    return step_held


def ask_then_leave(url: str, token: str, request: str, started: threading.Event) -> None:
    """Ask for a run of email.compose on ``request``, and leave once the server has the call (``started``): the
    call cancelled, then the session ended."""

    async def session():
        async with http(url, token) as client, anyio.create_task_group() as calls:
            calls.start_soon(functools.partial(client.call, "run_skill", name="email.compose", request=request))
            assert await anyio.to_thread.run_sync(started.wait, 120), "the server never got the call"
            calls.cancel_scope.cancel()

    asyncio.run(session())


def test_a_client_that_leaves_while_the_skills_load_still_gets_its_run(corpus_workspace, monkeypatch):
    """A run asked of a server that just started waits for the skills to load: the client leaving meanwhile
    does not cancel it (the run was asked for, so it runs and is logged)."""
    root, env = corpus_workspace
    request = "Email Bob that the boiler service is booked for Monday"
    asked, go_on = threading.Event(), threading.Event()

    def hold_the_load(server):  # the skills load only once the client that asked for the run is gone
        warm = server.warm

        def held_warm():
            go_on.wait()
            return warm()

        monkeypatch.setattr(server, "warm", held_warm)
        monkeypatch.setattr(server, "ready", held(asked, None, server.ready))

    with serving_here(root, env, monkeypatch, hold_the_load) as (_, url, token):
        ask_then_leave(url, token, request, asked)
        assert outcomes(root, request) == []  # the client is gone, the skills not loaded yet
        go_on.set()
        [draft] = (outcome_of(root, request).changes or {})["created"]
    assert (root / draft).read_text().startswith("To: Bob")


def test_a_client_that_leaves_mid_run_loses_nothing_and_the_server_serves_on(corpus_workspace, monkeypatch):
    """The client leaves (its call cancelled, its session ended) while the run it asked for is surely mid-way:
    the run goes on to its end and its outcome row, and the server serves the next client."""
    root, env = corpus_workspace
    request = "Email Alice that the roof repair is booked for Friday"
    started, go_on = threading.Event(), threading.Event()

    async def another_client(url: str, token: str):
        async with http(url, token) as client:
            return await client.call("find_skills", request="Create a Linear issue for the login bug")

    with serving_here(root, env, monkeypatch) as (server, url, token):
        monkeypatch.setattr(server.router, "arun", held(started, go_on, server.router.arun))
        ask_then_leave(url, token, request, started)
        assert outcomes(root, request) == []  # the client is gone, the run still held
        go_on.set()
        assert asyncio.run(another_client(url, token))["best"] == "linear"
        [draft] = (outcome_of(root, request).changes or {})["created"]
    assert (root / draft).read_text().startswith("To: Alice")


@pytest.mark.parametrize("name", ["http://evil.example", "evil.example:80", "ev*il.example", ""])
def test_a_malformed_allow_host_is_one_line(corpus_workspace, name):
    from click.testing import CliRunner

    from semif_agent.cli import main

    root, _ = corpus_workspace
    result = CliRunner().invoke(main, ["mcp", "-w", str(root), "--http", "127.0.0.1:0", "--allow-host", name])
    assert result.exit_code != 0 and "--allow-host takes a host name" in result.stderr
    assert len(result.stderr.strip().splitlines()) == 1


NO_UI = Path(__file__).resolve().parents[1] / "fixtures" / "without-ui"  # a `jinja2` that cannot be imported


def test_serving_over_http_needs_the_mcp_extra_alone(corpus_workspace):
    """The README installs the mcp extra for `semif mcp --http`: the web view's extra (Jinja2) is not needed."""
    root, env = corpus_workspace
    env = {**env, "PYTHONPATH": os.pathsep.join(filter(None, [str(NO_UI), env.get("PYTHONPATH")]))}

    async def find(url: str, token: str):
        async with http(url, token) as client:
            return await client.call("find_skills", request="Create a Linear issue for the login bug")

    with serving(root, env, "--http", "127.0.0.1:0") as (url, token):
        assert asyncio.run(find(url, token))["best"] == "linear"


def test_a_long_load_says_it_is_still_loading_until_it_is_done(corpus_workspace, monkeypatch):
    from semif_agent.mcp_server import server as served

    root, env = corpus_workspace
    monkeypatch.setattr(served, "STILL_SECONDS", 0.05)
    said: list[str] = []
    go_on = threading.Event()

    def slow_load(server):
        server.say = said.append
        warm = server.warm

        def held_warm():
            go_on.wait(60)
            return warm()

        monkeypatch.setattr(server, "warm", held_warm)

    with serving_here(root, env, monkeypatch, slow_load):
        deadline = time.monotonic() + 60
        while not any(line.startswith("still loading the skills") for line in said) and time.monotonic() < deadline:
            time.sleep(0.02)
        go_on.set()
        while not any("skills ready" in line for line in said) and time.monotonic() < deadline + 60:
            time.sleep(0.02)
        count = len(said)
        time.sleep(0.2)  # four times the period: nothing more is said once loaded
        assert len(said) == count
    assert said[0].startswith("loading the skills of ") and any(s.startswith("still loading the skills") for s in said)


def test_a_client_gone_mid_answer_is_one_line_in_the_servers_log_and_other_errors_stay_whole():
    import logging

    from semif_agent.mcp_server._http import ClientLeft

    def record(exc: BaseException) -> logging.LogRecord:
        try:
            raise exc
        except BaseException:  # noqa: BLE001 (kept as the log record's exc_info, as uvicorn logs it)
            import sys

            return logging.LogRecord(
                "uvicorn.error", logging.ERROR, __file__, 1, "Exception in ASGI application", (), sys.exc_info()
            )

    gone = record(BaseExceptionGroup("unhandled errors in a TaskGroup", [anyio.ClosedResourceError()]))
    assert ClientLeft().filter(gone) and gone.getMessage() == "a client left while it was answered"
    assert gone.exc_info is None
    other = record(RuntimeError("the disk is full"))
    assert ClientLeft().filter(other) and other.exc_info is not None
