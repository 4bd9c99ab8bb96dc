"""Per-round overhead of our agent loop against astro-anchor 0.2.0's, both driven by a scripted model.

    python bench/agent_loop.py [--rounds 10,100,400] [--tools 300] [--repeat 5] [--flavour async|sync|both]

Each agent has ``--tools`` registered tools. One turn runs N rounds that
each call one trivial tool (a different argument every round, so neither
loop's stuck detection trips), then one round that answers in text; the
figure is the turn's wall time over its N + 1 rounds, the median of
``--repeat`` turns, each on a fresh agent (registering the tools is not
timed). The three sides take turns (``bench/_fair.py``: ours, ours bare,
anchor, ours, ..., after a warm-up turn each), so a change in the machine's
load falls on all of them. Both models are in-process fakes that answer at once and report
token usage, as real providers do. Ours is ``ScriptedProvider`` behind what
a configured provider has: the model-call log (to a temporary file),
retries, and a fallback (``LoggedProvider(FallbackProvider([RetryingProvider(...),
...]))``). The agent writes the log's rows together, by the end of each turn
(64 at a time in a long one), so a turn's time includes writing all of them;
the per-round medians below leave out the rounds that wrote. Theirs is a minimal object satisfying their ``LLMProvider``
protocol, in a child process running in its own virtual environment under
``.bench/`` (made on first use: ``pip install --no-deps astro-anchor==0.2.0``
plus pydantic 2.14.4 and PyYAML 6.0.4, all it imports on this path; the
versions are checked on every run), kept running for the whole bench and
asked for one turn at a time. Both run the async
path (``astream``). "ours, bare" is our loop behind a provider object that
only answers (the seam's ``request_stream`` and nothing else), as anchor's is.

Two tool flavours are measured. ``async``: an ``async def`` tool, which
both loops run on the event loop. ``sync``: a plain ``def`` tool, which we
run in a worker thread (so a slow tool never blocks the loop and
``tool_timeout`` holds; run alone, it is waited for up to half a millisecond
and its result handed over directly, then awaited) and anchor runs inline on
the loop, blocking it.

What to look for: a round should cost the same late in a long turn as early
(no copying, re-validating or re-logging the whole history each round). The
"round cost" lines time each round of the longest turn (from one round's
start to the next's) and give the median of rounds 1-10 and of its last ten
rounds: the cost of a round at 10 and at N rounds of history, the per-turn
set-up left out. The same lines time anchor's rounds (from its
``round_started`` events), and "all" is the median over every round but the
first: on a busy machine it is the figure least moved by other work, so its
ratio is the one to compare between runs. The load average is printed at the
start and at the end.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import statistics
import tempfile
import time
from pathlib import Path

from _fair import Load, PeerProcess, interleave, peer_venv

ROOT = Path(__file__).resolve().parents[1]

PEER = r'''
import asyncio, json, statistics, sys, time
from anchor import Agent, tool
from anchor.llm.models import LLMResponse, StopReason, StreamChunk, ToolCallDelta, Usage

n_tools = int(sys.argv[1])


class ScriptedLLM:
    """Their LLMProvider protocol: a tool call per round for `rounds` rounds, then text."""

    def __init__(self, rounds):
        self.rounds = rounds
        self.calls = 0

    @property
    def model_id(self):
        return "bench/scripted"

    @property
    def provider_name(self):
        return "bench"

    def _chunks(self):
        k = self.calls
        self.calls += 1
        usage = Usage(prompt_tokens=100, completion_tokens=10, total_tokens=110)
        if k < self.rounds:
            delta = ToolCallDelta(index=0, id=f"c{k}", name=f"tool_{k % N_TOOLS}", arguments_fragment=json.dumps({"n": k}))
            return [StreamChunk(tool_call_delta=delta), StreamChunk(usage=usage, stop_reason=StopReason.TOOL_USE)]
        return [StreamChunk(content="done"), StreamChunk(usage=usage, stop_reason=StopReason.STOP)]

    def invoke(self, messages, *, tools=None, max_tokens=None, temperature=None, stop=None, **kwargs):
        raise NotImplementedError

    def stream(self, messages, *, tools=None, max_tokens=None, temperature=None, stop=None, **kwargs):
        yield from self._chunks()

    async def ainvoke(self, messages, *, tools=None, max_tokens=None, temperature=None, stop=None, **kwargs):
        raise NotImplementedError

    async def astream(self, messages, *, tools=None, max_tokens=None, temperature=None, stop=None, **kwargs):
        for chunk in self._chunks():
            yield chunk


N_TOOLS = n_tools


def make_tool(i, flavour):
    if flavour == "async":
        async def fn(n: int) -> str:
            return "ok"
    else:
        def fn(n: int) -> str:
            return "ok"
    fn.__name__ = f"tool_{i}"
    fn.__doc__ = f"Tool number {i}: returns ok."
    return tool(fn)


TOOLS = {flavour: [make_tool(i, flavour) for i in range(n_tools)] for flavour in ("async", "sync")}


async def turn(agent, starts):
    last = None
    async for last in agent.astream("go"):
        if last.type == "round_started":
            starts.append(time.perf_counter())
    starts.append(time.perf_counter())
    return last.type, last.text, len(last.diagnostics.rounds)  # small: asyncio formats the result's repr


def handle(ask):
    rounds = ask["rounds"]
    agent = Agent(llm=ScriptedLLM(rounds), max_rounds=rounds + 2).with_tools(TOOLS[ask["flavour"]])
    starts = []
    began = time.perf_counter()
    outcome = asyncio.run(turn(agent, starts))
    seconds = time.perf_counter() - began
    assert outcome == ("turn_finished", "done", rounds + 1), outcome
    return {"seconds": seconds, "gaps": [b - a for a, b in zip(starts, starts[1:])]}


serve(handle)
'''


PEER_PINS = {"astro-anchor": "0.2.0", "pydantic": "2.14.4", "PyYAML": "6.0.4"}


def peer_turns(tools: int) -> PeerProcess:
    """Anchor in a child process (its own virtual environment, pinned): each request runs one turn."""
    python = peer_venv("venv-anchor", PEER_PINS, no_deps=("astro-anchor",))
    return PeerProcess(python, "import sys\n" + PEER, str(tools))


def our_turns(tools: int, flavour: str, log_path: Path, provider: str = "stacked"):
    """Ours: a function that runs one turn of ``count`` rounds on a fresh agent and returns
    ``{"seconds": the turn's wall time, "gaps": each round's time}``, as the peer's process answers.

    ``provider``: ``"stacked"`` (the scripted model behind the call log, retries and a fallback),
    ``"scripted"`` (the scripted model alone) or ``"bare"`` (an object that only answers).
    """
    from semif_agent.agent import Agent, tool
    from semif_agent.llm import Response, ScriptedProvider, ScriptedReply, StopChunk, ToolCall, Usage

    usage = Usage(input_tokens=100, output_tokens=10, cost_usd=0.0)

    def make_tool(i: int):
        if flavour == "async":

            async def fn(n: int) -> str:
                return "ok"
        else:

            def fn(n: int) -> str:  # type: ignore[misc]  # a tool whose body is the same in both loops
                return "ok"

        fn.__name__ = f"tool_{i}"
        fn.__doc__ = f"Tool number {i}: returns ok."
        return tool(fn)

    registered = [make_tool(i) for i in range(tools)]

    def scripted(count: int) -> ScriptedProvider:
        made = iter(range(count + 1))

        def reply(request):
            k = next(made)
            if k < count:
                return ScriptedReply(
                    tool_calls=[{"id": f"c{k}", "name": f"tool_{k % tools}", "arguments": {"n": k}}], usage=usage
                )
            return ScriptedReply(text="done", usage=usage)

        return ScriptedProvider(fn=reply, model="bench", pricing={"scripted/bench": {"input": 0.0, "output": 0.0}})

    def stacked(count: int, log_path: Path):
        """The scripted model behind what a configured provider has: the call log, retries, a fallback.

        All turns log to the same file, as a workspace's calls do.
        """
        from semif_agent.llm import FallbackProvider, RetryingProvider
        from semif_agent.llm.calllog import LoggedProvider
        from semif_agent.records import DecisionLog

        backup = ScriptedProvider(default="unused", model="backup")
        chain = FallbackProvider([RetryingProvider(scripted(count)), RetryingProvider(backup)])
        return LoggedProvider(chain, DecisionLog(log_path), context={"purpose": "bench"})

    class Bare:
        """The seam's request_stream and nothing else, like the fake anchor gets: no request checks, no assembler."""

        provider_name, model_id = "bench", "bare"

        def __init__(self, count: int) -> None:
            self.count, self.k = count, 0

        async def request(self, request):
            raise NotImplementedError

        async def request_stream(self, request):
            k, self.k = self.k, self.k + 1
            if k < self.count:
                call = ToolCall(
                    id=f"c{k}", name=f"tool_{k % tools}", arguments={"n": k}, raw_arguments=json.dumps({"n": k})
                )
                response = Response(tool_calls=(call,), usage=usage, stop_reason="tool_use")
            else:
                response = Response(text="done", usage=usage)
            yield StopChunk(stop_reason=response.stop_reason, response=response)

    async def turn(agent, starts: list[float]):
        last = None
        async for last in agent.astream("go"):
            if last.type == "round_started":
                starts.append(time.perf_counter())
        starts.append(time.perf_counter())
        return last.type, last.text, len(last.diagnostics.rounds)  # small: asyncio formats the result's repr

    def run(count: int) -> dict:
        if provider == "stacked":
            model = stacked(count, log_path)
        else:
            model = scripted(count) if provider == "scripted" else Bare(count)
        agent = Agent(llm=model, max_rounds=count + 2).with_tools(registered)
        starts: list[float] = []
        began = time.perf_counter()
        outcome = asyncio.run(turn(agent, starts))
        seconds = time.perf_counter() - began
        assert outcome == ("turn_finished", "done", count + 1), outcome
        return {"seconds": seconds, "gaps": [b - a for a, b in zip(starts, starts[1:], strict=False)]}

    return run


def round_cost(turns: list[list[float]], first: int, last: int) -> float:
    """The median time of rounds ``first`` to ``last`` (inclusive, from 0) over all ``turns``."""
    return statistics.median(t for rounds in turns for t in rounds[first : last + 1])


def marginal(figures: dict[int, float]) -> float:
    """Seconds per extra round between the two largest counts (fixed per-turn costs cancel out), from the
    median per-round times."""
    low, high = sorted(figures)[-2:]
    return (figures[high] * (high + 1) - figures[low] * (low + 1)) / (high - low)


def measure(rounds: list[int], tools: int, repeat: int, flavour: str, peer: PeerProcess, log_path: Path):
    """Per side, the median per-round time by round count, and each round's time in every turn of the longest count;
    the three sides take turns (ours, ours bare, anchor, ours, ...), one turn each a round."""
    sides = {
        "ours": our_turns(tools, flavour, log_path),
        "bare": our_turns(tools, flavour, log_path, provider="bare"),
        "anchor": lambda count: peer.ask({"rounds": count, "flavour": flavour}),
    }
    per_round: dict[str, dict[int, float]] = {name: {} for name in sides}
    longest: dict[str, list[list[float]]] = {name: [] for name in sides}
    for count in rounds:

        def timed(name: str, count: int = count) -> float:
            figures = sides[name](count)
            if count == rounds[-1]:
                longest[name].append(figures["gaps"])
            return figures["seconds"] / (count + 1) * 1000

        spreads = interleave({name: lambda name=name: timed(name) for name in sides}, repeat)
        for name, spread in spreads.items():
            per_round[name][count] = spread.median / 1000
        if count == rounds[-1]:
            for name in sides:
                del longest[name][0]  # the warm-up round's turn
    return per_round, longest


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--rounds", default="10,100,400", help="comma-separated round counts")
    parser.add_argument("--tools", type=int, default=300, help="tools registered on each agent")
    parser.add_argument("--repeat", type=int, default=7, help="turns per figure and side (interleaved; the median)")
    parser.add_argument("--flavour", choices=("async", "sync", "both"), default="both", help="the trivial tool's kind")
    args = parser.parse_args()
    rounds = sorted(int(r) for r in args.rounds.split(","))
    flavours = ("async", "sync") if args.flavour == "both" else (args.flavour,)
    load = Load()
    print(
        f"per-round time, {args.tools} tools registered, one trivial tool call a round, median of {args.repeat} turns "
        "per side, the sides taking turns (ms)"
    )
    print(f"{'tool':<6} {'rounds':>7} {'ours':>8} {'ours, bare':>11} {'anchor':>8} {'anchor/ours':>12}")
    flat = []
    with tempfile.TemporaryDirectory() as log_dir, peer_turns(args.tools) as peer:
        log_path = Path(log_dir) / "model_calls.jsonl"
        log_path.touch()  # the workspace's log exists: its first row is not timed as a file creation
        for flavour in flavours:
            per_round, turns = measure(rounds, args.tools, args.repeat, flavour, peer, log_path)
            ours, bare, theirs = per_round["ours"], per_round["bare"], per_round["anchor"]
            for count in rounds:
                print(
                    f"{flavour:<6} {count:>7} {ours[count] * 1e3:>8.3f} {bare[count] * 1e3:>11.3f} "
                    f"{theirs[count] * 1e3:>8.3f} {theirs[count] / ours[count]:>11.1f}x"
                )
            if len(rounds) > 1:
                m_ours, m_bare, m_theirs = marginal(ours), marginal(bare), marginal(theirs)
                print(
                    f"{flavour:<6} {'extra':>7} {m_ours * 1e3:>8.3f} {m_bare * 1e3:>11.3f} "
                    f"{m_theirs * 1e3:>8.3f} {m_theirs / m_ours:>11.1f}x"
                )
            flat.append((flavour, turns["ours"], turns["bare"], turns["anchor"]))
    top = rounds[-1]
    if top >= 20:
        print(f"round cost in a {top}-round turn: median of rounds 1-10 and of rounds {top - 9}-{top} (ms)")
        print(f"{'tool':<6} {'provider':<8} {'at 10':>8} {f'at {top}':>8} {'change':>8} {'all':>8} {'anchor/this':>12}")
        for flavour, longest, bare_longest, theirs_longest in flat:
            anchor_all = round_cost(theirs_longest, 1, top)
            for name, turns in (("ours", longest), ("bare", bare_longest), ("anchor", theirs_longest)):
                early, late, every = (
                    round_cost(turns, 1, 10),
                    round_cost(turns, top - 9, top),
                    round_cost(turns, 1, top),
                )
                print(
                    f"{flavour:<6} {name:<8} {early * 1e3:>8.3f} {late * 1e3:>8.3f} {late / early - 1:>+8.1%} "
                    f"{every * 1e3:>8.3f} {anchor_all / every:>11.1f}x"
                )
    print(
        "ours: the scripted model behind the model-call log, retries and a fallback (request checks, stream assembly,"
    )
    print(
        "pricing and a log row per call, as a configured provider has); ours, bare: behind a provider object that only"
    )
    print(f"answers, like the one anchor is given; all: the median of rounds 1-{top} (the figure least moved by other")
    print("work on the machine); anchor/this: anchor's median over this one's.")
    print(
        f"extra: the cost of one more round between {rounds[-2] if len(rounds) > 1 else rounds[0]} and {top} rounds "
        "(per-turn set-up cancels out)."
    )
    print(f"({load.text()})")


if __name__ == "__main__":
    main()
