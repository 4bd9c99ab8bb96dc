"""A person's label outranks a skill's own examples: where they disagree on (nearly) the same request, the example
is what is wrong, in the training and in what the switch reports, never the label."""

from __future__ import annotations

from semif_agent.routing.outranked import contradicted_examples
from semif_agent.routing.switching import compare_routers, flip_lines, label_culprits, label_lines
from semif_agent.routing.training import TrainingExample

LABELLED = "Email Grace that I accept the offer"
COPIED = "Tell David by email that I accept the offer"  # a new skill's example, worded like the labelled request
OWN = "Email Carla that the logo files arrived"


class Routes:
    """A routing that sends each request where a table says (the replay asks only ``destination``)."""

    name = "table"

    def __init__(self, table: dict[str, str | None]) -> None:
        self.table = table

    def destination(self, text: str) -> str | None:
        return self.table.get(text)


ROWS = [
    TrainingExample(OWN, "email.compose", "examples"),
    TrainingExample(COPIED, "mail-helper", "examples"),
    TrainingExample("Send Bob the hosting invoice", "mail-helper", "examples"),
    TrainingExample(LABELLED, "email.compose", "label", 4.0, run_id="20260101-000000-aaaaaa"),
]
BEFORE = {OWN: "email.compose", COPIED: "mail-helper", LABELLED: "email.compose", "Send Bob the hosting invoice": None}
AFTER = {**BEFORE, COPIED: "email.compose"}  # the label's request and the example worded like it: where it says


def test_an_example_a_persons_label_contradicts_is_neither_a_fix_nor_a_break_and_is_named_with_its_skill() -> None:
    decision = compare_routers(Routes(BEFORE), Routes(AFTER), ROWS)
    assert (len(decision.fixed), len(decision.broken), decision.switched) == (0, 0, True)
    assert decision.replayed == 3  # the contradicted example is replayed only to be shown, routed as the label says
    lines = flip_lines(decision.to_dict())
    assert lines == [
        f"  now right {COPIED!r}  mail-helper -> email.compose  "
        "(outranked: an example a person's label contradicts, not counted)"
    ]
    said = label_lines(decision.to_dict())
    assert said == [
        f"skill mail-helper's example {COPIED!r} is what is wrong: the label on run 20260101-000000-aaaaaa "
        f"({LABELLED!r} --skill email.compose) outranks it, and it was left out (edit or remove it in skill mail-helper)"
    ]
    # the label is never blamed for it: without the label, the example would route its way again, yet nothing is named
    assert label_culprits(decision, ROWS, lambda leaving_out: Routes(BEFORE)) == []


def test_only_examples_of_nearly_the_same_request_and_another_skill_are_contradicted() -> None:
    rows = [
        *ROWS,
        TrainingExample("email grace that I accept the offer!", "mail-helper", "examples"),  # the same request
        TrainingExample("Email Grace that the report is ready", "mail-helper", "examples"),  # another request
        TrainingExample("Email Hugo that I accept the offer", "email.compose", "examples"),  # agrees with the label
        TrainingExample("What will the weather be tomorrow?", None, "examples"),  # a none example of another request
        TrainingExample("Email Grace that I accept the offer", None, "examples"),  # a none example of the same request
    ]
    found = contradicted_examples(rows)
    assert sorted(found) == sorted([COPIED, "email grace that I accept the offer!", LABELLED])
    assert {c.skill for c in found.values()} == {"mail-helper", None}
    # a client's word outranks nothing
    clients = [TrainingExample(LABELLED, "email.compose", "reported", 0.5, client="bot"), *ROWS[:2]]
    assert contradicted_examples(clients) == {}


def test_a_label_that_breaks_an_example_of_another_request_is_still_named() -> None:
    far = "Send Bob the hosting invoice"
    before = {**BEFORE, far: "mail-helper"}
    decision = compare_routers(Routes(before), Routes({**before, far: "email.compose"}), ROWS)
    assert ([f.text for f in decision.broken], decision.switched) == ([far], False)
    assert [c.example for c in decision.outranked] == [COPIED]
    [culprit] = label_culprits(decision, ROWS, lambda leaving_out: Routes(before))
    assert culprit.sentence().startswith(
        f"the label on run 20260101-000000-aaaaaa ({LABELLED!r} --skill email.compose)"
    )
