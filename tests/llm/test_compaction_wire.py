"""Anthropic's compaction blocks go back verbatim within the turn, over the wire, streamed or whole."""

from __future__ import annotations

import json

from support.wire_server import WireReply

from semif_agent.agent import Agent, tool
from semif_agent.llm import UserMessage
from semif_agent.llm.messages import message_to_dict, to_messages

COMPACT = {"edits": [{"type": "compact_20260112", "trigger": {"type": "input_tokens", "value": 50000}}]}
BLOCK = {
    "type": "compaction",
    "signature": "c2lnbmF0dXJlLTE=",
    "tool_changes": [],
    "content": "Summary: the user is reading the report page by page; pages 1 to 40 held nothing new.",
    "encrypted_content": "RW5jcnlwdGVkIHN0YXRlIG9mIHRoZSBjb21wYWN0ZWQgcmFuZ2U=",
}
"""A compaction block as the API returns it (the fields the wire server streams as a delta come last)."""


@tool(read_only=True)
def look(page: int) -> str:
    """Read one page.

    Args:
        page: Which page.
    """
    return f"page {page}: nothing new"


def test_a_streamed_turn_sends_the_compaction_block_back_unchanged(wire, provider_for):
    wire.queue(
        WireReply.tool_call("look", {"page": 41}, text="Reading on.", compaction=BLOCK),
        WireReply(text="Page 41 held nothing new either."),
    )
    agent = Agent(llm=provider_for("anthropic")).with_tools([look]).with_context_management(COMPACT)
    assert "".join(agent.chat("Read the report.")) == "Reading on.Page 41 held nothing new either."
    first, second = wire.posts()
    assert first.stream and first.body["context_management"] == COMPACT
    for post in (first, second):
        assert post.headers["anthropic-beta"] == "context-management-2025-06-27,compact-2026-01-12"
    assistant = second.body["messages"][1]
    assert assistant["role"] == "assistant"
    assert json.dumps(assistant["content"][0]) == json.dumps(BLOCK)  # the same fields, values and order
    assert [block["type"] for block in assistant["content"]] == ["compaction", "text", "tool_use"]


def test_a_whole_answer_keeps_its_compaction_block_for_the_next_request(wire, provider_for):
    provider = provider_for("anthropic")
    wire.queue(WireReply(text="Noted.", compaction=BLOCK), WireReply(text="Go on."))
    answer = provider.invoke("Read the report.", context_management=COMPACT)
    assert answer.text == "Noted." and answer.compaction_blocks == (BLOCK,)
    message = answer.to_message()
    assert to_messages([message_to_dict(message)]) == [message]  # a saved transcript keeps the block
    provider.invoke([UserMessage(content="Read the report."), message, UserMessage(content="And now?")])
    sent = wire.posts()[-1].body["messages"][1]["content"]
    assert json.dumps(sent[0]) == json.dumps(BLOCK) and sent[1] == {"type": "text", "text": "Noted."}


def test_an_answer_without_compaction_sends_no_block(wire, provider_for):
    wire.queue(WireReply(text="Short."), WireReply(text="Still short."))
    provider = provider_for("anthropic")
    answer = provider.invoke("Hi", context_management=COMPACT)
    assert answer.compaction_blocks == ()
    provider.invoke([UserMessage(content="Hi"), answer.to_message(), UserMessage(content="Again")])
    assert wire.posts()[-1].body["messages"][1]["content"] == [{"type": "text", "text": "Short."}]
