"""A request that names a thing to write into (a list, notes, a calendar) is never read as a message to someone,
and taking a note is never sending one."""

from __future__ import annotations

import pytest

from semif_agent.engine import create_engine, local_available
from semif_agent.loop import SkillRunner
from semif_agent.loop.phrasing import plain_command
from semif_agent.starter import create_workspace
from semif_agent.workspace import Workspace

needs_local = pytest.mark.skipif(not local_available(), reason="the local engine is not installed")


@pytest.fixture(scope="module")
def workspace(tmp_path_factory):
    return create_workspace(tmp_path_factory.mktemp("objects") / "ws")


@pytest.fixture(scope="module")
def runner(workspace) -> SkillRunner:
    return SkillRunner(Workspace.load(workspace), engine=create_engine("local"))


@needs_local
@pytest.mark.parametrize(
    "text",
    [
        "Write to my Bob list: buy eggs",
        "Write to our shared list with Bob: buy eggs",
        "Write to Bob's to-do list: call the plumber",
        "Write to my shopping list: milk and eggs",
        "Write to my grocery list that we need eggs",
        "Scribble down that I must email Bob about the invoice",
        "Write down that I must email Bob about the invoice",
        "Write to Bob's and Alice's shared list: buy eggs",  # as written, email.compose 'writes'
        "Write to my big long weekly shopping list that Bob needs eggs",  # read as a message, the list is named
        "Drop a line to the family's big shared to-do list: call Bob",
        # things under names no list of things holds: "write to" is a message only to someone plainly a person
        "Write to my Bob checklist: buy eggs",
        "Write to my Bob whiteboard: buy eggs",
        "Write to Bob's grocery inventory: buy eggs",
        "Write to the Bob kanban: buy eggs",
        "Write to my Bob and Alice weekend shared grocery list: buy eggs",
        "Write to my Bob gizmo: buy eggs",
    ],
)
def test_a_request_for_a_list_or_a_note_writes_no_email_draft(runner: SkillRunner, workspace, text: str) -> None:
    drafts = workspace / "data" / "drafts"
    before = set(drafts.iterdir())
    ran = runner.run(text)
    assert ran.skill != "email.compose" or ran.handed_back, ran.gate and ran.gate.reason
    assert set(drafts.iterdir()) == before


@pytest.mark.parametrize(
    ("text", "plain"),
    [
        ("Write to my sister that I'll bring dessert", "message my sister that I'll bring dessert"),
        ("Write to Bob about the shopping list", "message Bob about the shopping list"),
        ("Write to the landlord about the boiler", "message the landlord about the boiler"),
        ("Write to my Bob list: buy eggs", "Write to my Bob list: buy eggs"),
        ("Write to the team calendar that Friday is off", "Write to the team calendar that Friday is off"),
        ("Drop a line to my to-do list: buy milk", "Drop a line to my to-do list: buy milk"),
        ("Ping my to-do list with buy milk", "Ping my to-do list with buy milk"),
    ],
)
def test_write_to_reads_as_a_message_only_to_someone(text: str, plain: str) -> None:
    assert plain_command(text).text == plain


@pytest.mark.parametrize(
    ("text", "plain"),
    [
        ("Send my manager a note asking for Friday off", "message my manager asking for Friday off"),
        ("Give Bob a heads up about the invoice", "tell Bob about the invoice"),
        ("Drop my to-do list a line: buy milk", "Drop my to-do list a line: buy milk"),
    ],
)
def test_a_note_to_someone_is_a_message_and_one_to_a_list_is_not(text: str, plain: str) -> None:
    assert plain_command(text).text == plain
