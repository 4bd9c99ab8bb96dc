"""email.compose and email.list_drafts on a fresh starter workspace."""

from __future__ import annotations

import os
import time

import pytest


def draft_of(ws, done):
    return (ws.data_dir / "drafts" / f"{done.request.id}.txt").read_text(encoding="utf-8")


def test_compose_writes_an_addressed_draft_with_a_subject_and_a_message(ws, run):
    done = run("email.compose", "Email Grace that I accept the offer")
    assert done.engine.calls == [], "Grace is named: nothing to decide"
    draft = ws.data_dir / "drafts" / f"{done.request.id}.txt"
    assert draft.read_text() == (
        "To: Grace Kim <grace.kim@example.com>\nSubject: Accepting the offer\n\n"
        "Hi Grace,\n\nI accept the offer.\n\nBest regards,\n"
    )
    assert str(draft) in done.result.action_log
    assert done.result.new_state == f"Draft written to {draft.name} for Grace Kim: Accepting the offer."


@pytest.mark.parametrize(
    ("text", "to", "subject", "message"),
    [
        (
            "Tell the landlord that the kitchen tap is leaking",
            "Farid Haddad <farid.haddad@example.com>",
            "The kitchen tap is leaking",
            "The kitchen tap is leaking.",
        ),
        (
            "Email my sister that I'll be late for dinner on Sunday",
            "Emma Laurent <emma.laurent@example.com>",
            "I'll be late for dinner on Sunday",
            "I'll be late for dinner on Sunday.",
        ),
        (
            "Send my manager a note asking for Friday off",
            "David Okafor <david.okafor@example.com>",
            "Friday off",
            "I would like to ask for Friday off.",
        ),
        (
            "Write to Bob about the hosting invoice",
            "Bob Chen <bob.chen@example.com>",
            "The hosting invoice",
            "I'm writing to you about the hosting invoice.",
        ),
        (
            "Ask Carla to send me the logo files",
            "Carla Rossi <carla.rossi@example.com>",
            "Send me the logo files",
            "Could you send me the logo files?",
        ),
        (
            "Let Alice know the roadmap review moves to Thursday",
            "Alice Martin <alice.martin@example.com>",
            "The roadmap review moves to Thursday",
            "The roadmap review moves to Thursday.",
        ),
        (
            "Drop Bob a line asking whether the October invoice was paid",
            "Bob Chen <bob.chen@example.com>",
            "Whether the October invoice was paid",
            "Could you tell me whether the October invoice was paid?",
        ),
        (
            "Reply to the recruiter that Tuesday works",
            "Grace Kim <grace.kim@example.com>",
            "Tuesday works",
            "Tuesday works.",
        ),
        (
            "Send Emma a happy birthday message",
            "Emma Laurent <emma.laurent@example.com>",
            "Happy birthday",
            "Happy birthday!",
        ),
        (
            "Email Alice and Bob about the team offsite",
            "Alice Martin <alice.martin@example.com>, Bob Chen <bob.chen@example.com>",
            "The team offsite",
            "I'm writing to you about the team offsite.",
        ),
    ],
)
def test_compose_finds_the_recipient_by_name_or_role_and_makes_the_message(ws, run, text, to, subject, message):
    done = run("email.compose", text)
    assert done.engine.calls == []
    head, _, body = draft_of(ws, done).partition("\n\n")
    assert head == f"To: {to}\nSubject: {subject}"
    assert body.split("\n\n")[1] == message
    assert text not in body


def test_compose_asks_the_engine_when_the_request_names_nobody(ws, run):
    done = run("email.compose", "Email the person who handles invoices that the payment went out", ["Bob Chen"])
    decision = done.engine.calls[0]
    assert decision.option_ids[:2] == ["Alice Martin", "Bob Chen"] and decision.option_ids[-1] == "none"
    assert len(decision.option_ids) == 8
    assert "(landlord)" in decision.options[5].description, "the roles are part of each option"
    assert draft_of(ws, done).startswith("To: Bob Chen <bob.chen@example.com>\nSubject: The payment went out\n")


def test_compose_chooses_among_the_contacts_a_shared_role_fits(ws, run):
    done = run("email.compose", "Email my colleague that lunch is at noon", ["Alice Martin"])
    assert done.engine.calls[0].option_ids == ["Alice Martin", "Bob Chen", "none"]
    assert draft_of(ws, done).startswith("To: Alice Martin <alice.martin@example.com>\n")


def test_compose_none_hands_the_request_back(ws, run):
    done = run("email.compose", "Email my accountant about the taxes", ["none"])
    assert done.result.new_state == done.request.text
    assert "no draft written" in done.result.action_log
    assert not any((ws.data_dir / "drafts").iterdir())


@pytest.mark.parametrize(
    ("text", "why"),
    [
        ("Email Zoe Park about the conference", "Zoe Park is not in the contacts"),
        ("Where is invoice 1043?", "the request names no recipient and nothing to say"),
    ],
)
def test_compose_hands_back_a_stranger_or_nothing_to_say_without_asking(ws, run, text, why):
    done = run("email.compose", text)
    assert done.engine.calls == []
    assert done.result.new_state == text and why in done.result.action_log
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
    run("email.compose", "Write to Carla about the logo")
    run("email.compose", "Email Bob that the invoice is paid")
    done = run("email.list_drafts", "drafts for Carla", ["Carla Rossi"])
    assert "1 email draft(s) for Carla Rossi:" in done.result.new_state
    assert "to Carla Rossi <carla.rossi@example.com>: The logo" in done.result.new_state
    assert "Bob" not in done.result.new_state


def test_list_drafts_with_none_written_yet(ws, run):
    done = run("email.list_drafts", "any drafts for Bob?", ["Bob Chen"])
    assert done.result.new_state == "No email drafts for Bob Chen."
    assert not any((ws.data_dir / "drafts").iterdir())


# Messages said right after the recipient, with no "that" or "about" between: the message is the draft's body.
# Each row: the request as a person says it, the contact it goes to, the subject, the message.
SAID_AFTER_THE_RECIPIENT = [
    ("Tell my boss I'm out sick today", "David", "I'm out sick today", "I'm out sick today."),
    ("Tell Alice I'm running late", "Alice", "I'm running late", "I'm running late."),
    ("Tell Farid the rent is paid", "Farid", "The rent is paid", "The rent is paid."),
    ("Message my sister happy birthday", "Emma", "Happy birthday", "Happy birthday."),
    (
        "Reach out to Grace and say thanks for the interview",
        "Grace",
        "Thanks for the interview",
        "Thanks for the interview.",
    ),
    ("Text Emma I'm on my way", "Emma", "I'm on my way", "I'm on my way."),
    ("Ping Bob the invoice went out", "Bob", "The invoice went out", "The invoice went out."),
    ("Let the landlord know the heating is broken", "Farid", "The heating is broken", "The heating is broken."),
    (
        "Remind Carla that the mockups are due Friday",
        "Carla",
        "The mockups are due Friday",
        "The mockups are due Friday.",
    ),
    (
        "Remind David to review my pull request",
        "David",
        "Review my pull request",
        "Just a reminder to review my pull request.",
    ),
    ("Drop Bob a line: the budget is approved", "Bob", "The budget is approved", "The budget is approved."),
    ("Drop my manager a quick note I'll be in at ten", "David", "I'll be in at ten", "I'll be in at ten."),
    ("Shoot Alice an email saying the report is ready", "Alice", "The report is ready", "The report is ready."),
    ("Give Bob a heads up the server is down", "Bob", "The server is down", "The server is down."),
    ("Get in touch with the recruiter and tell her I accept", "Grace", "Accepting", "I accept."),
    ("Please tell Carla the logo looks great", "Carla", "The logo looks great", "The logo looks great."),
    ("Could you tell my sister I'll call her tonight", "Emma", "I'll call her tonight", "I'll call her tonight."),
    ("Email Grace I accept the offer", "Grace", "Accepting the offer", "I accept the offer."),
    (
        "Tell Alice and Bob the offsite is cancelled",
        "Alice and Bob",
        "The offsite is cancelled",
        "The offsite is cancelled.",
    ),
    ("Hit up Bob, the invoice is overdue", "Bob", "The invoice is overdue", "The invoice is overdue."),
    (
        "Follow up with the recruiter about the start date",
        "Grace",
        "The start date",
        "I'm writing to you about the start date.",
    ),
    ("Send my manager a request asking for Friday off", "David", "Friday off", "I would like to ask for Friday off."),
    # negative contractions are kept as written (an earlier report: "I can't make the party" came out as "Could you the party?")
    ("Tell Bob I can't make the party", "Bob", "I can't make the party", "I can't make the party."),
    ("Tell David I won't be in tomorrow", "David", "I won't be in tomorrow", "I won't be in tomorrow."),
    (
        "Let Alice know I don't have the slides yet",
        "Alice",
        "I don't have the slides yet",
        "I don't have the slides yet.",
    ),
    ("Email Bob that I didn't get the invoice", "Bob", "I didn't get the invoice", "I didn't get the invoice."),
    ("Tell my sister we aren't coming on Sunday", "Emma", "We aren't coming on Sunday", "We aren't coming on Sunday."),
]


@pytest.mark.parametrize(("text", "greeting", "subject", "message"), SAID_AFTER_THE_RECIPIENT)
def test_compose_keeps_a_message_said_right_after_the_recipient(ws, run, text, greeting, subject, message):
    done = run("email.compose", text)
    assert done.engine.calls == [], "the recipient is named: nothing to decide"
    head, _, body = draft_of(ws, done).partition("\n\n")
    assert head.split("\n")[1] == f"Subject: {subject}"
    assert body == f"Hi {greeting},\n\n{message}\n\nBest regards,\n"
