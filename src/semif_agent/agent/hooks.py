"""Hooks around tool calls, inline approval, and observer callbacks.

Pre-hooks ``(tool_name, tool_input) -> HookResult | None`` run in order
before a call: ``deny`` stops it (the reason goes back to the model as an
error result), ``updated_input`` rewrites its input for the hooks after and
for the call, ``ask`` sends it to the approval callback. A hook that raises
denies the call (fail closed). Post-hooks ``(tool_name, tool_input, output)
-> HookResult | None`` may replace a successful call's output; one that
raises turns the result into an error (fail closed: the output it was
meant to vet is not shown). Hooks may be sync or async; ``None`` means
"allow, unchanged".

The approval callback ``(ApprovalRequest) -> ApprovalDecision`` (sync or
async) is asked for tools marked ``requires_approval`` and for calls a
pre-hook answered ``ask``. Without one, those calls are denied. A callback
that raises denies too. A sync callback runs in a worker thread, so it may
block (on a person at a prompt) without stalling the loop; parallel calls
ask concurrently, so serialise inside the callback if your UI needs one
prompt at a time.

:class:`AgentCallback` observers see the loop; their exceptions are logged
and swallowed. Besides the rounds and tool calls, an observer may watch
every event of the turn's stream (``on_event``), every model call with its
request, answer and timing (``on_model_call``, a :class:`ModelCall`), and
the end of each turn, however it ended (``on_turn_end``):
:class:`~semif_agent.agent.tracing.TracingAgentCallback` makes spans of them.
"""

from __future__ import annotations

import inspect
import logging
from collections.abc import Awaitable, Callable, Iterable
from dataclasses import dataclass
from datetime import datetime
from typing import Literal, TypeAlias

from pydantic import ConfigDict

from .._json import JsonObject
from ..errors import ArgumentTypeError
from ..llm.protocol import ModelRequest
from ..llm.responses import Response
from ._threads import run_in_worker
from ._validated import ValidatedModel
from .events import AgentEvent
from .usage import TurnDiagnostics

log = logging.getLogger("semif_agent.agent")


class HookResult(ValidatedModel):
    """A hook's verdict. ``decision``/``reason``/``updated_input`` are for pre-hooks, ``updated_output`` for post-hooks."""

    model_config = ConfigDict(frozen=True)

    decision: Literal["allow", "deny", "ask"] = "allow"
    reason: str | None = None
    updated_input: JsonObject | None = None
    updated_output: str | None = None


class ApprovalRequest(ValidatedModel):
    """A call waiting for approval."""

    model_config = ConfigDict(frozen=True)

    tool_call_id: str
    name: str
    tool_input: JsonObject


class ApprovalDecision(ValidatedModel):
    """The answer to an :class:`ApprovalRequest`. ``reason`` goes to the model on deny; ``updated_input`` replaces the input on approve."""

    model_config = ConfigDict(frozen=True)

    approved: bool
    reason: str | None = None
    updated_input: JsonObject | None = None


PreToolHook: TypeAlias = Callable[[str, JsonObject], "HookResult | None | Awaitable[HookResult | None]"]
PostToolHook: TypeAlias = Callable[[str, JsonObject, str], "HookResult | None | Awaitable[HookResult | None]"]
ApprovalCallback: TypeAlias = Callable[[ApprovalRequest], "ApprovalDecision | Awaitable[ApprovalDecision]"]


@dataclass(frozen=True)
class ModelCall:
    """One model call of a turn: who was asked, what, when, and the answer (``response``) or the ``error``."""

    turn_id: str
    round: int
    provider: str
    model: str
    request: ModelRequest
    started: datetime
    finished: datetime
    response: Response | None = None
    error: BaseException | None = None


class AgentCallback:
    """Observer of the loop. Override what you need; every method is a no-op here.

    Any object with some of these methods will do. Exceptions are logged
    and swallowed: an observer never changes the turn.
    """

    def on_event(self, event: AgentEvent) -> None: ...

    def on_model_call(self, call: ModelCall) -> None: ...

    def on_turn_end(self, turn_id: str, diagnostics: TurnDiagnostics) -> None: ...

    def on_round_start(self, round_index: int) -> None: ...

    def on_round_end(self, round_index: int) -> None: ...

    def on_tool_start(self, name: str, tool_input: JsonObject) -> None: ...

    def on_tool_end(self, name: str, tool_input: JsonObject, result: str) -> None: ...

    def on_tool_error(self, name: str, tool_input: JsonObject, error: BaseException) -> None: ...


def fire(callbacks: Iterable[object], method: str, *args: object) -> None:
    """Call ``method(*args)`` on every callback that has it, logging and swallowing failures."""
    for callback in callbacks:
        handler = getattr(callback, method, None)
        if handler is None:
            continue
        try:
            handler(*args)
        except Exception:  # observers never break the loop
            log.exception("agent callback %s.%s failed", type(callback).__name__, method)


def _is_async(fn: object) -> bool:
    return inspect.iscoroutinefunction(fn) or inspect.iscoroutinefunction(getattr(fn, "__call__", None))  # noqa: B004 - an object's async __call__


async def _maybe_await(value: object) -> object:
    """``value``, awaited when it is awaitable (what a sync-or-async hook returned; checked by the caller)."""
    return await value if inspect.isawaitable(value) else value


class PreVerdict:
    """What the pre-hooks decided: ``deny`` (with ``reason``), ``ask`` or ``allow``, and the input to use."""

    __slots__ = ("decision", "reason", "tool_input")

    def __init__(self, decision: str, tool_input: JsonObject, reason: str | None = None) -> None:
        self.decision = decision
        self.tool_input = tool_input
        self.reason = reason


async def run_pre_hooks(hooks: Iterable[PreToolHook], name: str, tool_input: JsonObject) -> PreVerdict:
    """Run the pre-hooks in order; the first deny wins, rewrites chain, any ask asks."""
    ask_reason: str | None = None
    asked = False
    for hook in hooks:
        try:
            result = await _maybe_await(hook(name, dict(tool_input)))
        except Exception as exc:  # noqa: BLE001 - a failing hook denies (fail closed)
            log.warning("pre-tool hook %r raised on %s: %s", hook, name, exc)
            return PreVerdict("deny", tool_input, f"a pre-tool hook failed ({type(exc).__name__}: {exc})")
        if result is None:
            continue
        if not isinstance(result, HookResult):
            return PreVerdict("deny", tool_input, f"a pre-tool hook returned {type(result).__name__}, not a HookResult")
        if result.updated_input is not None:
            tool_input = dict(result.updated_input)
        if result.decision == "deny":
            return PreVerdict("deny", tool_input, result.reason or "denied by a pre-tool hook")
        if result.decision == "ask":
            asked = True
            ask_reason = ask_reason or result.reason
    return PreVerdict("ask" if asked else "allow", tool_input, ask_reason)


async def run_post_hooks(hooks: Iterable[PostToolHook], name: str, tool_input: JsonObject, output: str) -> str:
    """Run the post-hooks in order, each seeing the output the one before left. Raises when a hook fails."""
    for hook in hooks:
        result = await _maybe_await(hook(name, dict(tool_input), output))
        if result is None:
            continue
        if not isinstance(result, HookResult):
            raise ArgumentTypeError(f"a post-tool hook returned {type(result).__name__}, not a HookResult")
        if result.updated_output is not None:
            output = result.updated_output
    return output


async def ask_approval(callback: ApprovalCallback | None, request: ApprovalRequest) -> ApprovalDecision:
    """The callback's decision; a denial when there is no callback, or it fails or answers nonsense."""
    if callback is None:
        return ApprovalDecision(approved=False, reason=f"{request.name} needs approval and no approval callback is set")
    try:
        decision: object
        if _is_async(callback):
            decision = await _maybe_await(callback(request))
        else:  # it may wait for a person: keep it off the event loop
            decision = await _maybe_await(await run_in_worker(callback, request))
    except Exception as exc:  # noqa: BLE001 - a failing approver denies (fail closed)
        log.warning("approval callback raised on %s: %s", request.name, exc)
        return ApprovalDecision(approved=False, reason=f"the approval callback failed ({type(exc).__name__}: {exc})")
    if isinstance(decision, bool):
        return ApprovalDecision(approved=decision)
    if not isinstance(decision, ApprovalDecision):
        return ApprovalDecision(approved=False, reason=f"the approval callback returned {type(decision).__name__}")
    return decision
