"""Scheduling: consecutive read-only calls run together (at most 10), writes alone, results in call order."""

from __future__ import annotations

import asyncio
import threading

import pytest

from semif_agent.agent import Agent, tool
from semif_agent.agent._execution import READ_CONCURRENCY
from semif_agent.llm import ScriptedProvider, ToolResultMessage

from ._support import calls, collect, of_type


class Gauge:
    """Counts calls in flight and remembers the most at once."""

    def __init__(self) -> None:
        self.now = 0
        self.most = 0

    async def hold(self, seconds: float) -> None:
        self.now += 1
        self.most = max(self.most, self.now)
        try:
            await asyncio.sleep(seconds)
        finally:
            self.now -= 1


def test_read_only_calls_overlap_up_to_the_cap_and_results_keep_call_order():
    gauge = Gauge()

    @tool(read_only=True)
    async def look(n: int) -> str:
        """Look something up."""
        await gauge.hold(0.05 if n % 2 else 0.01)  # odd calls finish last
        return f"r{n}"

    many = READ_CONCURRENCY + 5
    provider = ScriptedProvider([calls(*[("look", {"n": n}, f"c{n}") for n in range(many)]), "done"])
    events = collect(Agent(llm=provider).with_tools([look]).astream("go"))
    assert gauge.most == READ_CONCURRENCY
    returned = [m for m in provider.requests[1].messages if isinstance(m, ToolResultMessage)]
    assert [m.tool_call_id for m in returned] == [f"c{n}" for n in range(many)]  # call order
    assert [m.content for m in returned] == [f"r{n}" for n in range(many)]
    finished = [e.tool_call_id for e in of_type(events, "tool_finished")]
    assert sorted(finished) == sorted(f"c{n}" for n in range(many))
    assert finished != [f"c{n}" for n in range(many)]  # live, in completion order
    started = {e.tool_call_id for e in of_type(events, "tool_started")}
    assert started == set(finished)


def test_writes_run_alone_and_split_read_groups():
    log: list[str] = []
    gauge = Gauge()

    @tool(read_only=True)
    async def read(n: int) -> str:
        """Read."""
        log.append(f"read{n}>")
        await gauge.hold(0.02)
        log.append(f"<read{n}")
        return "r"

    @tool
    async def write(n: int) -> str:
        """Write."""
        log.append(f"write{n}>")
        await gauge.hold(0.01)
        log.append(f"<write{n}")
        return "w"

    provider = ScriptedProvider(
        [
            calls(
                ("read", {"n": 1}),
                ("read", {"n": 2}),
                ("write", {"n": 3}),
                ("read", {"n": 4}),
                ("write", {"n": 5}),
                ("write", {"n": 6}),
            ),
            "done",
        ]
    )
    collect(Agent(llm=provider).with_tools([read, write]).astream("go"))
    assert set(log[:2]) == {"read1>", "read2>"}  # the first two reads overlap
    assert log[4:] == ["write3>", "<write3", "read4>", "<read4", "write5>", "<write5", "write6>", "<write6"]
    assert gauge.most == 2


@pytest.mark.parametrize("via", ["stream", "astream"])
def test_sync_tools_run_in_worker_threads_and_never_block_the_loop(via):
    ready = threading.Event()

    @tool(read_only=True)
    def wait_for_signal() -> str:
        """Blocks its thread until the other tool signals."""
        return "signalled" if ready.wait(3) else "never signalled"

    @tool(read_only=True)
    async def signal() -> str:
        """Runs on the loop, while the sync tool blocks its thread."""
        await asyncio.sleep(0.01)
        ready.set()
        return "sent"

    provider = ScriptedProvider([calls(("wait_for_signal", {}), ("signal", {})), "done"])
    events = collect(getattr(Agent(llm=provider).with_tools([wait_for_signal, signal]), via)("go"))
    assert [f.result for f in of_type(events, "tool_finished")] == ["sent", "signalled"]
    assert threading.current_thread().name not in {"semif-agent-tool"}


def test_sync_tools_see_the_callers_context_variables():
    import contextvars

    from semif_agent.agent import current_usage_pool

    seen = {}

    @tool
    def peek() -> str:
        """Reads the published pool."""
        seen["pool"] = current_usage_pool()
        seen["thread"] = threading.current_thread().name
        return "ok"

    assert isinstance(contextvars.copy_context(), contextvars.Context)
    collect(Agent(llm=ScriptedProvider([calls(("peek", {})), "done"])).with_tools([peek]).stream("go"))
    assert seen["pool"] is not None and seen["thread"] == "semif-agent-tool"


def test_abandoning_the_stream_cancels_tools_still_running():
    cancelled: list[int] = []

    @tool(read_only=True)
    async def sleepy(n: int) -> str:
        """Sleeps a long time."""
        try:
            await asyncio.sleep(10)
        except asyncio.CancelledError:
            cancelled.append(n)
            raise
        return "woke"

    provider = ScriptedProvider([calls(("sleepy", {"n": 1}), ("sleepy", {"n": 2})), "done"])
    agent = Agent(llm=provider).with_tools([sleepy])
    stream = agent.stream("go")
    started = 0
    for event in stream:
        started += event.type == "tool_started"
        if started == 2:
            break
    stream.close()
    assert sorted(cancelled) == [1, 2]
    assert agent.last_turn.error.kind == "cancelled"


def test_a_slow_sync_tool_run_alone_leaves_the_loop_free_every_call():
    """Each call waits for a tick of a task on the loop: it would never come if the call held the loop."""
    ticked = threading.Event()

    @tool
    def wait_for_tick(n: int) -> str:
        """Blocks its thread until the loop ticks."""
        result = "ticked" if ticked.wait(3) else "the loop was held"
        ticked.clear()
        return result

    async def main() -> list:
        async def ticker() -> None:
            while True:
                await asyncio.sleep(0.005)
                ticked.set()

        ticks = asyncio.create_task(ticker())
        provider = ScriptedProvider([calls(("wait_for_tick", {"n": 1})), calls(("wait_for_tick", {"n": 2})), "done"])
        try:
            return [e async for e in Agent(llm=provider).with_tools([wait_for_tick]).astream("go")]
        finally:
            ticks.cancel()

    events = asyncio.run(main())
    assert [f.result for f in of_type(events, "tool_finished")] == ["ticked", "ticked"]


def test_a_quick_sync_tool_hands_back_its_result_and_its_failure():
    @tool
    def check(n: int) -> str:
        """Fails on odd numbers."""
        if n % 2:
            raise ValueError(f"{n} is odd")
        return f"{n} is even"

    script = [calls(("check", {"n": n})) for n in range(4)]
    events = collect(Agent(llm=ScriptedProvider([*script, "done"])).with_tools([check]).stream("go"))
    results = [(f.result, f.is_error) for f in of_type(events, "tool_finished")]
    assert results == [
        ("0 is even", False),
        ("Error: check failed: ValueError: 1 is odd", True),
        ("2 is even", False),
        ("Error: check failed: ValueError: 3 is odd", True),
    ]
