"""The row of one model call, as the model-call log holds it (see :mod:`semif_agent.llm.calllog`)."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any, ClassVar

from .rows import COMMON, LIST, NUMBER, OBJECT, TEXT, WHOLE, Expect, Row, needed, or_null, other_fields, read_fields

MODEL_CALL_KIND = "model_call"


@dataclass(frozen=True)
class ModelCallRow:
    """A model call: the messages sent (only the new ones when it ``continues`` an earlier call), the answer or error.

    ``context`` is what the logger adds to every row (the ``run_id`` a call
    belongs to, its ``purpose``...); it comes first in the row.
    """

    KIND: ClassVar[str] = MODEL_CALL_KIND
    FIELDS: ClassVar[Mapping[str, Expect]] = {
        **COMMON,
        "run_id": TEXT,  # a call made outside any run has none
        "call_id": needed(TEXT),
        "provider": or_null(TEXT),
        "model": or_null(TEXT),
        "continues": TEXT,
        "earlier_messages": WHOLE,
        "messages": needed(LIST),
        "tools": LIST,
        "response": or_null(OBJECT),
        "latency_ms": NUMBER,
        "options": OBJECT,
        "usage": or_null(OBJECT),
        "error": TEXT,
    }

    call_id: str
    provider: str | None
    model: str | None
    messages: list[dict[str, Any]]
    tool_choice: Any = None
    latency_ms: float = 0.0
    tools: list[str] | None = None  # None: the same tools as the call it continues
    continues: str | None = None
    earlier_messages: int | None = None
    options: dict[str, Any] | None = None
    response: dict[str, Any] | None = None
    usage: dict[str, Any] | None = None
    error: str | None = None
    context: Mapping[str, Any] = field(default_factory=dict)

    def to_row(self) -> Row:
        row: Row = {
            **self.context,
            "kind": self.KIND,
            "call_id": self.call_id,
            "provider": self.provider,
            "model": self.model,
        }
        if self.continues is not None:
            row["continues"], row["earlier_messages"] = self.continues, self.earlier_messages
        row["messages"] = self.messages
        if self.tools is not None:
            row["tools"] = self.tools
        row.update({"tool_choice": self.tool_choice, "response": self.response, "latency_ms": self.latency_ms})
        if self.options:
            row["options"] = self.options
        if self.usage is not None:
            row["usage"] = self.usage
        if self.error is not None:
            row["error"] = self.error
        return row

    @classmethod
    def from_row(cls, row: Mapping[str, Any]) -> ModelCallRow:
        context = {
            **({"run_id": row["run_id"]} if "run_id" in row else {}),
            **other_fields(row, {*cls.FIELDS, "tool_choice"}),
        }
        return cls(
            **{**read_fields(cls, row), "call_id": str(row.get("call_id", ""))},
            tool_choice=row.get("tool_choice"),
            context=context,
        )
