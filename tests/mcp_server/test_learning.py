"""What MCP clients teach `semif train`, through the official SDK's client: picks capped, a person's word kept."""

from __future__ import annotations

import asyncio
import json

import pytest
from click.testing import CliRunner

from semif_agent.cli import main
from semif_agent.records import DecisionLog, DecisionRow, LabelRow

from ._client import stdio
from .conftest import starter_workspace

README_REQUEST = "Email Alice that the quarterly report is ready"  # the README's first request
LABELLED = "Send my manager a note asking for Friday off"  # the README's first hour: a person labels it


def invoke(*args: str) -> dict:
    result = CliRunner().invoke(main, [*args, "--json"])
    assert result.exit_code == 0, result.stderr
    return json.loads(result.stdout)


@pytest.fixture
def starter(tmp_path):
    return starter_workspace(tmp_path)


def poison(root, env, texts) -> None:
    """One client asks find_skills about each of ``texts`` and loads todos.complete after each."""

    async def session():
        async with stdio(root, env) as client:
            for text in texts:
                found = await client.call("find_skills", request=text)
                await client.call("load_skill", name="todos.complete", choice_id=found["choice_id"])

    asyncio.run(session())
    picks = [
        r
        for r in DecisionLog(root / "data" / "decisions.jsonl").read()
        if isinstance(r, LabelRow) and r.source == "implicit"
    ]
    assert len(picks) == len(texts) and {r.skill for r in picks} == {"todos.complete"}  # every pick was taken


@pytest.mark.slow
def test_sixty_picks_from_one_client_do_not_outvote_a_persons_label_or_an_example(starter):
    root, env = starter
    ran = invoke("run", LABELLED, "-w", str(root))  # handed back; a person labels where it should have gone
    invoke("label", ran["run_id"], "--skill", "email.compose", "-w", str(root))
    # the same two requests, 60 times each, said a little differently each time (as a person reads them, the same)
    poison(root, env, [text + mark * n for n in range(60) for text, mark in ((README_REQUEST, "!"), (LABELLED, "."))])

    report = invoke("train", "-w", str(root))
    assert invoke("route", README_REQUEST, "-w", str(root))["skill"] == "email.compose", report["decision"]["reason"]
    assert invoke("route", LABELLED, "-w", str(root))["skill"] == "email.compose", report["decision"]["reason"]
    assert report["decision"]["switched"]  # the person's label is learned, as without the picks
    assert not report["counts"].get("implicit"), report["counts"]  # none count against what people said


@pytest.mark.slow
def test_sixty_requests_one_client_words_around_an_example_do_not_switch_the_router_away_from_it(starter):
    root, env = starter
    poison(root, env, [f"{README_REQUEST} (number {n})" for n in range(60)])

    decision = invoke("train", "-w", str(root))["decision"]
    assert invoke("route", README_REQUEST, "-w", str(root))["skill"] == "email.compose", decision["reason"]
    clients = [f for f in decision["flips"] if f["source"] in ("implicit", "reported")]
    assert not any(f["counted"] for f in clients)  # a client's claims buy nothing: shown, marked, never counted
    assert all(f["mark"].endswith("not counted") for f in clients)
    assert not invoke("train", "--no-clients", "-w", str(root))["counts"].get("implicit")


def test_a_session_mixing_finds_and_runs_labels_no_request_it_does_not_belong_to(starter):
    root, env = starter
    weather = "What will the weather be in Paris tomorrow?"

    async def session():
        async with stdio(root, env) as client:
            found = await client.call("find_skills", request=weather)
            await client.call("run_skill", name="email.compose", request="Email Carla that the logo files arrived")
            await client.call("load_skill", name="calendar.list_events")  # naming no find
            await client.call("find_skills", request="Add buy milk to my to-do list")
            await client.call("run_skill", name="todos.add", request="Add buy milk to my to-do list")  # its find's
            return found["choice_id"]

    choice_id = asyncio.run(session())
    rows = list(DecisionLog(root / "data" / "decisions.jsonl").read())
    assert not [r for r in rows if r.run_id == choice_id and r.kind in ("label", "activate")]
    requests = {r.run_id: r.state for r in rows if isinstance(r, DecisionRow) and r.kind == "shortlist"}
    picks = [r for r in rows if isinstance(r, LabelRow) and r.source == "implicit"]
    assert picks and all(requests.get(r.run_id) != weather for r in picks)
    report = invoke("train", "-w", str(root))
    assert not any(flip["text"] == weather for flip in report["decision"]["flips"])
