"""The row of one model call, as the model-call log holds it (see :mod:`semif_agent.llm.calllog`)."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from pydantic import Field, StrictInt, StrictStr, model_validator

from .kind_names import MODEL_CALL_KIND
from .rows import LogRow, Number, Row


class ModelCallRow(LogRow):
    """A model call: the messages sent (only the new ones when it ``continues`` an earlier call), the answer or error.

    ``context`` is what the logger adds to every row (the ``run_id`` a call
    belongs to, its ``purpose``...); it comes first in the row. A row read
    back has it too: its ``run_id`` and the fields beyond the model's.
    """

    run_id: StrictStr | None = None  # type: ignore[assignment]  # a call made outside any run has none
    kind: StrictStr = MODEL_CALL_KIND
    call_id: StrictStr
    provider: StrictStr | None = None
    model: StrictStr | None = None
    continues: StrictStr | None = None
    earlier_messages: StrictInt | None = None
    messages: list[dict[str, Any]]
    tools: list[str] | None = None  # None: the same tools as the call it continues
    tool_choice: Any = None
    response: dict[str, Any] | None = None
    latency_ms: Number = 0.0
    options: dict[str, Any] | None = None
    usage: dict[str, Any] | None = None
    error: StrictStr | None = None
    context: dict[str, Any] = Field(default_factory=dict, exclude=True)

    @model_validator(mode="before")
    @classmethod
    def _context_of_a_read_row(cls, data: Any) -> Any:
        if not isinstance(data, Mapping):
            return data
        if "context" not in data:
            context = {key: value for key, value in data.items() if key not in cls.model_fields or key == "run_id"}
            return {**data, "context": context}
        given = data["context"]
        if "run_id" not in data and isinstance(given, Mapping) and isinstance(given.get("run_id"), str):
            return {**data, "run_id": given["run_id"]}  # the run a call belongs to, as the logger's context says
        return data

    def to_dict(self) -> Row:
        """The row as ``semif log --calls --json`` shows it: ``v`` and ``ts`` when read, then the row as written."""
        return {"v": self.v, "ts": self.ts, **self.to_row()} if self.v is not None else self.to_row()

    def to_row(self) -> Row:
        row: Row = {
            **self.context,
            "kind": self.kind,
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
