"""`semif mcp --http`: the SDK's streamable HTTP client with the printed token; refused without it or from elsewhere."""

from __future__ import annotations

import asyncio
import subprocess
import sys
import threading
import time
import urllib.error
import urllib.request

import anyio
import pytest

from semif_agent.records import DecisionLog

from ._client import ToolFailed, http


@pytest.fixture(scope="module")
def served(corpus_workspace):
    """`semif mcp --http 127.0.0.1:0` on the corpus workspace: its URL and the token it printed."""
    root, env = corpus_workspace
    process = subprocess.Popen(
        [sys.executable, "-m", "semif_agent", "mcp", "-w", str(root), "--http", "127.0.0.1:0"],
        stdout=subprocess.PIPE,
        text=True,
        env=env,
    )
    lines: list[str] = []

    def read_two() -> None:
        assert process.stdout is not None
        lines.extend(process.stdout.readline() for _ in range(2))

    reader = threading.Thread(target=read_two, daemon=True)
    reader.start()
    reader.join(60)
    try:
        assert len(lines) == 2 and lines[1].startswith("token "), f"semif mcp --http did not start: {lines}"
        url = lines[0].split(" at ", 1)[1].strip()
        yield url, lines[1].split()[1], root
    finally:
        process.terminate()
        try:
            process.wait(10)
        except subprocess.TimeoutExpired:  # pragma: no cover
            process.kill()


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
    outcomes = [r for r in DecisionLog(root / "data" / "decisions.jsonl").read() if r["kind"] == "outcome"]
    assert [r["outcome"] for r in outcomes if r["run_id"] == ran["run_id"]] == [ran["outcome"]]


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
    assert refused.value.code in (403, 421)


def test_a_client_that_leaves_mid_run_loses_nothing_and_the_server_serves_on(served):
    url, token, root = served
    request = "Email Alice that the roof repair is booked for Friday"

    async def leave_mid_run():
        async with http(url, token) as client:
            with anyio.move_on_after(0.05):  # gone before the run can have ended
                await client.call("run_skill", name="email.compose", request=request)

    async def another_client():
        async with http(url, token) as client:
            return await client.call("find_skills", request="Create a Linear issue for the login bug")

    asyncio.run(leave_mid_run())
    assert asyncio.run(another_client())["best"] == "linear"
    deadline = time.monotonic() + 60
    ended: list[dict] = []
    while not ended and time.monotonic() < deadline:
        rows = DecisionLog(root / "data" / "decisions.jsonl").read()
        ended = [r for r in rows if r["kind"] == "outcome" and r.get("request") == request]
        time.sleep(0.2)
    [outcome] = ended
    [draft] = outcome["changes"]["created"]
    assert (root / draft).read_text().startswith("To: Alice")
