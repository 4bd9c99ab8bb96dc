"""A new user's first labels on a starter workspace: three to skills and one `--none`, trained together.

Twenty-four everyday requests of one's own, run through `semif run`; the runs
routed or handed back wrongly labelled; `semif train`. One `--none` label used
to set the `none` cut alone (the starter's `none_examples` were not read) and
send a score of right routes to `none`, so nothing was learned; a label whose
effect breaks right routes is now named, with the command that takes it back.
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest
from click.testing import CliRunner

from semif_agent.cli import main
from semif_agent.engine import local_available
from semif_agent.starter import create_workspace

pytestmark = [
    pytest.mark.slow,  # two dozen runs through the embedded model, then trainings: about 20 s
    pytest.mark.skipif(not local_available(), reason="the local engine is not installed"),
]

REQUESTS = (
    "Email Carla that the logo files arrived",
    "Write to Tom asking if he can join the call on Friday",
    "Send a message to Priya thanking her for the flowers",
    "Show me the emails I haven't sent yet",
    "Note that the wifi password is sunflower42",
    "Jot down that the car is parked on level 3",
    "Find my note about the gym membership",
    "What did I write about the plumber?",
    "Put a dentist appointment on Thursday at 10am",
    "Schedule lunch with Sam next Monday at noon",
    "What's on my calendar tomorrow?",
    "Do I have anything booked this week?",
    "Find the invoice PDF from March",
    "Where is my resume file?",
    "Which files did I change today?",
    "Show the documents I edited recently",
    "Remind me to book the car service",
    "Add buy oat milk to my to-do list",
    "What's left on my to-do list?",
    "Mark the groceries task as done",
    "I finished calling the bank, tick it off",
    "Convert the budget spreadsheet to a PDF",
    "Drop Bob a line asking whether the March invoice was paid",
    "Don't let me forget to call the plumber",
)
LABELS = {  # the request, and what the person says of its run
    "Write to Tom asking if he can join the call on Friday": ("--skill", "email.compose"),
    "Drop Bob a line asking whether the March invoice was paid": ("--skill", "email.compose"),
    "Don't let me forget to call the plumber": ("--skill", "todos.add"),
    "Convert the budget spreadsheet to a PDF": ("--none",),
}
NONE_LABELLED = "Convert the budget spreadsheet to a PDF"


def invoke(*args: str) -> tuple[int, str, str]:
    result = CliRunner().invoke(main, list(args))
    return result.exit_code, result.stdout, result.stderr


def routed(root: Path, text: str) -> str | None:
    code, out, err = invoke("route", text, "-w", str(root), "--json")
    assert code == 0, err
    return json.loads(out)["skill"]


@pytest.fixture(scope="module")
def labelled(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, dict[str, str]]:
    """A starter workspace with the 24 runs logged and the four labels given: (root, run id by request)."""
    root = create_workspace(tmp_path_factory.mktemp("labelled") / "ws")
    with (root / "semif.toml").open("a", encoding="utf-8") as settings:
        settings.write('\n[config]\nnow = "2025-03-10T09:00:00"\n')
    batch = root.parent / "requests.jsonl"
    batch.write_text("".join(json.dumps({"text": text}) + "\n" for text in REQUESTS))
    code, _, err = invoke("run", "--batch", str(batch), "-w", str(root))
    assert code == 0, err
    code, out, err = invoke("log", "-w", str(root), "--limit", "0", "--json")
    assert code == 0, err
    runs = {row["request"]: row["run_id"] for row in map(json.loads, out.splitlines())}
    for text, said in LABELS.items():
        code, _, err = invoke("label", runs[text], *said, "-w", str(root))
        assert code == 0, err
    return root, runs


def copy_of(labelled: tuple[Path, dict[str, str]], tmp_path: Path) -> Path:
    return Path(shutil.copytree(labelled[0], tmp_path / "ws"))


def test_a_none_label_and_skill_labels_train_together_and_break_nothing(labelled, tmp_path: Path) -> None:
    root = copy_of(labelled, tmp_path)
    code, out, err = invoke("train", "-w", str(root), "--json")
    assert code == 0, err
    report = json.loads(out)
    decision = report["decision"]
    assert decision["switched"] and not decision["forced"], decision["reason"]
    assert decision["now_wrong"] == 0 and decision["now_right"] > 0
    assert report["counts"]["none"] == 32, "the starter's 31 none_examples and the one --none label"
    assert routed(root, "Write to Tom asking if he can join the call on Friday") == "email.compose"
    assert routed(root, "Remind me to book the car service") == "todos.add"
    assert routed(root, "Note that the wifi password at the cabin is pinecone42") == "notes.add"


def test_one_none_label_does_not_place_the_cut_where_the_tree_has_no_none_examples(labelled, tmp_path: Path) -> None:
    # A tree with no requests that no skill serves (as a workspace of SKILL.md skills has): the one --none label is
    # all training knows of `none`; it used to weigh as much as every other row together and send right routes there.
    root = copy_of(labelled, tmp_path)
    categories = root / "data" / "categories.json"
    tree = json.loads(categories.read_text())
    del tree["none_examples"]
    categories.write_text(json.dumps(tree))
    code, out, err = invoke("train", "-w", str(root), "--json")
    assert code == 0, err
    decision = json.loads(out)["decision"]
    assert decision["switched"] and decision["now_wrong"] == 0, decision["reason"]
    assert routed(root, "Remind me to book the car service") == "todos.add"


DRAFTS = ("Show me my email drafts", "List the drafts I have not sent")


def test_labels_outrank_the_examples_of_nearly_the_same_requests_which_are_named_as_what_is_wrong(
    tmp_path: Path,
) -> None:
    # A person labelled every run of two requests for the drafts as email.compose, eight times each: email.list_drafts'
    # own examples worded like them say otherwise, and the person's word is the one that stands.
    root = create_workspace(tmp_path / "ws")
    batch = tmp_path / "drafts.jsonl"
    batch.write_text("".join(json.dumps({"text": text}) + "\n" for text in DRAFTS for _ in range(8)))
    assert invoke("run", "--batch", str(batch), "-w", str(root))[0] == 0
    code, out, err = invoke("log", "-w", str(root), "--limit", "0", "--json")
    runs = [json.loads(line) for line in out.splitlines()]
    for run in runs:
        assert invoke("label", run["run_id"], "--skill", "email.compose", "-w", str(root))[0] == 0

    code, out, err = invoke("train", "-w", str(root))
    assert code == 0, err
    assert "switched from the untrained examples strategy" in out and "  now wrong " not in out
    assert (
        "now right 'Show my email drafts'  email.list_drafts -> email.compose  "
        "(outranked: an example a person's label contradicts, not counted)"
    ) in out
    lines = out.splitlines()
    said = [line for line in lines if line.startswith("skill email.list_drafts's example 'Show my email drafts'")]
    assert said and "is what is wrong: the label on run" in said[0] and "--skill email.compose) outranks it" in said[0]
    assert not [line for line in lines if line.startswith(("the label on run", "the labels on runs"))]
    ids = {run["run_id"]: run["request"] for run in runs}

    for run_id in ids:
        assert invoke("label", run_id, "--undo", "-w", str(root))[0] == 0
    code, out, err = invoke("train", "-w", str(root), "--json")
    assert code == 0, err
    decision = json.loads(out)["decision"]
    assert decision["switched"] and decision["now_wrong"] == 0, decision["reason"]


# Another person's day: their own two dozen requests, three labels to skills and one `--none`, and four rewordings of
# each labelled request, written before any training was run on them.
OTHER_REQUESTS = (
    "Email Nina the address of the new office",
    "Send Omar a note saying thanks for the lift",
    "Ping Maria to ask whether she can cover my shift on Saturday",
    "Let the landlord know the kitchen tap is leaking again",
    "Show the emails I drafted to Omar",
    "Write down that the spare key is under the blue pot",
    "Remember that the bike lock code is 4417",
    "Search my notes for the recipe with lemon",
    "What did I note about the electrician?",
    "Book a haircut for Wednesday at 4pm",
    "Add the school play to my calendar on Friday at 6pm",
    "What meetings do I have on Monday?",
    "Is my afternoon free today?",
    "Find the lease agreement PDF",
    "Where did I save the photos of the receipt?",
    "What files did I edit this morning?",
    "List the latest documents I worked on",
    "Put call the insurance company on my to-do list",
    "I must not forget the parking permit renewal",
    "Show me my open tasks",
    "What have I already crossed off my list?",
    "Tick off the dentist task, it's done",
    "I paid the water bill, mark it done",
    "Compress the holiday photos into a zip archive",
)
OTHER_LABELS = {  # the request, where it should go (None: no skill), and four rewordings of it
    "Ping Maria to ask whether she can cover my shift on Saturday": (
        "email.compose",
        (
            "Ping Joe to ask whether he can take my shift on Sunday",
            "Ask Lena if she can cover for me at work on Friday",
            "Ping Oscar asking whether he could swap shifts with me next Tuesday",
            "Message Rita to see if she can cover my Saturday shift",
        ),
    ),
    "Let the landlord know the kitchen tap is leaking again": (
        "email.compose",
        (
            "Let the landlord know the bathroom window is broken",
            "Tell the landlord that the heating stopped working again",
            "Let my landlord know the front door lock is stuck",
            "Inform the landlord the washing machine is leaking",
        ),
    ),
    "I must not forget the parking permit renewal": (
        "todos.add",
        (
            "I must not forget the passport renewal",
            "I must not forget the library books are due",
            "I mustn't forget to renew the car insurance",
            "I must not forget the school trip payment",
        ),
    ),
    "Compress the holiday photos into a zip archive": (
        None,
        (
            "Compress the vacation pictures into a zip file",
            "Zip up the wedding photos into one archive",
            "Compress the project folder into a zip archive",
            "Put all the holiday photos into a compressed zip",
        ),
    ),
}


def test_every_labelled_request_is_learned_and_its_rewordings_do_not_get_worse(tmp_path: Path) -> None:
    # The fit pulled so hard toward the untrained scores that one label could not move its own request: "Let the
    # landlord know the kitchen tap is leaking again", labelled email.compose, still went to none after training.
    root = create_workspace(tmp_path / "ws")
    with (root / "semif.toml").open("a", encoding="utf-8") as settings:
        settings.write('\n[config]\nnow = "2025-03-10T09:00:00"\n')
    batch = tmp_path / "requests.jsonl"
    batch.write_text("".join(json.dumps({"text": text}) + "\n" for text in OTHER_REQUESTS))
    assert invoke("run", "--batch", str(batch), "-w", str(root))[0] == 0
    code, out, err = invoke("log", "-w", str(root), "--limit", "0", "--json")
    runs = {row["request"]: row["run_id"] for row in map(json.loads, out.splitlines())}
    for text, (skill, _) in OTHER_LABELS.items():
        said = ("--skill", skill) if skill else ("--none",)
        assert invoke("label", runs[text], *said, "-w", str(root))[0] == 0
    rewordings = [(text, skill) for skill, texts in OTHER_LABELS.values() for text in texts]
    before = sum(routed(root, text) == skill for text, skill in rewordings)

    code, out, err = invoke("train", "-w", str(root), "--json")
    assert code == 0, err
    decision = json.loads(out)["decision"]
    assert decision["switched"] and not decision["forced"], decision["reason"]
    assert not decision["unlearned"], "every labelled request goes where its label says"
    assert {text: routed(root, text) for text in OTHER_LABELS} == {
        text: skill for text, (skill, _) in OTHER_LABELS.items()
    }
    after = sum(routed(root, text) == skill for text, skill in rewordings)
    assert after >= before, f"rewordings right: {before} before training, {after} after"
