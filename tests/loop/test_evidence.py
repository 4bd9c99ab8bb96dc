"""The evidence an assessment weighs: what a request asks for, whether a skill is that kind, how close a call was."""

from __future__ import annotations

from pathlib import Path

import pytest

from semif_agent.engine import DecisionRequest, DecisionResult, Option
from semif_agent.loop.evidence import closest_call, gather_evidence, object_fits, read_request, skill_fits
from semif_agent.loop.observe import Changes
from semif_agent.skills import ActionResult
from semif_agent.starter import create_workspace
from semif_agent.tree import SkillTree
from semif_agent.tree.manifests import SkillManifest
from semif_agent.workspace import Workspace


@pytest.fixture(scope="module")
def starter(tmp_path_factory: pytest.TempPathFactory) -> SkillTree:
    ws = Workspace.load(create_workspace(Path(tmp_path_factory.mktemp("starter")) / "ws"))
    return SkillTree.load(ws.categories_path, ws.bodies_dir)


@pytest.mark.parametrize(
    ("text", "verb", "asks"),
    [
        ("Please email Grace that I accept the offer", "email", "change"),
        ("Could you please schedule a call with Bob at 3pm", "schedule", "change"),
        ("I need to buy milk", "buy", "other"),
        ("Show my email drafts", "show", "lookup"),
        ("Tell me what is on today", "tell", "lookup"),
        ("Tell David by email that the release is late", "tell", "change"),
        ("Check my drafts", "check", "lookup"),
        ("Check off the electricity bill", "check", "change"),
        ("What's on my calendar tomorrow?", None, "lookup"),
        ("Do I have any drafts for Grace", None, "lookup"),
        ("Convert 12 miles to kilometres", "convert", "other"),
    ],
)
def test_what_a_request_asks_for_is_read_from_its_wording(text: str, verb: str | None, asks: str) -> None:
    reading = read_request(text)
    assert (reading.verb, reading.asks) == (verb, asks)


def test_an_auxiliary_makes_a_question_only_before_a_subject() -> None:
    assert read_request("Do I have any drafts for Grace").question
    assert read_request("Is there anything on today").question
    assert not read_request("Do the quarterly report by Friday").question


# "fits": the skill is the kind of skill asked for; "object": a command acts on what the skill writes
@pytest.mark.parametrize(
    ("check", "text", "skill", "fits"),
    [
        ("fits", "Email Grace that I accept the offer", "email.compose", True),
        ("fits", "Email Grace that I accept the offer", "calendar.add_event", False),
        ("fits", "Reply to Carla that the mockups look great", "email.compose", True),
        ("fits", "Drop Bob a line about the invoice", "email.compose", True),  # an idiom read as "message Bob"
        ("fits", "Buy a birthday present for Emma, put it on my list", "todos.add", True),
        ("fits", "I booked the car service, tick it off", "todos.complete", True),
        ("fits", "Which drafts are addressed to Grace?", "email.list_drafts", True),
        ("fits", "What's the weather in Lisbon?", "calendar.list_events", False),
        ("fits", "Delete all my drafts", "email.list_drafts", False),
        ("object", "Send Alice a message about the roadmap", "email.compose", True),
        ("object", "Send 40 euros to Alice for the gift", "email.compose", False),  # money is not what an email is
        ("object", "Send the contract to the scanner", "email.compose", False),
        ("object", "Email Farid the rent receipt", "email.compose", True),  # its own verb says what it writes
        ("object", "Add pick up the parcel to my to-do list", "todos.add", True),
        ("object", "Add oat milk to my online basket", "todos.add", False),
        ("object", "Write a limerick about cats", "notes.add", False),
        ("object", "Write down that the bins go out on Tuesday", "notes.add", True),  # a particle its words use
        ("object", "Make a note that the plumber charges 60 an hour", "notes.add", True),
        ("object", "Put the dog out", "todos.add", False),
        ("object", "Add dinner with Emma on Sunday", "calendar.add_event", True),
        ("object", "Add pilates Thursday 6:30pm", "calendar.add_event", True),  # a time of day
        ("object", "What did I send to Bob?", "email.compose", True),  # a question: for the lookup rules
    ],
)
def test_a_skill_fits_the_kind_asked_for_and_what_a_command_acts_on(
    starter: SkillTree, check: str, text: str, skill: str, fits: bool
) -> None:
    fitting = skill_fits if check == "fits" else object_fits
    assert fitting(read_request(text), starter.get(skill)) is fits


def test_names_and_numbers_are_not_what_a_command_acts_on() -> None:
    reading = read_request("Please send 20 dollars to Bob on PayPal at 9am")
    assert reading.verb == "send" and reading.objects == {"dollar", "oclock"}
    assert read_request("Add Milk To The List").objects == {"milk", "list"}  # title case: no names to leave out
    assert read_request("Write it down").phrasal == "write down"


def test_a_skill_with_a_description_only_is_compared_on_its_words() -> None:
    skill = SkillManifest(
        name="unit-converter", category="tools", description="Convert distances between miles and km."
    )
    assert skill_fits(read_request("Convert 12 miles into km"), skill)
    assert skill_fits(read_request("How far is 12 miles in km?"), skill)
    assert not skill_fits(read_request("Turn 12 miles into km"), skill)
    assert not skill_fits(read_request("What is the weather in Lisbon?"), skill)


def test_the_closest_call_is_the_smallest_margin_among_decisions_with_probabilities() -> None:
    asked = DecisionRequest("x", "Which contact?", [Option("Alice"), Option("Bob")])
    wide = DecisionResult("Alice", probabilities={"Alice": 0.9, "Bob": 0.1})
    tight = DecisionResult("Bob", probabilities={"Alice": 0.45, "Bob": 0.55})
    unscored = DecisionResult("Alice", scores={"Alice": 1.0})
    call = closest_call([(asked, wide), (asked, tight), (asked, unscored)])
    assert call is not None and call.selected == "Bob" and call.margin == pytest.approx(0.1)
    assert closest_call([(asked, unscored)]) is None


@pytest.mark.parametrize(
    ("log", "new_state", "handed_back", "could_not", "answered"),
    [
        ("todos.add: added to-do #1.", "To-do #1 added.", False, False, True),
        ("calendar.add_event: did not add 'Call mom': found no date or time.", "Call mom", True, True, False),
        ("email.compose: no contact matches the request; no draft written.", "  Call mom ", True, True, False),
        ("files.find: no file under files matches 'passport'.", "No files match 'passport'.", False, False, True),
        ("notes.add: failed to open the notes database.", "Not saved.", False, True, True),
    ],
)
def test_what_the_skill_returned_is_read(
    log: str, new_state: str, handed_back: bool, could_not: bool, answered: bool
) -> None:
    evidence = gather_evidence("Call mom", ActionResult(log, new_state), Changes())
    assert (evidence.handed_back, evidence.could_not, evidence.answered) == (handed_back, could_not, answered)


@pytest.mark.parametrize(
    ("text", "verb"),
    [
        ("I renewed my passport, tick it off", "tick"),
        ("I have called Bob, so cross it off", "cross"),
        ("Let Alice know the review moves to Thursday", "tell"),
        ("I paid the rent", "paid"),
    ],
)
def test_the_command_after_what_the_user_did_is_the_verb(text: str, verb: str) -> None:
    assert read_request(text).verb == verb


def test_an_answer_that_found_nothing_is_told_apart() -> None:
    nothing = gather_evidence(
        "Find the banana bread recipe", ActionResult("notes.search: none.", "No notes saved yet."), Changes()
    )
    found = gather_evidence(
        "Find the banana bread recipe", ActionResult("files.find: 1 file.", "1 file(s) found: x"), Changes()
    )
    assert nothing.found_nothing and nothing.answered
    assert not found.found_nothing and found.answered
