"""One answer per request, through the official SDK's client: a run of the skill a find handed back hands back."""

from __future__ import annotations

import asyncio

import pytest

from ._client import stdio
from .conftest import starter_workspace

PIZZA = "Order a pizza for tonight"  # no skill of the starter orders anything


@pytest.fixture(scope="module")
def starter(tmp_path_factory):
    return starter_workspace(tmp_path_factory.mktemp("find-then-run"))


def _events(root) -> list[str]:
    return sorted(p.name for p in (root / "data" / "calendar").iterdir())


@pytest.mark.slow
def test_running_the_skill_a_find_handed_back_hands_back_for_the_finds_reason(starter) -> None:
    root, env = starter

    async def session():
        async with stdio(root, env) as client:
            found = await client.call("find_skills", request=PIZZA)
            by_id = await client.call("run_skill", name=found["best"], request=PIZZA, choice_id=found["choice_id"])
            again = await client.call("find_skills", request=PIZZA)
            await client.call("load_skill", name=again["best"], choice_id=again["choice_id"])  # a pick between
            by_request = await client.call("run_skill", name=again["best"], request=PIZZA)
            return found, by_id, by_request

    found, by_id, by_request = asyncio.run(session())
    assert found["handed_back"] and found["best"] == "calendar.add_event", found
    for ran in (by_id, by_request):
        assert (ran["handed_back"], ran["reason"]) == (True, found["reason"]), ran
    assert _events(root) == []  # no "Order a pizza" event was written


def test_a_skill_other_than_the_finds_best_is_the_callers_own_choice(starter) -> None:
    root, env = starter

    async def session():
        async with stdio(root, env) as client:
            found = await client.call("find_skills", request=PIZZA)
            ran = await client.call("run_skill", name="todos.add", request=PIZZA, choice_id=found["choice_id"])
            negated = "Don't order a pizza for tonight"
            refound = await client.call("find_skills", request=negated)
            kept = await client.call("run_skill", name="todos.add", request=negated, choice_id=refound["choice_id"])
            return found, ran, kept

    found, ran, kept = asyncio.run(session())
    assert found["best"] != "todos.add"
    assert (ran["handed_back"], ran["reason"]) == (False, "chosen by the caller"), ran
    assert kept["handed_back"] and "not to act" in kept["reason"], kept


@pytest.mark.slow
def test_no_choice_id_or_connection_gets_round_the_requests_answer(starter) -> None:
    """A made-up choice id, another find's, or a new connection without any find: the skill the request's find
    hands back is handed back when run (each wrote an "Order a pizza" event before)."""
    root, env = starter

    async def session():
        async with stdio(root, env) as client:
            found = await client.call("find_skills", request=PIZZA)
            other = await client.call("find_skills", request="Add buy milk to my to-do list")
            made_up = await client.call("run_skill", name=found["best"], request=PIZZA, choice_id="deadbeef")
            others = await client.call("run_skill", name=found["best"], request=PIZZA, choice_id=other["choice_id"])
        async with stdio(root, env) as fresh:
            cold = await fresh.call("run_skill", name=found["best"], request=PIZZA)
        return found, (made_up, others, cold)

    found, runs = asyncio.run(session())
    assert found["handed_back"], found
    for ran in runs:
        assert (ran["handed_back"], ran["reason"]) == (True, found["reason"]), ran
    assert _events(root) == []
