"""A person's label pins its request: the labelled request routes to the labelled skill, whatever the examples say."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from click.testing import CliRunner

from semif_agent.cli import main
from semif_agent.records.runs import RunRecord
from semif_agent.routing.pins import Pin, persons_pins, pin_key


def invoke(*args: str) -> tuple[int, str, str]:
    result = CliRunner().invoke(main, list(args))
    return result.exit_code, result.stdout, result.stderr


def route_of(root: Path, text: str) -> tuple[str | None, dict]:
    code, out, err = invoke("route", text, "-w", str(root), "--engine", "lexical", "--json")
    assert code == 0, err
    data = json.loads(out)
    return data["skill"], data


def workspace(make_workspace) -> Path:
    return make_workspace(
        {"email.compose": None, "notes.add": None},
        descriptions={"email.compose": "write and send an email", "notes.add": "add a note about lunch plans"},
    )


def test_a_request_a_person_labelled_routes_to_the_labelled_skill(make_workspace) -> None:
    root = workspace(make_workspace)
    text = "Email Alice about the lunch plans"
    assert route_of(root, text)[0] == "notes.add"  # its words are the note skill's, more than the email skill's
    code, out, err = invoke("run", text, "-w", str(root), "--engine", "lexical", "--json")
    assert code == 0, err
    run_id = json.loads(out)["decisions"][0]["run_id"]
    code, _, err = invoke("label", run_id, "--skill", "email.compose", "-w", str(root))
    assert code == 0, err
    # the same request, case and spacing aside, goes where the label says, and the route says why
    skill, data = route_of(root, "  email alice ABOUT the   lunch plans ")
    assert (skill, data["acts"]) == ("email.compose", True)
    assert [d["engine"] for d in data["decisions"]] == ["label"]
    # another request is routed as before
    assert route_of(root, "Email Alice about the lunch plans today")[0] == "notes.add"
    # a label taken back pins nothing
    code, _, err = invoke("label", "--undo", run_id, "-w", str(root))
    assert code == 0, err
    assert route_of(root, text)[0] == "notes.add"


def run(run_id: str, request: str, skill: str | None, **label: Any) -> RunRecord:
    return RunRecord(run_id, request, skill, "success", "run", **label)


def test_the_latest_label_of_a_request_stands_and_a_clients_word_pins_nothing() -> None:
    runs = [
        run("r1", "Email Bob", "email.compose", label_skill="notes.add", label_has_skill=True),
        run("r2", "email  BOB", "email.compose", label_skill=None, label_has_skill=True),
        run("r3", "Note lunch", "notes.add", label_skill="email.compose", label_has_skill=True),
        run("r4", "Note dinner", "notes.add", label_skill="email.compose", label_has_skill=True, label_source="client"),
        run("r5", "Note tea", "notes.add", label_skill="email.compose", label_has_skill=True, label_source="implicit"),
        run("r6", "Note cake", "notes.add", label_outcome="success"),
        # a person's skill, then a client's report of the outcome: the person's pin stands
        run(
            "r7",
            "Note soup",
            "notes.add",
            label_skill="email.compose",
            label_has_skill=True,
            label_outcome="failure",
            label_outcome_source="client",
            label_client="bot",
        ),
    ]
    assert persons_pins(runs) == {
        pin_key("note lunch"): Pin("email.compose", "r3"),
        pin_key("note soup"): Pin("email.compose", "r7"),
    }


def test_the_pins_keep_up_with_a_growing_log_reading_each_new_row_once(tmp_path: Path, monkeypatch) -> None:
    """A log that grows by finds and runs is read from where the last look stopped; the whole log is read again only
    when a person's label, an unlabel, or a row of a labelled run comes; a replaced log is read from its start."""
    from semif_agent.records import DecisionLog, LabelRow, OutcomeRow
    from semif_agent.routing.pins import LogPins

    log = DecisionLog(tmp_path / "decisions.jsonl")
    pins = LogPins(log)
    whole: list[int] = []
    read_after = log.read_after

    def counting(offset: int, **kinds: Any):
        if offset == 0:
            whole.append(offset)
        return read_after(offset, **kinds)

    monkeypatch.setattr(log, "read_after", counting)
    log.append(OutcomeRow(run_id="r1", skill="notes.add", request="Email Bob", outcome="success"))
    assert pins.pins() == {} and len(whole) == 1  # the first look reads it all
    for n in range(50):  # a busy server's runs and its clients' words: no pin can move
        log.append(OutcomeRow(run_id=f"x{n}", skill="notes.add", request=f"Note {n}", outcome="success"))
        log.append(LabelRow(run_id=f"x{n}", by="bot", skill="email.compose", has_skill=True, source="client"))
        assert pins.pins() == {}
    assert len(whole) == 1
    log.append(LabelRow(run_id="r1", by="ann", skill="email.compose", has_skill=True))  # a person's label
    assert pins.pins() == {pin_key("email bob"): Pin("email.compose", "r1")} and len(whole) == 2
    with (tmp_path / "decisions.jsonl").open("ab") as file:  # a row being written: left for the next look
        file.write(b'{"v": 1, "kind": "unlabel", "run_id": "r1"')
    assert pins.pins() == {pin_key("email bob"): Pin("email.compose", "r1")}
    with (tmp_path / "decisions.jsonl").open("ab") as file:
        file.write(b', "by": "ann", "ts": 1}\n')
    assert pins.pins() == {} and len(whole) == 3  # the label taken back, once its row is whole
    replaced = DecisionLog(tmp_path / "other.jsonl")
    replaced.append(OutcomeRow(run_id="r9", skill="notes.add", request="Note tea", outcome="success"))
    replaced.append(LabelRow(run_id="r9", by="ann", skill="email.compose", has_skill=True))
    (tmp_path / "other.jsonl").replace(tmp_path / "decisions.jsonl")
    assert pins.pins() == {pin_key("note tea"): Pin("email.compose", "r9")} and len(whole) == 4


def test_a_clients_report_on_a_run_a_person_labelled_never_lifts_the_persons_pin(tmp_path: Path) -> None:
    from semif_agent import Router
    from semif_agent.records import DecisionLog
    from semif_agent.routing.pins import LogPins
    from semif_agent.starter import create_workspace

    router = Router(create_workspace(tmp_path / "ws"), source="mcp")
    text = "Email Bob that the build is green"
    ran = router.run("email.compose", text, client="alice")
    log = DecisionLog(router.workspace.log_path)
    log.add_label(ran.run_id, by="ann", skill="notes.add")
    pins = LogPins(log)
    assert pins.pins() == {pin_key(text): Pin("notes.add", ran.run_id)}
    router.report(ran.run_id, "failure", skill="email.compose", note="not a note", client="alice")
    assert pins.pins() == {pin_key(text): Pin("notes.add", ran.run_id)}
    assert LogPins(log).pins() == {pin_key(text): Pin("notes.add", ran.run_id)}  # read whole, the same
