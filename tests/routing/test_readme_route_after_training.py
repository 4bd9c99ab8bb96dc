"""The README's walk-through after training: a category whose skills together outweigh ``none`` is taken.

After one label and `semif train` on a fresh starter, "Remind me to renew the
passport" showed `todos 35%, none 30% <- chosen` and was handed back: a
category was scored by its best leaf against ``none``, while the probabilities
shown were the categories' masses. Each decision now takes the option it shows
as most probable. Thirty everyday in-scope requests and twenty out-of-scope
ones (none of them the starter's examples) measure what that costs.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from click.testing import CliRunner

from semif_agent.cli import main
from semif_agent.engine import create_engine, local_available
from semif_agent.routing.create import create_strategy
from semif_agent.routing.learned import stored_router
from semif_agent.tree.tree import SkillTree
from semif_agent.workspace import Workspace

pytestmark = [
    pytest.mark.slow,  # two runs and a training through the embedded model: about 15 s
    pytest.mark.skipif(not local_available(), reason="the local engine is not installed"),
]

IN_SCOPE = [
    ("Ask Lena if she can cover for me at work on Friday", "email.compose"),
    ("Drop Bob a line", "email.compose"),
    ("Let Maria know by email that the report is late", "email.compose"),
    ("Write an email to the landlord about the broken heater", "email.compose"),
    ("Tell Paul in an email that I will be there at eight", "email.compose"),
    ("Which emails are still waiting in my drafts?", "email.list_drafts"),
    ("List the messages I started but never sent", "email.list_drafts"),
    ("Write down that the spare key is under the mat", "notes.add"),
    ("Make a note of the doctor's phone number 555 0134", "notes.add"),
    ("Remember in my notes that Anna likes tulips", "notes.add"),
    ("What did I note about the bike repair?", "notes.search"),
    ("Look through my notes for the recipe idea", "notes.search"),
    ("Book a haircut for Saturday at 11", "calendar.add_event"),
    ("Put the team review on my calendar for Tuesday at 3pm", "calendar.add_event"),
    ("Schedule a call with the bank on Wednesday morning", "calendar.add_event"),
    ("What meetings do I have on Monday?", "calendar.list_events"),
    ("Is my afternoon free today?", "calendar.list_events"),
    ("Show my agenda for next week", "calendar.list_events"),
    ("Where did I save the tax return PDF?", "files.find"),
    ("Find the spreadsheet with the holiday budget", "files.find"),
    ("Locate my passport scan", "files.find"),
    ("What files have I worked on lately?", "files.recent"),
    ("Show the last documents I modified", "files.recent"),
    ("Remind me to renew the passport", "todos.add"),
    ("Put pick up the dry cleaning on my to-do list", "todos.add"),
    ("I need to buy a birthday present for Tom, add it to my tasks", "todos.add"),
    ("What tasks do I still have open?", "todos.list"),
    ("Show me my to-do list", "todos.list"),
    ("I paid the electricity bill, cross it off", "todos.complete"),
    ("Mark the email-the-accountant task as finished", "todos.complete"),
]
OUT_OF_SCOPE = [
    "Turn up the volume on the TV",
    "How tall is the Eiffel Tower?",
    "Order a pizza with extra cheese",
    "What's the exchange rate from dollars to yen?",
    "Call a plumber for me right now",
    "Recommend a good science fiction novel",
    "Open the garage door",
    "How do I say thank you in Japanese?",
    "Book a flight to Madrid for next month",
    "What time is sunset today?",
    "Play the latest episode of my podcast",
    "Calculate the square root of 729",
    "Rent a car in Lisbon for the weekend",
    "Check my bank balance",
    "Water the plants in the garden",
    "Who wrote Pride and Prejudice?",
    "Vacuum the living room",
    "Send 20 dollars to Alex on my payment app",
    "Find a vegan restaurant nearby",
    "What's the score of the basketball game?",
]


def invoke(*args: str) -> str:
    result = CliRunner().invoke(main, list(args))
    assert result.exit_code == 0, result.stderr
    return result.stdout


@pytest.fixture(scope="module")
def trained(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A starter after the README's steps: two runs, the second labelled email.compose, then `semif train`."""
    root = tmp_path_factory.mktemp("readme") / "ws"
    invoke("init", str(root))
    invoke("run", "Email Grace that I accept the offer", "-w", str(root))
    invoke("run", "Send my manager a request asking for Friday off", "-w", str(root))
    run_id = json.loads(invoke("log", "-w", str(root), "--limit", "1", "--json"))["run_id"]
    invoke("label", run_id, "--skill", "email.compose", "-w", str(root))
    invoke("train", "-w", str(root))
    return root


def route(root: Path, text: str) -> dict:
    return json.loads(invoke("route", text, "-w", str(root), "--json"))


def test_the_readme_reminder_goes_to_todos_add_after_training(trained: Path) -> None:
    shown = route(trained, "Remind me to renew the passport")
    assert shown["skill"] == "todos.add"
    assert [d["selected"] for d in shown["decisions"]] == ["todos", "todos.add"]


@pytest.mark.parametrize("text", ["Remind me to renew the passport", "Drop Bob a line", *(t for t, _ in IN_SCOPE[:6])])
def test_the_chosen_option_is_never_less_probable_than_another(trained: Path, text: str) -> None:
    for decision in route(trained, text)["decisions"]:
        chances = {o["id"]: o["probability"] for o in decision["options"]}
        assert chances[decision["selected"]] == max(chances.values()), (text, decision["question"], chances)


def test_in_scope_requests_are_routed_and_out_of_scope_ones_handed_back(trained: Path) -> None:
    workspace = Workspace.load(trained)
    tree = SkillTree.for_workspace(workspace)
    strategy = create_strategy("learned", tree, create_engine("local"), router=stored_router(workspace))
    right = sum(strategy.destination(text) == skill for text, skill in IN_SCOPE)
    handed_back = sum(strategy.destination(text) is None for text in OUT_OF_SCOPE)
    # measured 26 of 30 and 16 of 20, before this rule and after (the embeddings are deterministic)
    assert right >= 23 and handed_back >= 13, (right, handed_back)
