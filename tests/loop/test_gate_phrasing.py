"""The act gate on everyday phrasing: idioms act through the skill they mean, a contested write waits for a clear
lead, and a request handed back says the real reason."""

from __future__ import annotations

import pytest

from semif_agent.engine import create_engine, local_available
from semif_agent.engine.decisions import NONE_ID, DecisionRequest, DecisionResult, Option
from semif_agent.loop import SkillRunner
from semif_agent.loop.evidence import read_request, skill_fits
from semif_agent.loop.gate import ACT_MARGIN, gate_route
from semif_agent.records import DecisionLog, DecisionRow
from semif_agent.starter import create_workspace
from semif_agent.tree.manifests import SkillManifest
from semif_agent.tree.router import Route, RoutedDecision
from semif_agent.workspace import Workspace

needs_local = pytest.mark.skipif(not local_available(), reason="the local engine is not installed")


@pytest.fixture(scope="module")
def runner(tmp_path_factory) -> SkillRunner:
    ws = Workspace.load(create_workspace(tmp_path_factory.mktemp("phrasing") / "ws"))
    return SkillRunner(ws, engine=create_engine("local"))


@needs_local
@pytest.mark.parametrize(
    ("text", "skill"),
    [
        ("Drop Bob a line asking whether the March invoice was paid", "email.compose"),
        ("Shoot Alice an email about the budget review", "email.compose"),
        ("Ping David about the login bug", "email.compose"),
        ("Fire off a quick email to Grace confirming the interview", "email.compose"),
        ("Pencil in lunch with Carla on Friday at 1pm", "calendar.add_event"),
        ("Slot in a call with Grace tomorrow at 10am", "calendar.add_event"),
        ("Scribble down the wifi name for the guest room: Cabin5G", "notes.add"),
        ("Chuck return the library books on my to-do list", "todos.add"),
    ],
)
def test_everyday_phrasing_acts_through_the_skill_it_means(runner: SkillRunner, text: str, skill: str) -> None:
    verdict = runner.decide(text)
    assert (verdict.skill, verdict.acts) == (skill, True), verdict.reason


@needs_local
def test_a_skills_own_lead_in_counts_as_its_words(runner: SkillRunner) -> None:
    todos = runner.tree.skills["todos.add"]
    assert skill_fits(read_request("Don't let me forget to call the plumber"), todos)
    assert skill_fits(read_request("Remind me to call the plumber"), todos)  # the opening of its own example
    assert not skill_fits(read_request("Cancel the plumber"), todos)


@needs_local
def test_a_message_to_a_person_never_writes_a_calendar_event(runner: SkillRunner) -> None:
    verdict = runner.decide("Write to my manager that I'll be late tomorrow")
    assert not (verdict.acts and verdict.skill == "calendar.add_event"), verdict.reason


@needs_local
def test_a_request_handed_back_by_the_verb_rule_says_so(runner: SkillRunner) -> None:
    verdict = runner.decide("Drop the meeting with Carla from my calendar")
    assert verdict.handed_back and verdict.rule == "misfit"
    assert verdict.reason == "calendar.add_event does not 'drop'"
    said = verdict.gate.summary("RUN1")
    assert said.startswith("calendar.add_event does not 'drop'") and "not sure" not in said


def _route(runner: SkillRunner, categories: dict[str, float], chosen: str, leaves: dict[str, float]) -> Route:
    def step(level: str, selected: str, probabilities: dict[str, float]) -> RoutedDecision:
        request = DecisionRequest(state="", question="?", options=[Option(k) for k in probabilities])
        return RoutedDecision(level, request, DecisionResult(selected, dict(probabilities), dict(probabilities)))

    category = runner.tree.skills[chosen].category
    decisions = [step("category", category, categories), step("skill", chosen, leaves)]
    return Route(skill=runner.tree.skills[chosen], decisions=decisions)


@needs_local
def test_a_write_whose_words_name_another_skill_acts_only_with_a_clear_lead(runner: SkillRunner) -> None:
    """As the issue found it: calendar.list_events first, the change re-routed to calendar.add_event (45% once
    renormalised, far above a 15% threshold) while the request names a day the reading skill shows."""
    text = "Put the team offsite in for tomorrow"
    close = _route(
        runner,
        {"calendar": 0.78, "notes": 0.12, NONE_ID: 0.1},
        "calendar.list_events",
        {"calendar.list_events": 0.46, "calendar.add_event": 0.31, NONE_ID: 0.23},
    )
    _, held = gate_route(close, text, runner.tree, runner.engine, threshold=0.15, can_act=runner.can_act)
    assert held.handed_back and held.rule == "contested" and held.skill == "calendar.add_event"
    assert "calendar.list_events" in held.reason and f"{ACT_MARGIN:.0%}" in held.reason
    clear = _route(
        runner,
        {"calendar": 0.9, "notes": 0.05, NONE_ID: 0.05},
        "calendar.add_event",
        {"calendar.add_event": 0.8, "calendar.list_events": 0.1, NONE_ID: 0.1},
    )
    _, acts = gate_route(clear, text, runner.tree, runner.engine, threshold=0.15, can_act=runner.can_act)
    assert acts.acts and acts.rule == "sure"


def test_the_lead_ins_a_body_cuts_count_as_the_skills_words(tmp_path) -> None:
    body = tmp_path / "pile.py"
    body.write_text(
        'LEAD_INS = [r"^(please\\s+)?(put|pop)( this)? on the (shopping )?pile\\b\\s*:?"]\n'
        "def predict(ctx, request): ...\ndef act(ctx, request, prediction): ...\n",
        encoding="utf-8",
    )
    with_body = SkillManifest("shop.pile", "shop", "Keep a shopping list.", body_path=body)
    without = SkillManifest("shop.pile", "shop", "Keep a shopping list.")
    request = read_request("Pop this on the shopping pile: eggs and flour")
    assert skill_fits(request, with_body) and not skill_fits(request, without)
    assert not skill_fits(read_request("Throw the pile away"), with_body)


@needs_local
@pytest.mark.parametrize(
    ("text", "skill"),
    [
        ("Make sure I remember to renew the passport", "todos.add"),
        ("Write to my sister that I'll bring dessert", "email.compose"),
    ],
)
def test_a_request_in_everyday_words_is_routed_again_as_the_plain_command_it_reads_as(
    runner: SkillRunner, text: str, skill: str
) -> None:
    verdict = runner.decide(text)
    assert (verdict.skill, verdict.acts) == (skill, True), verdict.reason
    assert "read as" in verdict.reason
    assert all(step.request.state == text for step in verdict.route.decisions)  # logged as the person wrote it


@needs_local
@pytest.mark.parametrize(
    "text",
    ["Write to my sister that I'll bring dessert", "Drop Bob a line asking whether the March invoice was paid"],
)
def test_a_message_in_everyday_words_is_drafted_by_email_compose(tmp_path, text: str) -> None:
    """ "Write to my sister that..." is routed to notes.add as written, which does not 'write' to anyone: read as
    "message my sister that...", it goes to email.compose, which drafts it."""
    runner = SkillRunner(Workspace.load(create_workspace(tmp_path / "ws")), engine=create_engine("local"))
    ran = runner.run(text)
    assert (ran.skill, ran.handed_back) == ("email.compose", False), ran.gate and ran.gate.reason
    [draft] = (tmp_path / "ws" / "data" / "drafts").glob("*.txt")
    assert draft.read_text(encoding="utf-8").startswith("To: ")
    routes = [row for row in ran.rows if isinstance(row, DecisionRow) and row.kind == "route"]
    assert all(row.state == text for row in routes)  # both routes logged as the person wrote it
    outcome = DecisionLog(runner.log.path).run(ran.run_id)
    assert (outcome.request, outcome.skill) == (text, "email.compose")  # what a training learns from the run
    if ran.gate.read_as is not None:
        assert ran.gate.as_written and f"read as {ran.gate.read_as!r}" in ran.gate.reason


@needs_local
def test_a_request_moved_by_its_plain_reading_logs_the_route_set_aside(runner: SkillRunner) -> None:
    text = "Write to my sister that I'll bring dessert"
    verdict = runner.decide(text)
    assert (verdict.skill, verdict.acts) == ("email.compose", True), verdict.reason
    assert verdict.set_aside is not None and verdict.set_aside.skill.name == "notes.add"
    assert verdict.gate.as_written == "notes.add: notes.add does not 'write' (read as 'message')"
    assert verdict.reason.endswith('read as "message my sister that I\'ll bring dessert"')


@needs_local
def test_a_message_about_tomorrow_writes_no_calendar_event(tmp_path) -> None:
    runner = SkillRunner(Workspace.load(create_workspace(tmp_path / "ws")), engine=create_engine("local"))
    ran = runner.run("Write to my manager that I'll be late tomorrow")
    assert not (ran.skill == "calendar.add_event" and not ran.handed_back), ran.gate and ran.gate.reason
    assert not list((tmp_path / "ws" / "data" / "calendar").iterdir())


class _AsWrittenFindsNothing:
    """The runner's routing, except that the request as written (``text``) finds no skill, as a router may."""

    def __init__(self, strategy, text: str) -> None:
        self.strategy, self.text = strategy, text

    async def aroute(self, text: str) -> Route:
        if text == self.text:
            return Route(skill=None, reason="no skill scores above the threshold")
        return await self.strategy.aroute(text)


@needs_local
def test_a_write_reached_through_a_rewrite_meets_every_rule_the_request_as_written_does(tmp_path) -> None:
    """The plain reading keeps only the command ("message Bob asking about the invoice"): the statement before it,
    which says not to email anyone, is gone. Its route to email.compose passes the gate on the plain words; read as
    written, the request says not to act, so nothing is written."""
    text = "I do not want to email anyone, drop Bob a line asking about the invoice"
    runner = SkillRunner(Workspace.load(create_workspace(tmp_path / "ws")), engine=create_engine("local"))
    plain = runner.decide("message Bob asking about the invoice")
    assert (plain.skill, plain.acts) == ("email.compose", True), plain.reason  # the plain words alone would act
    runner.strategy = _AsWrittenFindsNothing(runner.strategy, text)
    ran = runner.run(text)
    assert ran.handed_back and ran.skill is None
    assert not list((tmp_path / "ws" / "data" / "drafts").iterdir())


@pytest.mark.parametrize(
    ("text", "verb"),
    [
        ("Would you mind writing Emma a short email to say thanks", "message"),
        ("Would you be so kind as to schedule a check-up for Monday at 8:30", "schedule"),
        ("pls email bob re the invoice", "email"),
        ("Can you drop Emma a message saying I'll see her tonight", "message"),
    ],
)
def test_polite_and_terse_lead_ins_are_read_through(text: str, verb: str) -> None:
    assert read_request(text).verb == verb
