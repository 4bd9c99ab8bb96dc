"""Structured output: the answer a turn must end with, validated against a pydantic model.

``mode="tool"`` (default, works with every provider that has tools): a
synthetic ``final_result`` tool carries the model's schema and
``tool_choice="any"`` keeps the model from stopping in plain text. Invalid
arguments come back to it as an error tool result, and it tries again.

``mode="prompted"``: the schema goes into the system prompt and the final
text is parsed as JSON and validated; an invalid answer is sent back with
the validation error for another try.

Either way ``max_output_retries`` bounds the failed attempts after the first;
when they run out the turn ends with ``stopped_by="output_missing"``.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass, field
from typing import Any, Literal

from pydantic import BaseModel, ValidationError

from ..llm.messages import ToolSpec
from ._schema import format_validation_error, model_schema
from .errors import AgentConfigError

FINAL_RESULT = "final_result"
OutputMode = Literal["tool", "prompted"]

_FENCE = re.compile(r"^```(?:json)?\s*(.*?)\s*```$", re.S)


@dataclass(frozen=True)
class OutputSpec:
    """An agent's output requirement: the model, the mode, the retry budget."""

    model: type[BaseModel]
    mode: OutputMode = "tool"
    max_output_retries: int = 1
    schema: dict[str, Any] = field(default_factory=dict, compare=False)

    @classmethod
    def build(cls, model: Any, mode: str, max_output_retries: int) -> OutputSpec:
        if not (isinstance(model, type) and issubclass(model, BaseModel)):
            raise AgentConfigError(f"with_output_model needs a pydantic model class, got {model!r}")
        if mode not in ("tool", "prompted"):
            raise AgentConfigError(f"output mode must be 'tool' or 'prompted', not {mode!r}")
        if not isinstance(max_output_retries, int) or max_output_retries < 0:
            raise AgentConfigError("max_output_retries must be a whole number, 0 or more")
        return cls(model=model, mode=mode, max_output_retries=max_output_retries, schema=model_schema(model))  # type: ignore[arg-type]  # mode was checked against the two literals just above

    def tool_spec(self) -> ToolSpec:
        """The ``final_result`` tool (tool mode)."""
        doc = (self.model.__doc__ or "").strip()
        about = f" It is: {doc}" if doc and not doc.startswith("Usage docs:") else ""
        return ToolSpec(
            name=FINAL_RESULT,
            description=f"Record your final answer. Call this exactly once, when you are done.{about}",
            input_schema=self.schema,
        )

    def instructions(self) -> str:
        """What the system prompt says in prompted mode."""
        schema = json.dumps(self.schema, ensure_ascii=False)
        return (
            "When you give your final answer, reply with only a JSON object that matches this JSON Schema "
            f"(no other text, no code fence):\n{schema}"
        )

    def from_arguments(self, arguments: dict[str, Any]) -> tuple[BaseModel | None, str]:
        """The output from ``final_result``'s arguments, or ``(None, why not)``."""
        try:
            return self.model.model_validate(arguments), ""
        except ValidationError as exc:
            return None, format_validation_error(exc)

    def from_text(self, text: str) -> tuple[BaseModel | None, str]:
        """The output from a prompted answer's text, or ``(None, why not)``."""
        candidate = _json_text(text)
        if candidate is None:
            return None, "the answer is not a JSON object"
        try:
            return self.model.model_validate_json(candidate), ""
        except ValidationError as exc:
            return None, format_validation_error(exc)


def _json_text(text: str) -> str | None:
    text = text.strip()
    fenced = _FENCE.match(text)
    if fenced:
        text = fenced.group(1).strip()
    if text.startswith("{"):
        return text
    start, end = text.find("{"), text.rfind("}")
    return text[start : end + 1] if 0 <= start < end else None


def output_json(value: BaseModel | None) -> str | None:
    """The output as JSON text (``None`` when there is none)."""
    return None if value is None else value.model_dump_json()
