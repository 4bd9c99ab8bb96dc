"""A request that says not to do something is read as such, and only then: :mod:`semif_agent.loop.negation`."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from semif_agent.loop.evidence import negation_of, read_request
from semif_agent.tree.manifests import SkillManifest

TODOS_ADD = SkillManifest("todos.add", "todos", "Add a task to my to-do list.", examples=("Add buy milk to my list",))
TIMER_STOP = SkillManifest("timer.stop", "timer", "Stop the running timer.", examples=("Stop the timer",))

NEGATED = [
    "Don't add buy milk to my todo list",
    "Do not email Alice about the quarterly report",
    "DONT add eggs to my list",
    "Don’t add eggs to my list",
    "Please just don't schedule the dentist",
    "Never email Bob about the launch again",
    "No need to email Alice about the report",
    "There's no need to add milk",
    "You shouldn't email Alice about this",
    "you dont need to add milk",
    "I don't want you to email Alice",
    "I'd rather you didn't email Alice",
    "Let's not add that to my todo list",
    "Make sure not to email Alice",
    "Under no circumstances email Alice",
    "Do NOT under any circumstances email Alice",
    "Stop sending Alice reminders",
    "Skip adding buy milk",
    "Hold off on emailing Alice",
    "Refrain from adding milk to the list",
    "Forget about emailing Alice",
    "Add milk to my list. Actually, don't.",
    "Email Alice about the report - never mind",
    "Add milk to my todo list, no wait, forget it",
    "Email Alice and don't cc Bob",
    "Important: do not email Alice",
    "I changed my mind, don't email Alice",
    "No, don't add it",
    "Do not, under any circumstances, email Alice",
    "I'd prefer if you didn't email Alice",
    "It's not necessary to email Alice",
    "Could you not email Alice?",
    "You're not allowed to email Alice",
    "No emails to Alice please",
    "I told you not to email Alice",
    "Do me a favour and don't email Alice",
    "Stop! Don't add that",
    "Nah, don't bother adding milk",
    # adverbs between the words of a negation, and a later clause that takes the command back by a pro-form
    "Definitely don't add buy milk to my todo list",
    "Emphatically don't add buy milk to my todo list",
    "Add buy milk to my todo list - definitely don't do it",
    "Add buy milk to my todo list, but you really shouldn't",
    "You really, really shouldn't add milk",
    "Add buy milk to my todo list. I'd really rather you didn't",
    "Add buy milk to my todo list. Actually I really don't want that",
    "Add milk. I'd very much prefer you didn't",
    "Add milk; honestly, please just don't",
    "Add milk, or rather don't",
    "Add milk. We'd better not",
    "Add milk. I don't think so",
    "Add milk. That's not what I want",
    "Add milk. That's something I don't want",
    "Add milk, I never asked for that",
    "Add milk. It isn't needed",
    "Add milk. Just kidding",
    "Add milk, maybe not",
    "Add milk. Pretty please don't",
    "Add milk. That won't be necessary",
    "Add milk. Not a good idea",
    "Add buy milk to my todo list. Cancel that.",
    "Add buy milk to my todo list. Ignore my last message",
    "Do absolutely nothing with: add buy milk to my todo list",
    # what follows a colon after words that are no command is read; a time's colon is no colon
    "I told you twice: don't add milk",
    "Add milk to my list, I told you: don't",
    "Lunch with Emma at 12:30, don't add it",
]

ORDINARY = [
    "Add 'don't forget the keys' to my todo list",
    "Add ‘don’t forget the keys’ to my todo list",
    'Add "do not disturb" to my notes',
    "Add don't forget the keys to my todo list",
    "Add to my todo list: never skip breakfast",
    "Remind me never to skip breakfast",  # a reminder whose text says never: the command is to remind
    "Remind me not to email Bob before Friday",
    "Don't forget to add milk to my todo list",
    "Never forget to water the plants",
    "Don't hesitate to email Alice that the report is ready",
    "Email Alice that we don't need the report",
    "Note that I can't come on Friday",
    "Have I got any emails I never sent?",
    "Schedule a meeting with Bob, no rush",
    "Add skipping rope to my shopping list",
    "Email Alice that the quarterly report is ready",
    "Send my manager a note asking for Friday off",
    "Add eggs, no milk",
    "Email Alice but not Bob",
    "Add buy milk, not urgent",
    "Email Alice that there is no need to come",
    "Add a todo to stop smoking",
    "Write a note on how to avoid burnout",
    "Add milk, I'd rather not forget it",  # a negation of not doing commands, whatever its form
    "Add milk - I really don't want to forget it",
    "Don't let me forget to add milk",
    "Add milk to the list, you really should",
    "Add milk, which I need",
    "Add eggs, I don't think we have any",
    "Email Alice. She shouldn't come",
    "Email Sally that Kelly really can't come",  # a name in -ly is no adverb
    "Add milk, Sally doesn't want it",
    "Tell Bob, politely, that I can't make it",
    "Send the report to Alice, definitely not Bob",
    "Note: definitely never skip leg day",
    "Remind me: absolutely no sugar after 8",
    "Message for Bob: don't wait for me",
    "Schedule lunch with Emily on Friday, not Thursday",
    "Cancel that",  # undoing "that" takes back only a command before it
    "Email Bob about the meeting and cancel it",
    "Book a table for 8, cancel the previous one",
    "Add a task: do nothing on Sunday",
    "Skip to the next song on Spotify",  # a move to what follows, whatever skill plays it
    "skip to chapter 3 of the audiobook",
]


def request_texts() -> list[str]:
    """Every request text of the test fixtures and the bench's request set: ordinary requests, none negated."""
    root = Path(__file__).resolve().parents[2]
    files = [*sorted((root / "tests" / "fixtures").glob("*.jsonl")), root / "bench" / "data" / "skill_requests.jsonl"]
    return [json.loads(line)["text"] for path in files for line in path.read_text().splitlines() if line.strip()]


@pytest.mark.parametrize("text", NEGATED)
def test_a_command_that_says_not_to_act_is_read_as_negated(text: str) -> None:
    assert negation_of(read_request(text), TODOS_ADD) is not None


@pytest.mark.parametrize("text", ORDINARY)
def test_negative_words_that_do_not_negate_the_command_are_not_read_as_negation(text: str) -> None:
    assert read_request(text).negation is None


def test_no_request_of_the_fixtures_and_the_bench_reads_as_negated() -> None:
    texts = request_texts()
    assert len(texts) > 250
    assert [(text, str(read_request(text).negation)) for text in texts if read_request(text).negation] == []


def test_a_verb_of_not_doing_negates_unless_it_is_what_the_skill_does() -> None:
    reading = read_request("Stop the timer")
    assert negation_of(reading, TIMER_STOP) is None
    assert negation_of(reading, TODOS_ADD) is not None
    assert negation_of(read_request("Stop adding reminders"), TIMER_STOP) is not None  # a gerund: always negated
    assert negation_of(read_request("Stop! Don't add that"), TIMER_STOP) is not None  # an outright one wins
