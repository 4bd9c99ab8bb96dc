"""How much `semif mcp` takes on at once: past its queue a call is answered "busy:" and nothing is done; a client over
its rate is answered "busy:" with how long to wait, and other clients are not slowed."""

from __future__ import annotations

import asyncio
import threading
import time

import anyio
import pytest

from semif_agent.mcp_server.admission import BUSY, Admission, ServerBusy
from semif_agent.records import DecisionLog, DecisionRow
from semif_agent.workspace import Workspace
from semif_agent.workspace.settings import parse_settings

from ._client import ToolFailed, http
from .test_http import held, serving_here


class Clock:
    def __init__(self) -> None:
        self.now = 100.0

    def __call__(self) -> float:
        return self.now


async def _enter(admission: Admission, client: str, rate: float | None = None) -> None:
    async with admission.admitted(client, rate=rate):
        pass


def test_a_client_over_its_rate_is_told_to_wait_and_others_are_not() -> None:
    clock = Clock()
    admission = Admission(rate=2, burst=2, clock=clock)

    async def scenario() -> None:
        await _enter(admission, "alice")
        await _enter(admission, "alice")
        with pytest.raises(
            ServerBusy, match=r"^busy: client 'alice' is over its rate of 2 calls a second; retry in 0\.5 s"
        ):
            await _enter(admission, "alice")
        await _enter(admission, "bob")  # another client has its own allowance
        clock.now += 0.5  # half a second: one call's worth back
        await _enter(admission, "alice")
        with pytest.raises(ServerBusy):
            await _enter(admission, "alice")
        await _enter(admission, "carol", rate=1000)  # a token's own rate beats the server's

    asyncio.run(scenario())
    assert admission.busy_answers == 2


def test_without_a_rate_no_client_is_limited() -> None:
    admission = Admission()

    async def many() -> None:
        for _ in range(500):
            await _enter(admission, "alice")

    asyncio.run(many())
    assert admission.busy_answers == 0


def test_a_call_cancelled_while_it_waits_gives_its_place_back() -> None:
    admission = Admission(working=1, queue=1)

    async def scenario() -> None:
        holding, release = anyio.Event(), anyio.Event()

        async def first() -> None:
            async with admission.admitted("a"):
                holding.set()
                await release.wait()

        async with anyio.create_task_group() as group:
            group.start_soon(first)
            await holding.wait()
            with anyio.move_on_after(0.05):  # the second waits in the queue, then gives up
                await _enter(admission, "b")
            assert admission.waiting == 0
            with anyio.move_on_after(0.05):  # so the queue has room again: a third waits, it is not refused
                await _enter(admission, "c")
            release.set()

    asyncio.run(scenario())
    assert admission.busy_answers == 0


@pytest.mark.parametrize(
    ("table", "said"),
    [
        ("[mcp]\nqueue = 0\n", "[mcp] queue must be a positive whole number"),
        ("[mcp]\nrate = 'fast'\n", "[mcp] rate must be a positive number"),
        ("[mcp]\nworking = 2.5\n", "[mcp] working must be a positive whole number"),
    ],
)
def test_a_wrong_limit_is_one_line(table: str, said: str) -> None:
    import tomllib

    from semif_agent.errors import WorkspaceError

    with pytest.raises(WorkspaceError) as caught:
        parse_settings(tomllib.loads(table), "semif.toml")
    assert said in str(caught.value) and "\n" not in str(caught.value)


def shortlists(root) -> list[str]:
    """The requests of the find decisions in the log."""
    rows = DecisionLog(Workspace.load(root).log_path).read()
    return [row.state for row in rows if isinstance(row, DecisionRow) and row.kind == "shortlist"]


def test_past_the_queue_a_find_is_answered_busy_and_nothing_is_logged(corpus_workspace, monkeypatch):
    """One find is answered at a time and one more may wait: a third asked meanwhile is answered "busy:" at once,
    is not logged, and the two others are answered once the first goes on."""
    root, env = corpus_workspace
    started, go_on = threading.Event(), threading.Event()
    asked = [f"Create a Linear issue for bug {n} ({time.time_ns()})" for n in range(3)]

    def small(server):
        server.admission = Admission(working=1, queue=1)
        monkeypatch.setattr(server.router, "afind", held(started, go_on, server.router.afind))

    async def clients(server, url: str, token: str) -> list[object]:
        answers: list[object] = [None, None, None]

        async def ask(n: int) -> None:
            async with http(url, token) as client:
                try:
                    answers[n] = await client.call("find_skills", request=asked[n])
                except ToolFailed as exc:
                    answers[n] = str(exc)

        async with anyio.create_task_group() as group:
            group.start_soon(ask, 0)
            assert await anyio.to_thread.run_sync(started.wait, 120), "the first find never started"
            group.start_soon(ask, 1)
            while server.admission.waiting < 1:  # the second waits for the first's place
                await anyio.sleep(0.01)
            await ask(2)  # the third: no place, no room to wait
            assert isinstance(answers[2], str) and answers[2].startswith(BUSY), answers[2]
            go_on.set()
        return answers

    with serving_here(root, env, monkeypatch, small) as (server, url, token):
        answers = asyncio.run(clients(server, url, token))
    assert [isinstance(a, dict) and a["best"] == "linear" for a in answers[:2]] == [True, True]
    assert "retry" in str(answers[2])
    logged = shortlists(root)
    assert asked[0] in logged and asked[1] in logged and asked[2] not in logged


def test_a_client_opening_session_after_session_is_told_to_wait() -> None:
    clock = Clock()
    admission = Admission(sessions=60, clock=clock)
    for _ in range(20):  # a burst of them at once is fine
        admission.handshake("alice")
    with pytest.raises(
        ServerBusy, match=r"^busy: client 'alice' opens sessions faster than 60 a minute; retry in 1\.0 s"
    ):
        admission.handshake("alice")
    admission.handshake("bob")
    clock.now += 1  # one a second comes back
    admission.handshake("alice")
