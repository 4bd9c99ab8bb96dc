"""email.compose and email.list_drafts on a fresh starter workspace."""

from __future__ import annotations

import os
import time



def test_compose_writes_a_draft_to_the_chosen_contact(ws, run):
    done = run("email.compose", "Email Alice that the quarterly report is ready", ["Alice Martin"])
    decision, answer = done.prediction.decisions[0]
    assert decision.option_ids[:2] == ["Alice Martin", "Bob Chen"] and decision.option_ids[-1] == "none"
    assert answer.selected == "Alice Martin"
    draft = ws.data_dir / "drafts" / f"{done.request.id}.txt"
    text = draft.read_text()
    assert text.startswith("To: Alice")
    assert text == "To: Alice Martin\nBody: Email Alice that the quarterly report is ready\n"
    assert str(draft) in done.result.action_log
    assert done.result.new_state == f"Draft written to {draft.name} for Alice Martin."


def test_compose_none_hands_the_request_back(ws, run):
    done = run("email.compose", "Email my accountant about the taxes", ["none"])
    assert done.result.new_state == done.request.text
    assert "no draft written" in done.result.action_log
    assert not any((ws.data_dir / "drafts").iterdir())


def write_draft(ws, name, to, body, age):
    folder = ws.data_dir / "drafts"
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / name
    path.write_text(f"To: {to}\nBody: {body}\n")
    stamp = time.time() - age
    os.utime(path, (stamp, stamp))


def test_list_drafts_for_one_contact(ws, run):
    write_draft(ws, "a.txt", "Alice Martin", "the report is ready", 300)
    write_draft(ws, "b.txt", "Bob Chen", "invoice 1043 is paid", 200)
    write_draft(ws, "c.txt", "Alice", "roadmap review on Friday", 100)
    done = run("email.list_drafts", "show me the drafts I wrote to Alice", ["Alice Martin"])
    assert done.engine.calls[0].option_ids[-1] == "none"
    log = done.result.action_log
    assert "2 draft(s) for Alice Martin" in log
    assert log.index("c.txt") < log.index("a.txt") and "b.txt" not in log
    assert "roadmap review on Friday" in done.result.new_state


def test_list_drafts_none_lists_them_all(ws, run):
    write_draft(ws, "a.txt", "Alice Martin", "the report is ready", 300)
    write_draft(ws, "b.txt", "Bob Chen", "invoice 1043 is paid", 200)
    done = run("email.list_drafts", "what drafts do I have?", ["none"])
    assert "2 draft(s) for all contacts" in done.result.action_log
    assert "b.txt: to Bob Chen: invoice 1043 is paid" in done.result.new_state


def test_list_drafts_sees_what_compose_wrote(ws, run):
    run("email.compose", "Write to Carla about the logo", ["Carla Rossi"])
    done = run("email.list_drafts", "drafts for Carla", ["Carla Rossi"])
    assert "1 email draft(s) for Carla Rossi" in done.result.new_state
    assert "Write to Carla about the logo" in done.result.new_state


def test_list_drafts_with_none_written_yet(ws, run):
    done = run("email.list_drafts", "any drafts for Bob?", ["Bob Chen"])
    assert done.result.new_state == "No email drafts for Bob Chen."
    assert not any((ws.data_dir / "drafts").iterdir())
