"""semif_agent.Router in process: what a find logs, and how a client's picks and reports teach the router."""

from __future__ import annotations

import asyncio
import shutil
from pathlib import Path

import pytest

from semif_agent import Router
from semif_agent.catalog.errors import SkillPathError
from semif_agent.engine import ScriptedEngine
from semif_agent.engine.decisions import NONE_ID
from semif_agent.errors import InvalidArgumentError, SyncInAsyncError, UnknownSkillError, UserError
from semif_agent.records import DecisionLog, DecisionRow, LabelRow, label_row
from semif_agent.routing.strategies import MAX_OPTIONS
from semif_agent.routing.training import WEIGHTS, examples_from_log
from semif_agent.starter import create_workspace

REQUEST = "Email Grace that I accept the offer"


@pytest.fixture
def router(tmp_path):
    return Router(create_workspace(tmp_path / "ws"), client="tester")


def taught(router: Router) -> set[tuple[str, str | None, str, float, str | None]]:
    runs = DecisionLog(router.workspace.log_path).runs()
    return {(e.text, e.skill, e.source, e.weight, e.wrong) for e in examples_from_log(runs, router.runner.tree)}


def test_a_find_is_one_logged_decision_with_calibrated_probabilities(router):
    found = router.find(REQUEST, k=3)
    assert len(found.skills) == 3 and "email.compose" in [c.name for c in found.skills]
    probabilities = [c.probability for c in found.skills]
    assert probabilities == sorted(probabilities, reverse=True) and sum(probabilities) + found.none <= 1 + 1e-6
    [row] = list(DecisionLog(router.workspace.log_path).read())
    assert isinstance(row, DecisionRow)
    assert (row.kind, row.run_id, row.source, row.extra_field("client")) == (
        "shortlist",
        found.choice_id,
        "library",
        "tester",
    )
    assert [o["id"] for o in row.options] == [c.name for c in found.skills] + ["none"]
    assert (row.probabilities or {})[found.skills[0].name] == pytest.approx(found.skills[0].probability)


def test_the_first_pick_after_a_find_is_an_implicit_label_weaker_than_a_persons(router):
    found = router.find(REQUEST)
    passed_over = found.skills[0].name
    chosen = next(c.name for c in found.skills if c.name != passed_over)
    router.load(chosen, choice_id=found.choice_id)
    router.load(passed_over, choice_id=found.choice_id)  # a second pick of the same find teaches nothing more
    assert taught(router) == {
        (REQUEST, chosen, "implicit", WEIGHTS["implicit"], None),
        (REQUEST, None, "implicit", WEIGHTS["implicit"], passed_over),
    }
    assert WEIGHTS["implicit"] < WEIGHTS["label"]
    router.runner.log.append(label_row(found.choice_id, by="alice", skill="email.compose"))
    router.runner.log.append(
        LabelRow(run_id=found.choice_id, by="client", skill=chosen, has_skill=True, source="implicit")
    )
    assert taught(router) == {(REQUEST, "email.compose", "label", WEIGHTS["label"], None)}  # the person's word stands


def test_a_run_follows_the_find_of_the_same_request_and_a_report_labels_it(router):
    found = router.find(REQUEST)
    outcome = router.run("email.compose", REQUEST)
    assert outcome.outcome == "success" and outcome.changes["created"]
    assert router.report(outcome.run_id[:21], "failure", skill="none", note="wrong person") == outcome.run_id
    run = DecisionLog(router.workspace.log_path).run(outcome.run_id)
    assert (run.label_outcome, run.label_has_skill, run.label_skill, run.label_source) == (
        "failure",
        True,
        None,
        "client",
    )
    assert (REQUEST, "email.compose", "implicit", WEIGHTS["implicit"], None) in taught(router)
    assert DecisionLog(router.workspace.log_path).run(found.choice_id).skill == "email.compose"


def test_mistakes_are_one_line_errors(router):
    for call, error, words in (
        (lambda: router.find(""), InvalidArgumentError, "empty"),
        (lambda: router.find("x" * 70_000), InvalidArgumentError, "64 KiB"),
        (lambda: router.find(REQUEST, k=0), InvalidArgumentError, "1 to 15"),
        (lambda: router.load("nope"), UnknownSkillError, "no skill 'nope'"),
        (lambda: router.read_file("email.compose", "x"), InvalidArgumentError, "code skill"),
        (lambda: router.report("nope", "success"), Exception, "no run 'nope'"),
    ):
        with pytest.raises(error, match=words):
            call()
    assert list(DecisionLog(router.workspace.log_path).read()) == []


def test_the_sync_face_asks_for_the_async_one_inside_a_loop(router):
    async def inside():
        with pytest.raises(SyncInAsyncError):
            router.find(REQUEST)
        return await router.afind(REQUEST)

    assert asyncio.run(inside()).skills


CORPUS = Path(__file__).resolve().parents[1] / "fixtures" / "skills-corpus"


@pytest.fixture
def corpus_root(tmp_path) -> Path:
    """A starter workspace with the real SKILL.md corpus in its skills/ folder: more skills than a decision shows."""
    root = create_workspace(tmp_path / "ws")
    for collection in ("superpowers", "openai-skills"):
        for folder in (CORPUS / collection).iterdir():
            if (folder / "SKILL.md").is_file():
                shutil.copytree(folder, root / "skills" / folder.name)
    return root


def shortlist_rows(root: Path, choice_id: str) -> list[DecisionRow]:
    rows = DecisionLog(root / "data" / "decisions.jsonl").read()
    return [r for r in rows if isinstance(r, DecisionRow) and r.run_id == choice_id and r.kind == "shortlist"]


def test_a_model_reranks_the_fifteen_best_and_none_as_one_logged_decision(corpus_root):
    ranked = [c.name for c in Router(corpus_root, rerank=False).find(REQUEST, k=15).skills]
    engine = ScriptedEngine(fn=lambda request: request.options[4].id)  # the model takes the ranker's fifth
    found = Router(corpus_root, engine=engine, rerank=True).find(REQUEST, k=5)
    [asked] = engine.calls
    assert [o.id for o in asked.options] == [*ranked, NONE_ID] and len(asked.options) == MAX_OPTIONS
    assert [c.name for c in found.skills] == [ranked[4], *ranked[:4]]
    assert found.best == ranked[4] and found.skills[0].probability >= 0.5
    first, second = shortlist_rows(corpus_root, found.choice_id)
    assert (first.step, first.engine, len(first.options)) == (1, "local", MAX_OPTIONS)
    assert (second.step, second.engine, second.selected) == (2, "scripted", ranked[4])


def test_the_workspace_turns_reranking_on_and_a_failing_model_leaves_the_ranking(corpus_root):
    settings = corpus_root / "semif.toml"
    settings.write_text(settings.read_text(encoding="utf-8") + "\n[mcp]\nrerank = true\n", encoding="utf-8")
    ranked = [c.name for c in Router(corpus_root, rerank=False).find(REQUEST, k=5).skills]
    engine = ScriptedEngine(["none"])  # one answer: no skill fits; then it has none left and fails
    router = Router(corpus_root, engine=engine)
    assert router.find(REQUEST).best == NONE_ID
    failed = router.find(REQUEST)
    assert [c.name for c in failed.skills] == ranked and len(shortlist_rows(corpus_root, failed.choice_id)) == 1
    assert len(engine.calls) == 2
    router.find(REQUEST, rerank=False)
    assert len(engine.calls) == 2


def test_a_skill_is_found_by_the_name_its_skill_md_writes(router):
    folder = router.workspace.root / "skills" / "pdf"
    folder.mkdir(parents=True)
    (folder / "SKILL.md").write_text("---\nname: PDF Tools\ndescription: Fill in PDF forms.\n---\nUse pdftk.\n")
    router.refresh()
    loaded = router.load("PDF Tools")
    assert (loaded.name, loaded.instructions) == ("pdf-tools", "Use pdftk.")


def test_a_clients_report_never_replaces_a_persons_label_and_weighs_less(router):
    labelled = router.run("email.compose", REQUEST)
    router.runner.log.append(label_row(labelled.run_id, by="alice", skill="email.compose", outcome="success"))
    router.report(labelled.run_id, "failure", skill="todos.complete", note="wrong skill")  # the client disagrees
    run = DecisionLog(router.workspace.log_path).run(labelled.run_id)
    assert (run.label_skill, run.label_outcome, run.labelled_by, run.label_source) == (
        "email.compose",
        "success",
        "alice",
        None,
    )
    reported = router.run("email.compose", "Email Bob that the build is green")
    router.report(reported.run_id, "success", skill="email.compose")  # a client's own judgement, nobody else's
    lessons = taught(router)
    assert (REQUEST, "email.compose", "label", WEIGHTS["label"], None) in lessons
    assert not any(skill == "todos.complete" or wrong == "email.compose" for _, skill, _, _, wrong in lessons)
    [(_, _, source, weight, _)] = [t for t in lessons if t[0] == "Email Bob that the build is green"]
    assert source == "reported" and weight < 1 < WEIGHTS["label"]


def test_a_pick_teaches_only_about_its_own_clients_find_of_the_same_request_and_recently(router, monkeypatch):
    import semif_agent.chooser._picks as picks

    found = router.find(REQUEST)
    router.load("todos.complete", choice_id=found.choice_id, client="someone else")  # not its find
    router.run("todos.add", "Add buy milk to my to-do list")  # a later, unrelated request of the same client
    assert not any(text == REQUEST for text, *_ in taught(router))
    router.load("todos.complete", session="another connection")  # nor another session's latest
    assert not any(text == REQUEST for text, *_ in taught(router))
    clock = [1000.0]
    monkeypatch.setattr(picks.time, "monotonic", lambda: clock[0])
    stale = router.find(REQUEST)
    clock[0] += picks.PICK_SECONDS + 1
    router.load("todos.complete", choice_id=stale.choice_id)  # long after: the find's time is over
    assert not any(text == REQUEST for text, *_ in taught(router))
    fresh = router.find(REQUEST)
    router.load("calendar.add_event", choice_id=fresh.choice_id)  # its own find, in time: a pick
    assert (REQUEST, "calendar.add_event", "implicit", WEIGHTS["implicit"], None) in taught(router)


@pytest.mark.slow
def test_a_run_a_client_chose_teaches_as_the_clients_word_and_never_becomes_a_learned_example(router):
    import json

    from click.testing import CliRunner

    from semif_agent.cli import main

    ran = router.run("email.compose", REQUEST)  # the client's choice, which the engine judges a success
    assert ran.outcome == "success"
    assert (REQUEST, "email.compose", "implicit", WEIGHTS["implicit"], None) in taught(router)
    assert not any(source == "success" for _, _, source, _, _ in taught(router))  # not the workspace's own evidence
    other = router.run("email.compose", "Email Bob that the build is green")
    router.report(other.run_id, "success", skill="todos.add")  # a client's claim about a run
    root = router.workspace.root
    asked = "Send my manager a note asking for Friday off"
    person = CliRunner().invoke(main, ["run", asked, "-w", str(root), "--json"])
    CliRunner().invoke(
        main, ["label", json.loads(person.stdout)["run_id"], "--skill", "email.compose", "-w", str(root)]
    )
    trained = CliRunner().invoke(main, ["train", "-w", str(root), "--json"])
    assert json.loads(trained.stdout)["decision"]["switched"], trained.stdout
    skills = {s["name"]: s for s in json.loads((root / "data" / "categories.json").read_text())["skills"]}
    learned = {(name, e["text"]) for name, s in skills.items() for e in s.get("learned_examples", [])}
    assert ("email.compose", asked) in learned  # the person's label
    assert not {text for _, text in learned} & {REQUEST, "Email Bob that the build is green"}, learned


def test_a_client_reports_only_on_its_own_finds_and_runs_never_on_a_persons(router):
    persons = router.runner.run(REQUEST)  # a person's run, made with the skill loop itself (as `semif run` does)
    with pytest.raises(InvalidArgumentError, match="not a find or run of client 'tester'"):
        router.report(persons.run_id, "failure", skill="calendar.add_event")
    theirs = router.run("email.compose", "Email Bob that the build is green", client="other agent")
    with pytest.raises(InvalidArgumentError, match="reports on its own"):
        router.report(theirs.run_id, "failure")  # another client's run
    run = DecisionLog(router.workspace.log_path).run(persons.run_id)
    assert (run.label_source, run.label_client, run.label_outcome) == (None, None, None)
    assert any(text == REQUEST and source != "reported" for text, _, source, _, _ in taught(router))
    found = router.find("Add buy milk to my to-do list")
    assert router.report(found.choice_id, "success", skill="todos.add") == found.choice_id  # its own find
    own = router.run("email.compose", "Email Dana that lunch is at noon")
    assert router.report(own.run_id, "success") == own.run_id  # its own run


def test_a_load_naming_no_find_teaches_nothing_whatever_the_latest_find(router):
    found = router.find("What's the weather in Paris tomorrow?", k=3)
    shown = [candidate.name for candidate in found.skills]
    other = next(name for name in router.runner.tree.skills if name not in shown)
    router.load(other)  # the client looking around, not its answer to the find
    router.load(shown[-1])  # even a skill the find showed: only a choice id or the same request ties a pick to it
    assert not any(text.startswith("What's the weather") for text, *_ in taught(router))
    router.run("email.compose", "Email Carla that the logo files arrived")  # a run of another request: its own
    assert not any(text.startswith("What's the weather") for text, *_ in taught(router))
    router.load(shown[-1], choice_id=found.choice_id)  # named by its choice id: the client's pick
    assert any(text.startswith("What's the weather") and skill == shown[-1] for text, skill, *_ in taught(router))


def test_a_skill_folder_swapped_for_a_link_out_of_the_workspace_is_never_read(tmp_path):
    """A client's Router saw skills/a/secret; then skills/a (or the skill's own folder) is replaced by a link to a
    folder outside the workspace holding the same layout: reading or loading the skill refuses, never the outside."""
    root = create_workspace(tmp_path / "ws", empty=True)
    skill = root / "skills" / "a" / "secret"
    skill.mkdir(parents=True)
    (skill / "SKILL.md").write_text("---\nname: secret\ndescription: Keeps the garden shed's secrets.\n---\nINSIDE\n")
    (skill / "notes.txt").write_text("inside the workspace")
    outside = tmp_path / "outside"
    (outside / "secret").mkdir(parents=True)
    (outside / "secret" / "SKILL.md").write_text("---\nname: secret\ndescription: x\n---\nOUTSIDE\n")
    (outside / "secret" / "notes.txt").write_text("OUTSIDE the workspace")
    router = Router(root, client="tester")
    assert router.read_file("secret", "notes.txt") == "inside the workspace"
    loaded = router.load("secret")
    assert loaded.instructions == "INSIDE" and loaded.files == ("notes.txt",)
    for swapped, target in ((root / "skills" / "a", outside), (skill, outside / "secret")):
        aside = swapped.with_name(swapped.name + "-aside")
        swapped.rename(aside)
        swapped.symlink_to(target, target_is_directory=True)
        for call in (lambda: router.read_file("secret", "notes.txt"), lambda: router.load("secret")):
            with pytest.raises(SkillPathError, match="now a link"):
                call()
        swapped.unlink()
        aside.rename(swapped)
    (skill / "link.txt").symlink_to(outside / "secret" / "notes.txt")  # a link inside the skill is not followed
    with pytest.raises(SkillPathError, match="not a file"):
        router.read_file("secret", "link.txt")
    assert "link.txt" not in router.load("secret").files


def test_every_row_of_a_clients_find_and_run_names_the_client(router):
    found = router.find(REQUEST, client="alice")
    ran = router.run("email.compose", REQUEST, client="alice", choice_id=found.choice_id)
    rows = [r for r in DecisionLog(router.workspace.log_path).read() if r.run_id in (found.choice_id, ran.run_id)]
    named = {(r.kind, r.extra_field("client") if not isinstance(r, LabelRow) else r.by) for r in rows}
    assert {kind for kind, _ in named} >= {"shortlist", "activate", "label", "assess", "outcome"}
    assert {who for _, who in named} == {"alice"}


def test_a_report_after_a_restart_finds_the_clients_own_find_in_the_log_by_a_prefix(router):
    found = router.find(REQUEST, client="alice")
    other = router.find("Add milk to the to-do list", client="bob")
    restarted = Router(router.workspace, client="tester")  # a new server: nothing in memory of who made what
    assert restarted.report(found.choice_id[:-2], "success", client="alice") == found.choice_id
    with pytest.raises(InvalidArgumentError, match="is not a find or run of client 'alice'"):
        restarted.report(other.choice_id, "failure", client="alice")
    with pytest.raises(UserError, match="no run"):
        restarted.report("0000-not-an-id", "failure", client="alice")


def test_semif_log_says_which_client_asked_for_each_find_and_run(router):
    from click.testing import CliRunner

    from semif_agent.cli import main

    found = router.find(REQUEST, client="alice")
    ran = router.run("email.compose", REQUEST, client="alice", choice_id=found.choice_id)
    root = str(router.workspace.root)
    runs = CliRunner().invoke(main, ["log", "-w", root])
    finds = CliRunner().invoke(main, ["log", "-w", root, "--finds"])
    shown = CliRunner().invoke(main, ["log", "show", ran.run_id, "-w", root])
    assert runs.exit_code == finds.exit_code == shown.exit_code == 0, runs.output + finds.output + shown.output
    [run_line] = [line for line in runs.output.splitlines() if line.startswith(ran.run_id)]
    assert "picked by alice" in run_line and run_line.endswith("(asked by alice)")
    assert f"{found.choice_id}  find by alice " in finds.output
    assert any(line.split() == ["client", "alice"] for line in shown.output.splitlines())
