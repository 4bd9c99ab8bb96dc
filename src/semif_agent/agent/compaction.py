"""Client-side compaction of the tool loop: older messages become one summary (works with every provider).

::

    agent = Agent(llm=provider).with_compaction(8_000, keep_last=4)

Before each model call, when the turn's working messages (the conversation
and this turn's messages; the system prompt is never compacted) pass
``trigger_tokens``, the older ones are replaced by a single
``[Conversation summary]`` user message and the last ``keep_last`` are kept
as they are. The turn emits ``CompactionStarted`` and ``CompactionFinished``
around it.

- The cut never separates a tool call from its result: when the kept part
  would start with a tool result (or the summarised part would end with an
  unanswered call), the cut moves back until it does not.
- Active skill instructions live in the system prompt (see
  :mod:`semif_agent.agent.agent_skills`), so compaction never prunes them.
- The summary comes from ``compact_fn(transcript) -> str`` (sync or async)
  when given, else from a :class:`TierCompactor` over the agent's own model
  (:data:`SUMMARIZER`). That
  model call is part of the round it precedes: its tokens and cost are in
  that round's :class:`~semif_agent.agent.usage.RoundUsage` and count
  against the usage limits like any other call.
- A failing summary leaves the messages as they were (the turn goes on, and
  does not try again). The wrap-up round after a usage limit is crossed
  does not compact: it would spend more past the limit.
- The agent then remembers the compacted conversation: the summary and what
  came after it.
"""

from __future__ import annotations

import inspect
import json
from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass

from ..llm.messages import AssistantMessage, Message, SystemMessage, ToolResultMessage, UserMessage
from ..llm.protocol import LLMProvider, ModelRequest, as_provider
from ._threads import run_in_worker
from .errors import AgentConfigError
from .usage import estimate_tokens

SUMMARY_PREFIX = "[Conversation summary]\n"
SUMMARIZER = (
    "You compact a conversation between a user and an assistant that uses tools, so that it can go on "
    "without the messages you summarise. Write a faithful summary: the user's requests (the latest one "
    "word for word), what was decided, the tool calls made and the facts their results established "
    "(names, numbers, identifiers, file paths exactly), and what is still to be done. No preamble."
)
MIN_SUMMARY_TOKENS = 1024

CompactFn = Callable[[str], str | Awaitable[str]]


@dataclass(frozen=True)
class CompactionCost:
    """What producing a summary cost (counted into the round it precedes)."""

    prompt_tokens: int = 0
    completion_tokens: int = 0
    cost_usd: float = 0.0


@dataclass(frozen=True)
class Compaction:
    """When to compact (``trigger_tokens``), what to keep (``keep_last``), and who summarises (``compact_fn``)."""

    trigger_tokens: int
    keep_last: int = 4
    compact_fn: CompactFn | None = None

    @classmethod
    def build(cls, trigger_tokens: int, keep_last: int = 4, compact_fn: CompactFn | None = None) -> Compaction:
        if not isinstance(trigger_tokens, int) or isinstance(trigger_tokens, bool) or trigger_tokens < 1:
            raise AgentConfigError(f"trigger_tokens must be a whole number above 0, got {trigger_tokens!r}")
        if not isinstance(keep_last, int) or isinstance(keep_last, bool) or keep_last < 0:
            raise AgentConfigError(f"keep_last must be a whole number, 0 or more, got {keep_last!r}")
        if compact_fn is not None and not callable(compact_fn):
            raise AgentConfigError("compact_fn must be callable: (transcript) -> summary")
        return cls(trigger_tokens, keep_last, compact_fn)

    def boundary(self, messages: Sequence[Message]) -> int:
        """How many leading ``messages`` to summarise (0: nothing to compact)."""
        cut = len(messages) - self.keep_last
        while cut > 0 and (isinstance(messages[cut], ToolResultMessage) or _has_calls(messages[cut - 1])):
            cut -= 1
        return max(cut, 0)

    async def summarize(
        self, messages: Sequence[Message], provider: LLMProvider, *, max_tokens: int = MIN_SUMMARY_TOKENS
    ) -> tuple[str, CompactionCost]:
        """The summary of ``messages`` and what it cost (nothing for a ``compact_fn``)."""
        text = transcript(messages)
        if isinstance(self.compact_fn, TierCompactor):  # a model of its own: what it spends counts too
            return await self.compact_fn.asummarize(text)
        if self.compact_fn is not None:
            if inspect.iscoroutinefunction(self.compact_fn):
                summary = await self.compact_fn(text)
            else:
                summary = await run_in_worker(self.compact_fn, text)
                if inspect.isawaitable(summary):
                    summary = await summary
            return str(summary), CompactionCost()
        return await TierCompactor(provider, max_tokens=max(max_tokens, MIN_SUMMARY_TOKENS)).asummarize(text)


@dataclass(frozen=True)
class TierCompactor:
    """A model that summarises a transcript: what compaction uses, with the agent's own model, when given no
    ``compact_fn``.

    Pass one as ``compact_fn`` to summarise with another (cheaper) model:
    ``agent.with_compaction(8_000, compact_fn=TierCompactor(create_provider("openai/gpt-4o-mini")))``; its
    tokens and cost count in the round as the agent's own would. Called directly, ``await compactor(text)``
    is the summary.
    """

    llm: LLMProvider
    max_tokens: int = MIN_SUMMARY_TOKENS  # room for the summary (never less than MIN_SUMMARY_TOKENS)
    instructions: str = SUMMARIZER

    def __post_init__(self) -> None:
        as_provider(self.llm)  # what is not a model provider is refused now, not at the first summary
        if not isinstance(self.max_tokens, int) or isinstance(self.max_tokens, bool) or self.max_tokens < 1:
            raise AgentConfigError(f"max_tokens must be a whole number above 0, got {self.max_tokens!r}")

    async def asummarize(self, text: str) -> tuple[str, CompactionCost]:
        """The summary of the transcript ``text`` and what it cost."""
        request = ModelRequest(
            messages=(SystemMessage(content=self.instructions), UserMessage(content=text)),
            max_tokens=max(self.max_tokens, MIN_SUMMARY_TOKENS),
        )
        response = await as_provider(self.llm).request(request)
        usage = response.usage
        if usage.total_tokens:
            cost = CompactionCost(
                usage.input_tokens + usage.cache_write_tokens + usage.cache_read_tokens,
                usage.output_tokens,
                usage.cost_usd or 0.0,
            )
        else:  # the provider reported nothing: estimate, as the loop does
            cost = CompactionCost(
                estimate_tokens(self.instructions) + estimate_tokens(text) + 8,
                estimate_tokens(response.text),
                usage.cost_usd or 0.0,
            )
        return response.text, cost

    async def __call__(self, text: str) -> str:
        return (await self.asummarize(text))[0]


def summary_message(summary: str) -> UserMessage:
    """The message that stands for the compacted messages."""
    return UserMessage(content=SUMMARY_PREFIX + summary.strip())


def transcript(messages: Sequence[Message]) -> str:
    """``messages`` flattened to text for a summariser: one block per message, tool calls and results named."""
    names: dict[str, str] = {}
    blocks: list[str] = []
    for message in messages:
        if isinstance(message, AssistantMessage):
            if message.content:
                blocks.append(f"assistant: {message.content}")
            for call in message.tool_calls:
                names[call.id] = call.name
                blocks.append(f"assistant called {call.name}({json.dumps(call.arguments, ensure_ascii=False)})")
        elif isinstance(message, ToolResultMessage):
            label = "error" if message.is_error else "result"
            blocks.append(f"tool {label} of {names.get(message.tool_call_id, message.tool_call_id)}: {message.content}")
        else:
            blocks.append(f"{message.role}: {message.content}")
    return "\n\n".join(blocks)


def _has_calls(message: Message) -> bool:
    return isinstance(message, AssistantMessage) and bool(message.tool_calls)
