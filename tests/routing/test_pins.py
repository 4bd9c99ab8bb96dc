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
        run("r5", "Note tea", "notes.add", label_skill="email.compose", label_has_skill=True, label_client="bot"),
        run("r6", "Note cake", "notes.add", label_outcome="success"),
    ]
    assert persons_pins(runs) == {pin_key("note lunch"): Pin("email.compose", "r3")}
