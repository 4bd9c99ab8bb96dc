"""`semif train` switches to the new router only when it breaks nothing that was right, and lists what flips."""

from __future__ import annotations

import json
from pathlib import Path
from types import SimpleNamespace

import pytest
from click.testing import CliRunner
from jinja2 import Environment, PackageLoader

from semif_agent.cli import main
from semif_agent.routing.switching import Flip, HeldOut, compare_routers, decide, flip_lines
from semif_agent.routing.training import TrainingExample
from semif_agent.starter import create_workspace

ASKED = "Send my manager a request asking for Friday off"
UNSENT = "Do I have any unsent emails?"
ROUTER_FILES = ("router.json", "router.npz", "routing.json")


def invoke(*args: str) -> tuple[int, str, str]:
    result = CliRunner().invoke(main, list(args))
    return result.exit_code, result.stdout, result.stderr


def routed(root: Path, text: str) -> str | None:
    """Where the router sends ``text``: the route's last choice (``skill`` is where a run would go, once the act gate
    read the request: a lookup routed to a skill that writes goes to one that reads)."""
    code, out, err = invoke("route", text, "-w", str(root), "--json")
    assert code == 0, err
    return json.loads(out)["decisions"][-1]["selected"]


def stored(root: Path) -> dict[str, bytes]:
    return {name: (root / "data" / name).read_bytes() for name in ROUTER_FILES}


@pytest.mark.slow
def test_one_label_fixes_its_request_and_leaves_the_neighbour_that_was_right(tmp_path: Path) -> None:
    # The README's first hour: a fresh starter routes the request to calendar.add_event; one label, one training.
    root = create_workspace(tmp_path / "ws")
    assert routed(root, UNSENT) == "email.list_drafts"
    assert routed(root, ASKED) == "calendar.add_event"
    code, out, err = invoke("run", ASKED, "-w", str(root), "--json")
    assert code == 0, err
    run = json.loads(out)  # the act gate hands it back: calendar.add_event does not send
    assert invoke("label", run["run_id"], "--skill", "email.compose", "-w", str(root))[0] == 0
    code, out, err = invoke("train", "-w", str(root), "--json")
    assert code == 0, err
    decision = json.loads(out)["decision"]
    assert decision["switched"] and not decision["forced"]
    assert any(
        {"text": ASKED, "now": "right", "before": "calendar.add_event", "after": "email.compose"}.items()
        <= flip.items()
        for flip in decision["flips"]
    )
    assert decision["now_wrong"] == 0
    assert routed(root, ASKED) == "email.compose"
    assert routed(root, UNSENT) == "email.list_drafts", "one label must not flip a neighbour that was right"


@pytest.mark.slow
def test_labels_that_break_what_was_right_are_not_switched_to_and_force_switches(tmp_path: Path) -> None:
    root = create_workspace(tmp_path / "ws")
    assert invoke("train", "-w", str(root), "--no-log")[0] == 0
    before = stored(root)
    # Requests worded like email.list_drafts' own examples, said (many times over) to go to email.compose:
    # the router fitted on them sends the list_drafts examples to email.compose too.
    contradicting = tmp_path / "contradicting.jsonl"
    rows = [{"text": "Show me my email drafts", "skill": "email.compose"}] * 15
    rows += [{"text": "List the drafts I have not sent", "skill": "email.compose"}] * 15
    contradicting.write_text("".join(json.dumps(row) + "\n" for row in rows))

    code, out, err = invoke("train", str(contradicting), "-w", str(root), "--no-log")
    assert code == 0, err
    assert "now wrong 'Show my email drafts'  email.list_drafts -> email.compose" in out
    assert "kept the learned router trained" in out and "do not outnumber the breaks beyond noise" in out
    assert "nothing saved" in out
    assert stored(root) == before, "the router in use is kept, its files untouched"
    assert routed(root, "Show my email drafts") == "email.list_drafts"

    code, out, err = invoke("train", str(contradicting), "-w", str(root), "--no-log", "--force", "--json")
    assert code == 0, err
    report = json.loads(out)
    decision = report["decision"]
    assert decision["switched"] and decision["forced"] and "(--force), although" in decision["reason"]
    broken = [f for f in decision["flips"] if f["now"] == "wrong"]
    assert {f["text"] for f in broken} >= {"Show my email drafts"}
    assert all(f["before"] == f["expected"] != f["after"] for f in broken)
    assert report["saved_to"] and stored(root) != before
    assert routed(root, "Show my email drafts") == "email.compose"


def flips(fixed: int, broken: int) -> tuple[list[bool], list[bool], list[Flip]]:
    """Replay outcomes with ``fixed`` requests now right and ``broken`` now wrong, among 40 right either way."""
    before = [True] * 40 + [False] * fixed + [True] * broken
    after = [True] * 40 + [True] * fixed + [False] * broken
    found = [Flip(f"fixed {i}", "a", "b", "a", "label") for i in range(fixed)]
    found += [Flip(f"broken {i}", "a", "a", "b", "examples") for i in range(broken)]
    return before, after, found


@pytest.mark.parametrize(
    ("fixed", "broken", "switched"),
    [
        (1, 0, True),  # nothing that was right breaks
        (3, 1, False),  # fixes outnumber breaks, within noise (one-sided exact p=0.31)
        (6, 1, False),  # p=0.063
        (7, 1, True),  # p=0.035
        (8, 2, False),  # p=0.055
        (9, 2, True),  # p=0.033
        (0, 0, True),
    ],
)
def test_breaks_must_be_outnumbered_by_fixes_beyond_noise(fixed: int, broken: int, switched: bool) -> None:
    decision = decide("the untrained examples strategy", *flips(fixed, broken), None)
    assert decision.switched is switched
    assert (len(decision.fixed), len(decision.broken)) == (fixed, broken)
    assert decision.reason.startswith("switched from" if switched else "kept the untrained examples strategy: ")


def test_a_router_worse_on_held_out_requests_is_not_switched_to() -> None:
    expected: list[str | None] = ["a", "b", "c", None]
    worse = HeldOut(expected, untrained=["a", "b", "c", None], learned=["a", "b", "b", None])
    decision = decide("the untrained examples strategy", *flips(1, 0), worse)
    assert (
        not decision.switched and "held-out requests" in decision.reason and "training does not help" in decision.reason
    )
    assert decision.held_out == {"requests": 4, "untrained_right": 4, "learned_right": 3, "p_value": 1.0}
    better = HeldOut(expected, untrained=["a", "b", "b", None], learned=expected)
    assert decide("the untrained examples strategy", *flips(1, 0), better).switched
    assert decide("x", *flips(1, 0), worse, force=True).forced


def test_a_switch_that_breaks_a_persons_label_is_refused_whatever_the_fixes() -> None:
    before, after, found = flips(60, 0)
    before, after = [*before, True], [*after, False]
    found.append(
        Flip(
            "Send my manager a note asking for Friday off", "email.compose", "email.compose", "todos.complete", "label"
        )
    )
    decision = decide("the untrained examples strategy", before, after, found, None)
    assert not decision.switched and decision.p_value < 1e-9  # the sign test alone would switch
    assert decision.reason == (
        "kept the untrained examples strategy: the new router sends 'Send my manager a note asking for Friday off', "
        "which a person labelled email.compose, to todos.complete: a person's label is never broken "
        "(--force switches anyway)"
    )
    assert "\n" not in decision.reason
    forced = decide("the untrained examples strategy", before, after, found, None, force=True)
    assert forced.switched and forced.forced and "a person labelled email.compose" in forced.reason


@pytest.mark.slow
def test_train_refuses_a_router_that_breaks_a_persons_label_and_force_switches(tmp_path: Path) -> None:
    root = create_workspace(tmp_path / "ws")
    code, out, err = invoke("run", ASKED, "-w", str(root), "--json")
    assert code == 0, err
    assert invoke("label", json.loads(out)["run_id"], "--skill", "email.compose", "-w", str(root))[0] == 0
    assert invoke("train", "-w", str(root))[0] == 0 and routed(root, ASKED) == "email.compose"
    before = stored(root)
    # a dataset that fixes many requests ("stand-up" is in no description), and says (sixteen times over, four times
    # the label's weight: a label holds its own request against as much) that the person's request goes elsewhere
    dataset = tmp_path / "against.jsonl"
    rows = [{"text": f"put the stand-up with team {n} on the board", "skill": "calendar.add_event"} for n in range(40)]
    rows += [{"text": ASKED, "skill": "todos.complete"}] * 16
    dataset.write_text("".join(json.dumps(row) + "\n" for row in rows))
    code, out, err = invoke("train", str(dataset), "-w", str(root), "--json")
    assert code == 0, err
    decision = json.loads(out)["decision"]
    assert not decision["switched"], decision["reason"]
    assert f"sends {ASKED!r}, which a person labelled email.compose" in decision["reason"]
    assert stored(root) == before and routed(root, ASKED) == "email.compose"


class Routes:
    """A routing that sends each request where a table says (the replay asks only ``destination``)."""

    name = "table"

    def __init__(self, table: dict[str, str | None]) -> None:
        self.table = table

    def destination(self, text: str) -> str | None:
        return self.table.get(text)


def test_a_clients_request_is_replayed_marked_as_a_clients_word_and_never_counted() -> None:
    rows = [
        TrainingExample("Email Carla that the logo files arrived", "email.compose", "examples"),
        TrainingExample("What will the weather be in Paris tomorrow?", "pdf", "implicit", 0.5, client="claude-code"),
        TrainingExample("Make a pivot table from sales.xlsx", "xlsx", "reported", 0.5, client="claude-code"),
    ]
    before = Routes({"What will the weather be in Paris tomorrow?": "calendar.list_events"})
    after = Routes(
        {
            "Email Carla that the logo files arrived": "email.compose",
            "What will the weather be in Paris tomorrow?": "pdf",
            "Make a pivot table from sales.xlsx": "xlsx",
        }
    )
    decision = compare_routers(before, after, rows)
    assert (decision.replayed, len(decision.fixed), len(decision.broken)) == (1, 1, 0)
    assert decision.reason.startswith("switched from the untrained table strategy: 1 request now right, 0 now wrong")
    lines = flip_lines(decision.to_dict())
    assert "  now right 'Email Carla that the logo files arrived'  none -> email.compose" in lines
    assert (
        "  now right 'What will the weather be in Paris tomorrow?'  calendar.list_events -> pdf  "
        "(implicit: a client's pick, not counted)"
    ) in lines
    assert (
        "  now right 'Make a pivot table from sales.xlsx'  none -> xlsx  (reported: a client's report, not counted)"
        in (lines)
    )
    flips = {flip["text"]: flip for flip in decision.to_dict()["flips"]}
    assert flips["What will the weather be in Paris tomorrow?"]["counted"] is False
    assert flips["What will the weather be in Paris tomorrow?"]["mark"] == "implicit: a client's pick, not counted"
    assert flips["Email Carla that the logo files arrived"]["counted"] is True

    page = PackageLoader("semif_agent.ui", "templates")
    html = (
        Environment(loader=page, autoescape=True)
        .get_template("_train_report.html")
        .render(
            status=SimpleNamespace(report={"classes": 2, "counts": {}, "held_out": 0, "decision": decision.to_dict()})
        )
    )
    assert "(implicit: a client&#39;s pick, not counted)" in html
