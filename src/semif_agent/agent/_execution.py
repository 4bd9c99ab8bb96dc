"""Running one round's tool calls: checks, hooks, approval, scheduling, timeouts, result caps.

Every call ends as an :class:`Outcome`, the text the model sees; nothing a
tool does raises out of here. Per call: look the tool up, validate the
input, run the pre-hooks, ask for approval when needed, re-validate a
rewritten input, run it (sync functions in a worker thread, every call
under its timeout), run the post-hooks, cap the result head-and-tail.

Scheduling: before anything runs, the calls past the run's
``tool_calls_limit`` are cut (they do not run; the model is told). Then
consecutive read-only calls run concurrently (at most
:data:`READ_CONCURRENCY` at once), every other call alone, in order.
``ToolFinished`` events come in completion order; outcomes keep call order.
Events a tool forwards while it runs (a subagent's, see :mod:`._run_context`)
come between its ``ToolStarted`` and ``ToolFinished``: live for subagent
tools and concurrent groups (the call runs as a task feeding one queue),
held until the call ends for any other tool run alone (run inline, the
cheaper path).
"""

from __future__ import annotations

import asyncio
import inspect
import logging
import time
from collections.abc import AsyncGenerator, Callable, Sequence
from contextlib import aclosing
from dataclasses import dataclass
from typing import TYPE_CHECKING

from .. import spans
from ..llm.messages import ToolCall
from ._config import TurnConfig
from ._run_context import RunContext, ToolCallContext, current_run, running, runs_subagent
from ._threads import WorkerTimeout, run_in_worker
from .events import AgentEvent, ToolFinished, ToolStarted
from .hooks import ApprovalRequest, ask_approval, fire, run_post_hooks, run_pre_hooks
from .output import FINAL_RESULT
from .scope import RetrievalScope
from .tools import AgentTool, result_text
from .tracing import turn_key
from .usage import CHARS_PER_TOKEN, ChildTurn, UsagePool

if TYPE_CHECKING:
    from pydantic import BaseModel

    from .._json import JsonObject

log = logging.getLogger("semif_agent.agent")

READ_CONCURRENCY = 10
QUICK_WAIT = 0.0005  # seconds the loop waits for a quick sync tool's result before awaiting it
_LISTED_NAMES = 30


@dataclass(slots=True)
class Outcome:
    """What one call came to: the result text the model sees, and how it went."""

    call: ToolCall
    content: str
    is_error: bool = False
    ran: bool = False
    counted: bool = True  # counts toward tool_calls (not when cut by a limit, nor final_result)
    digest: int = 0  # of the full result, before the cap (stuck detection)


class _TimedOut(Exception):
    """The call passed its timeout."""


@dataclass(slots=True)
class _Ready:
    call: ToolCall
    tool: AgentTool
    value: BaseModel | JsonObject
    tool_input: JsonObject


def cap_result(text: str, max_tokens: int | None) -> str:
    """``text`` cut to about ``max_tokens``, keeping its head and its tail around a marker."""
    if max_tokens is None:
        return text
    limit = max_tokens * CHARS_PER_TOKEN
    if len(text) <= limit:
        return text
    head = limit // 2
    tail = limit - head
    cut = len(text) - head - tail
    marker = f"\n[... {cut} characters cut here: the result was over the {max_tokens}-token limit ...]\n"
    return f"{text[:head]}{marker}{text[len(text) - tail :]}"


class ToolExecutor:
    """Runs the tool calls of one turn's rounds, yielding tool events."""

    def __init__(
        self,
        config: TurnConfig,
        *,
        pool: UsagePool,
        turn_id: str,
        parent_tool_call_id: str | None = None,
        final_result: Callable[[ToolCall], Outcome] | None = None,
        scope: RetrievalScope | None = None,
        on_child: Callable[[ChildTurn], None] | None = None,
    ) -> None:
        self.config = config
        self.scope = scope  # published during each call, with the pool, in its RunContext
        self.pool = pool
        self.turn_id = turn_id
        self.parent = parent_tool_call_id
        self.final_result = final_result
        self.on_child = on_child
        self._slow: set[str] = set()  # sync tools a call of which took longer than QUICK_WAIT

    # -- a batch -------------------------------------------------------------

    async def run_batch(self, calls: Sequence[ToolCall], outcomes: list[Outcome]) -> AsyncGenerator[AgentEvent, None]:
        """Run ``calls``; yield their events (subagents' too); leave their outcomes in ``outcomes``, in call order."""
        slots: list[Outcome | None] = [None] * len(calls)
        admitted, cut = self._admit(calls, slots)
        for outcome in cut:
            yield self.finished_event(outcome)
        index = 0
        while index < len(admitted):
            position, call, tool = admitted[index]
            if tool is not None and tool.read_only:
                group = [admitted[index]]
                while index + 1 < len(admitted) and (nxt := admitted[index + 1])[2] is not None and nxt[2].read_only:
                    group.append(nxt)
                    index += 1
                if len(group) > 1:
                    async with aclosing(self._run_group(group, slots)) as events:
                        async for event in events:
                            yield event
                    index += 1
                    continue
            run = (
                self._run_group([admitted[index]], slots)
                if _forwards(tool)
                else self._run_one(position, call, tool, slots)
            )
            async with aclosing(run) as events:
                async for event in events:
                    yield event
            index += 1
        outcomes.extend(o for o in slots if o is not None)

    def _admit(
        self, calls: Sequence[ToolCall], slots: list[Outcome | None]
    ) -> tuple[list[tuple[int, ToolCall, AgentTool | None]], list[Outcome]]:
        """Settle what needs no running (final_result, calls cut by the limit); the rest, in order."""
        left = self.pool.tool_calls_left()
        admitted: list[tuple[int, ToolCall, AgentTool | None]] = []
        cut: list[Outcome] = []
        for position, call in enumerate(calls):
            if self.final_result is not None and call.name == FINAL_RESULT:
                slots[position] = self.final_result(call)
            elif left is not None and len(admitted) >= left:
                outcome = Outcome(
                    call,
                    "Error: not run: this run's tool call limit is reached; no more tool calls will run.",
                    is_error=True,
                    counted=False,
                )
                slots[position] = outcome
                cut.append(outcome)
            else:
                admitted.append((position, call, self.config.tools.get(call.name)))
        self.pool.debit(tool_calls=len(admitted))
        if cut:
            self.pool.refuse(len(cut))
        return admitted, cut

    async def _run_one(
        self, position: int, call: ToolCall, tool: AgentTool | None, slots: list[Outcome | None]
    ) -> AsyncGenerator[AgentEvent, None]:
        """One call, inline; events it forwards are held and yielded before its ``ToolFinished``."""
        ready = await self._prepare(call, tool)
        held: list[AgentEvent] = []
        if isinstance(ready, _Ready):
            yield self._started(ready)
            outcome = await self._execute(ready, held.append, alone=True)
        else:
            outcome = ready
        slots[position] = outcome
        for event in held:
            yield event
        yield self.finished_event(outcome)

    async def _run_group(
        self, group: list[tuple[int, ToolCall, AgentTool | None]], slots: list[Outcome | None]
    ) -> AsyncGenerator[AgentEvent, None]:
        events: asyncio.Queue[AgentEvent | None] = asyncio.Queue()
        limit = asyncio.Semaphore(READ_CONCURRENCY)

        async def one(position: int, call: ToolCall, tool: AgentTool | None) -> None:
            try:
                ready = await self._prepare(call, tool)
                if isinstance(ready, _Ready):
                    async with limit:
                        events.put_nowait(self._started(ready))
                        outcome = await self._execute(ready, events.put_nowait)
                else:
                    outcome = ready
                slots[position] = outcome
                events.put_nowait(self.finished_event(outcome))
            finally:
                events.put_nowait(None)

        tasks = [asyncio.create_task(one(*item)) for item in group]
        pending = len(tasks)
        try:
            while pending:
                event = await events.get()
                if event is None:
                    pending -= 1
                else:
                    yield event
        finally:
            for task in tasks:
                task.cancel()
            await asyncio.gather(*tasks, return_exceptions=True)

    # -- one call ------------------------------------------------------------

    async def _prepare(self, call: ToolCall, tool: AgentTool | None) -> _Ready | Outcome:
        """The call ready to run, or the outcome that refuses it."""
        config = self.config
        if tool is None:
            names = sorted(config.tools)
            listed = ", ".join(names[:_LISTED_NAMES]) + (", ..." if len(names) > _LISTED_NAMES else "")
            return self._refused(call, f"Error: unknown tool {call.name!r}. Available tools: {listed or 'none'}.")
        if not call.arguments_valid:
            return self._refused(
                call, f"Error: the arguments for {call.name} were not a JSON object: {call.raw_arguments[:200]}"
            )
        value, error = tool.parse_input(call.arguments)
        if error or value is None:
            return self._refused(
                call, f"Error: invalid input for {call.name}: {error}. Fix the input and call it again."
            )
        tool_input = call.arguments
        verdict_asks = False
        if config.pre_hooks:
            verdict = await run_pre_hooks(config.pre_hooks, call.name, tool_input)
            if verdict.decision == "deny":
                return self._refused(call, f"Denied: {verdict.reason}")
            tool_input = verdict.tool_input
            verdict_asks = verdict.decision == "ask"
        if tool.requires_approval or verdict_asks:
            decision = await ask_approval(
                config.approval, ApprovalRequest(tool_call_id=call.id, name=call.name, tool_input=tool_input)
            )
            if not decision.approved:
                return self._refused(call, f"Denied: {decision.reason or 'the call was not approved'}")
            if decision.updated_input is not None:
                tool_input = dict(decision.updated_input)
        if tool_input is not call.arguments:
            value, error = tool.parse_input(tool_input)
            if error or value is None:
                return self._refused(call, f"Error: the rewritten input for {call.name} is invalid: {error}")
        return _Ready(call, tool, value, tool_input)

    def _refused(self, call: ToolCall, message: str) -> Outcome:
        return Outcome(call, message, is_error=True, digest=hash(message))

    async def _execute(self, ready: _Ready, emit: Callable[[AgentEvent], None], alone: bool = False) -> Outcome:
        """Run the call; ``alone``: nothing else of this turn runs meanwhile (a quick sync tool may be waited for)."""
        config, tool, call = self.config, ready.tool, ready.call
        timeout = tool.timeout if tool.timeout is not None else config.tool_timeout
        fire(config.callbacks, "on_tool_start", call.name, ready.tool_input)
        context = RunContext(
            self.pool,
            self.scope,
            ToolCallContext(call.id, call.name, emit, self._add_child),
            subagent=current_run().subagent,
        )
        try:
            with running(context), spans.within(turn_key(self.turn_id)):  # spans it opens nest under the turn's
                text = result_text(await self._call(tool, ready.value, timeout, alone))
        except Exception as exc:  # noqa: BLE001 - a tool's failure is a result the model sees
            fire(config.callbacks, "on_tool_error", call.name, ready.tool_input, exc)
            if isinstance(exc, _TimedOut):
                return self._failed(call, f"Error: {call.name} timed out after {timeout:g} seconds.")
            return self._failed(call, f"Error: {call.name} failed: {type(exc).__name__}: {exc}")
        if config.post_hooks:
            try:
                text = await run_post_hooks(config.post_hooks, call.name, ready.tool_input, text)
            except Exception as exc:  # noqa: BLE001 - fail closed: the output it was to vet is withheld
                log.warning("post-tool hook failed on %s: %s", call.name, exc)
                return self._failed(
                    call,
                    f"Error: a post-tool hook failed on {call.name} ({type(exc).__name__}); its result is withheld.",
                )
        fire(config.callbacks, "on_tool_end", call.name, ready.tool_input, text)
        return Outcome(call, cap_result(text, config.result_cap(tool)), ran=True, digest=hash(text))

    async def _call(self, tool: AgentTool, value: BaseModel | JsonObject, timeout: float | None, alone: bool) -> object:
        """Call the tool under ``timeout``: async ones on the loop, sync ones in a worker thread.

        A sync tool run ``alone`` is first waited for, up to :data:`QUICK_WAIT`,
        and handed its result directly (see :func:`~._threads.run_in_worker`);
        one that took longer is awaited from then on in this turn. A slow tool
        thus holds the loop for half a millisecond once a turn at most.
        """
        try:
            if tool.is_async:
                return await asyncio.wait_for(tool.call(value), timeout)
            quick = alone and tool.name not in self._slow
            began = time.perf_counter()
            try:
                result = await run_in_worker(tool.call, value, timeout=timeout, wait=QUICK_WAIT if quick else 0.0)
            finally:
                if quick and time.perf_counter() - began > QUICK_WAIT:
                    self._slow.add(tool.name)
            if inspect.isawaitable(result):  # a sync callable that handed back a coroutine
                result = await asyncio.wait_for(result, timeout)
            return result
        except WorkerTimeout as exc:
            raise _TimedOut() from exc
        except TimeoutError as exc:
            # wait_for's own timeout is a TimeoutError raised from the CancelledError of the call
            if timeout is not None and isinstance(exc.__cause__, asyncio.CancelledError):
                raise _TimedOut() from exc
            raise

    def _add_child(self, child: ChildTurn) -> None:
        if self.on_child is not None:
            self.on_child(child)

    def _failed(self, call: ToolCall, message: str) -> Outcome:
        return Outcome(call, message, is_error=True, ran=True, digest=hash(message))

    # -- events --------------------------------------------------------------

    def _started(self, ready: _Ready) -> ToolStarted:
        return ToolStarted(
            turn_id=self.turn_id,
            parent_tool_call_id=self.parent,
            tool_call_id=ready.call.id,
            name=ready.call.name,
            tool_input=ready.tool_input,
        )

    def finished_event(self, outcome: Outcome) -> ToolFinished:
        return ToolFinished(
            turn_id=self.turn_id,
            parent_tool_call_id=self.parent,
            tool_call_id=outcome.call.id,
            name=outcome.call.name,
            result=outcome.content,
            is_error=outcome.is_error,
            ran=outcome.ran,
        )


def _forwards(tool: AgentTool | None) -> bool:
    """True for a subagent tool: its child's events are forwarded live."""
    return tool is not None and runs_subagent(tool.fn)
