"""The pieces of an LLM decision that do no I/O: the prompt, the choice tool, reading the answer."""

from __future__ import annotations

import math
from collections.abc import Mapping

from ..engine.decisions import DecisionRequest, Option
from .messages import ToolSpec
from .responses import TokenLogprob

LETTERS = "ABCDEFGHIJKLMNOP"
MAX_OPTIONS = len(LETTERS)
CHOICE_TOOL = "choose_option"


def letters_for(options: list[Option]) -> str:
    return LETTERS[: len(options)]


def render_decision(request: DecisionRequest, descriptions: Mapping[str, str] | None = None) -> str:
    """The decision as the model reads it: state, question, lettered options with descriptions."""
    descriptions = descriptions or {}
    lines = []
    for letter, option in zip(LETTERS, request.options):
        description = option.description or descriptions.get(option.id, "")
        lines.append(f"{letter}. {option.id}" + (f": {description}" if description else ""))
    state = request.state.strip() or "(empty)"
    return f"State:\n{state}\n\nQuestion: {request.question.strip()}\n\nOptions:\n" + "\n".join(lines)


def letter_instruction(request: DecisionRequest) -> str:
    letters = letters_for(request.options)
    span = letters if len(letters) == 1 else f"{letters[0]} to {letters[-1]}"
    return f"Answer with the letter of one option ({span}) and nothing else."


def choice_tool(request: DecisionRequest) -> ToolSpec:
    """A tool whose one argument is an enum of the option ids: the model must pick one."""
    return ToolSpec(
        name=CHOICE_TOOL,
        description="Record your decision: the id of the option that best answers the question.",
        input_schema={
            "type": "object",
            "properties": {
                "option": {
                    "type": "string",
                    "enum": list(request.option_ids),
                    "description": "The id of the chosen option.",
                }
            },
            "required": ["option"],
        },
    )


def letter_logprobs(position: TokenLogprob, letters: str) -> dict[str, float]:
    """Log-probability per option letter at the answer position.

    Candidates are the generated token and its top alternatives; a token
    counts for a letter when it is that letter give or take whitespace
    (``"A"``, ``" A"``), and several tokens for one letter are summed.
    """
    seen: dict[str, float] = {position.token: position.logprob}
    for top in position.top:
        seen.setdefault(top.token, top.logprob)
    found: dict[str, list[float]] = {}
    for token, logprob in seen.items():
        key = token.strip()
        if len(key) == 1 and key in letters and math.isfinite(logprob):
            found.setdefault(key, []).append(logprob)
    return {letter: _logsumexp(values) for letter, values in found.items()}


def floor_logprob(position: TokenLogprob, margin: float) -> float:
    """The log-probability given to letters missing from the top alternatives.

    A missing token is less likely than the least likely one shown; we take
    that bound, lowered by ``margin`` (natural log units).
    """
    values = [position.logprob, *(t.logprob for t in position.top)]
    finite = [v for v in values if math.isfinite(v)]
    return (min(finite) if finite else 0.0) - margin


def _logsumexp(values: list[float]) -> float:
    top = max(values)
    return top + math.log(sum(math.exp(v - top) for v in values))
