"""Hooks, approval and callbacks around tool calls."""

from __future__ import annotations

import asyncio
import logging

import pytest

from semif_agent.agent import Agent, AgentCallback, ApprovalDecision, ApprovalRequest, HookResult, tool
from semif_agent.llm import ScriptedProvider

from ._support import calls, collect, of_type

runs: list[dict] = []


@tool
def send(to: str, body: str = "") -> str:
    """Send a message."""
    runs.append({"to": to, "body": body})
    return f"sent to {to}"


@tool(requires_approval=True)
def delete(path: str) -> str:
    """Delete a file."""
    runs.append({"deleted": path})
    return f"deleted {path}"


@pytest.fixture(autouse=True)
def _fresh() -> None:
    runs.clear()


def one_call(name: str, arguments: dict, then: str = "ok") -> ScriptedProvider:
    return ScriptedProvider([calls((name, arguments)), then])


def finished(events: list) -> list:
    return of_type(events, "tool_finished")


def test_a_pre_hook_denies_with_a_reason_the_model_sees_and_the_call_never_starts():
    agent = (
        Agent(llm=one_call("send", {"to": "eve"}))
        .with_tools([send])
        .with_hooks(
            pre_tool_use=[
                lambda name, args: HookResult(decision="deny", reason="eve is blocked") if args["to"] == "eve" else None
            ]
        )
    )
    events = collect(agent.stream("go"))
    assert runs == [] and of_type(events, "tool_started") == []
    [done] = finished(events)
    assert (done.result, done.is_error, done.ran) == ("Denied: eve is blocked", True, False)


def test_pre_hooks_rewrite_input_in_order_and_the_call_runs_with_it():
    seen = []

    def redirect(name, args):
        return HookResult(updated_input={**args, "to": "bob"})

    async def observe(name, args):
        seen.append(dict(args))
        return None

    agent = Agent(llm=one_call("send", {"to": "eve"})).with_tools([send]).with_hooks(pre_tool_use=[redirect, observe])
    events = collect(agent.stream("go"))
    assert seen == [{"to": "bob"}] and runs == [{"to": "bob", "body": ""}]
    assert of_type(events, "tool_started")[0].tool_input == {"to": "bob"}


def test_a_rewrite_that_breaks_the_schema_is_refused():
    agent = (
        Agent(llm=one_call("send", {"to": "eve"}))
        .with_tools([send])
        .with_hooks(pre_tool_use=[lambda name, args: HookResult(updated_input={"to": 5})])
    )
    [done] = finished(collect(agent.stream("go")))
    assert runs == [] and "rewritten input for send is invalid" in done.result


def test_a_raising_pre_hook_denies():
    def broken(name, args):
        raise RuntimeError("policy server down")

    agent = Agent(llm=one_call("send", {"to": "bob"})).with_tools([send]).with_hooks(pre_tool_use=[broken])
    [done] = finished(collect(agent.stream("go")))
    assert runs == [] and done.result == "Denied: a pre-tool hook failed (RuntimeError: policy server down)"


def test_post_hooks_replace_the_output_and_a_raising_one_withholds_it():
    agent = (
        Agent(llm=one_call("send", {"to": "bob"}))
        .with_tools([send])
        .with_hooks(
            post_tool_use=[lambda name, args, out: HookResult(updated_output=out.upper()), lambda name, args, out: None]
        )
    )
    assert finished(collect(agent.stream("go")))[0].result == "SENT TO BOB"

    def broken(name, args, out):
        raise ValueError("scanner crashed")

    agent = Agent(llm=one_call("send", {"to": "bob"})).with_tools([send]).with_hooks(post_tool_use=[broken])
    [done] = finished(collect(agent.stream("go")))
    assert done.is_error and done.ran and "sent to bob" not in done.result and "post-tool hook failed" in done.result


def test_approval_gated_tools_fail_closed_without_a_callback():
    events = collect(Agent(llm=one_call("delete", {"path": "a.txt"})).with_tools([delete]).stream("go"))
    assert runs == [] and "needs approval and no approval callback is set" in finished(events)[0].result


@pytest.mark.parametrize("asynchronous", [False, True])
def test_the_approval_callback_sync_or_async_approves_denies_and_rewrites(asynchronous):
    asked: list[ApprovalRequest] = []

    def decide(request: ApprovalRequest) -> ApprovalDecision:
        asked.append(request)
        if request.tool_input["path"] == "keep.txt":
            return ApprovalDecision(approved=False, reason="that one stays")
        return ApprovalDecision(approved=True, updated_input={"path": "tmp/" + request.tool_input["path"]})

    async def decide_async(request):
        await asyncio.sleep(0)
        return decide(request)

    provider = ScriptedProvider([calls(("delete", {"path": "keep.txt"}), ("delete", {"path": "old.txt"})), "ok"])
    agent = Agent(llm=provider).with_tools([delete]).with_approval(decide_async if asynchronous else decide)
    events = collect(agent.stream("go"))
    assert [r.name for r in asked] == ["delete", "delete"] and asked[0].tool_call_id == "call_delete_0"
    assert runs == [{"deleted": "tmp/old.txt"}]
    assert [f.result for f in finished(events)] == ["Denied: that one stays", "deleted tmp/old.txt"]
    assert [s.tool_input for s in of_type(events, "tool_started")] == [{"path": "tmp/old.txt"}]


def test_a_hook_answering_ask_goes_to_the_approval_callback_and_a_raising_callback_denies():
    def ask(name, args):
        return HookResult(decision="ask")

    def broken(request):
        raise RuntimeError("no UI")

    agent = (
        Agent(llm=one_call("send", {"to": "bob"}))
        .with_tools([send])
        .with_hooks(pre_tool_use=[ask])
        .with_approval(broken)
    )
    assert "the approval callback failed (RuntimeError: no UI)" in finished(collect(agent.stream("go")))[0].result
    agent = (
        Agent(llm=one_call("send", {"to": "bob"}))
        .with_tools([send])
        .with_hooks(pre_tool_use=[ask])
        .with_approval(lambda r: True)
    )
    assert finished(collect(agent.stream("go")))[0].result == "sent to bob"


def test_parallel_read_only_calls_ask_for_approval_concurrently():
    waiting: list[str] = []
    both_asked = asyncio.Event()

    @tool(read_only=True, requires_approval=True)
    def peek(key: str) -> str:
        """Peek."""
        return key

    async def approve(request):
        waiting.append(request.tool_input["key"])
        if len(waiting) == 2:
            both_asked.set()
        await asyncio.wait_for(both_asked.wait(), 2)  # would time out if asked one at a time
        return ApprovalDecision(approved=True)

    provider = ScriptedProvider([calls(("peek", {"key": "a"}), ("peek", {"key": "b"})), "ok"])
    events = collect(Agent(llm=provider).with_tools([peek]).with_approval(approve).astream("go"))
    assert [f.result for f in finished(events)] in (["a", "b"], ["b", "a"])


def test_callbacks_observe_the_loop_and_their_failures_are_swallowed(caplog):
    class Recorder(AgentCallback):
        def __init__(self):
            self.seen = []

        def on_round_start(self, index):
            self.seen.append(("round_start", index))

        def on_round_end(self, index):
            self.seen.append(("round_end", index))

        def on_tool_start(self, name, tool_input):
            self.seen.append(("tool_start", name, tool_input))

        def on_tool_end(self, name, tool_input, result):
            self.seen.append(("tool_end", name, result))

        def on_tool_error(self, name, tool_input, error):
            self.seen.append(("tool_error", name, type(error).__name__))

    class Broken:
        def on_round_start(self, index):
            raise RuntimeError("observer bug")

    @tool
    def fail() -> str:
        """Fails."""
        raise KeyError("x")

    recorder = Recorder()
    provider = ScriptedProvider([calls(("send", {"to": "bob"}), ("fail", {})), "ok"])
    agent = Agent(llm=provider).with_tools([send, fail]).with_callbacks([Broken(), recorder])
    with caplog.at_level(logging.ERROR, logger="semif_agent.agent"):
        events = collect(agent.stream("go"))
    assert events[-1].diagnostics.stopped_by == "stop"
    assert recorder.seen == [
        ("round_start", 0),
        ("tool_start", "send", {"to": "bob"}),
        ("tool_end", "send", "sent to bob"),
        ("tool_start", "fail", {}),
        ("tool_error", "fail", "KeyError"),
        ("round_end", 0),
        ("round_start", 1),
        ("round_end", 1),
    ]
    assert "observer bug" in caplog.text


def test_a_sync_approval_callback_waits_off_the_loop():
    import threading

    answered = threading.Event()

    @tool(read_only=True)
    async def ping() -> str:
        """Answers at once, while the approval waits."""
        answered.set()
        return "pong"

    @tool(read_only=True, requires_approval=True)
    def guarded() -> str:
        """Needs a yes."""
        return "done"

    def person(request):  # blocks until the other call has run: only possible off the loop
        return ApprovalDecision(approved=answered.wait(3))

    provider = ScriptedProvider([calls(("guarded", {}), ("ping", {})), "ok"])
    events = collect(Agent(llm=provider).with_tools([guarded, ping]).with_approval(person).astream("go"))
    assert sorted(f.result for f in finished(events)) == ["done", "pong"]
