"""``LLMEngine``: SemIf decisions answered by a language model.

The model sees the state, the question, and the options lettered A, B, C, ...
with their descriptions (at most 16; more is a :class:`TooManyOptionsError`
asking the caller to narrow the choice). Two ways to read its answer:

- **log-probabilities** (the SemIf method, for providers that return them,
  i.e. OpenAI-compatible servers): one completion of one token, with the top
  20 alternatives; each option's score is its letter's log-probability
  (letters missing from the alternatives get a floor), and the probabilities
  are a softmax over the options' scores, so they sum to 1.
- **a forced tool call** (elsewhere): a tool whose one argument is an enum of
  the option ids. No probabilities are available; the result says so in
  ``note``.

An answer outside the options is asked again once, then is a
:class:`~semif_agent.errors.DecisionError`. The result carries ``model`` (who
answered) and ``usage`` (tokens and cost of every call the decision made), so
decision-log rows record them.

``create(settings)`` is the engine registry's factory for ``"llm"``; see
:mod:`semif_agent.llm` for the settings it reads.
"""

from __future__ import annotations

import math
import time
from collections.abc import Mapping
from typing import Any

from .._sync import run_sync
from ..engine.base import BaseEngine, finish
from ..engine.decisions import DecisionRequest, DecisionResult, softmax
from ..errors import DecisionError, EngineConfigError
from ._choice import (
    CHOICE_TOOL,
    MAX_OPTIONS,
    choice_tool,
    floor_logprob,
    letter_instruction,
    letter_logprobs,
    letters_for,
    render_decision,
)
from .errors import TooManyOptionsError
from .messages import AssistantMessage, Message, SystemMessage, ToolResultMessage, UserMessage
from .protocol import LLMProvider, ModelRequest, as_provider
from .responses import Response
from .usage import Usage

DECISION_SYSTEM_PROMPT = (
    "You make one decision at a time for a software agent. You are given the state the decision is "
    "about, a question, and lettered options. Choose the option that best answers the question for "
    "that state. If an option says that none of the others fits, choose it only when none does."
)
MODES = ("auto", "logprobs", "tool")


class LLMEngine(BaseEngine):
    """Answers decisions with ``provider``.

    ``mode`` is ``"auto"`` (log-probabilities when the provider says it returns
    them, else the tool), ``"logprobs"`` or ``"tool"``. ``top_logprobs`` is how
    many alternatives to ask for (at most 20); ``floor_margin`` how far below
    the least likely alternative a missing letter is put (natural log units).
    """

    name = "llm"
    default_system_prompt = DECISION_SYSTEM_PROMPT

    def __init__(
        self,
        provider: LLMProvider,
        *,
        mode: str = "auto",
        temperature: float | None = 0.0,
        top_logprobs: int = 20,
        max_tokens: int = 256,
        system_prompt: str | None = None,
        floor_margin: float = math.log(10),
    ) -> None:
        if mode not in MODES:
            raise EngineConfigError(f"llm engine: mode must be one of {', '.join(MODES)}, not {mode!r}")
        self.provider = provider
        self._model = as_provider(provider)
        self.model = f"{provider.provider_name}/{provider.model_id}"
        self.mode = mode
        self.temperature = temperature
        self.top_logprobs = max(1, min(20, int(top_logprobs)))
        self.max_tokens = max_tokens
        self.system_prompt = system_prompt or self.default_system_prompt
        self.floor_margin = floor_margin
        self._logprobs_unavailable = False

    def call(self, request: DecisionRequest) -> DecisionResult:
        """Decide ``request`` (sync; not inside a running event loop)."""
        return run_sync(self.acall(request), f"{type(self).__name__}.call")

    async def acall(self, request: DecisionRequest) -> DecisionResult:
        """Decide ``request``."""
        start = time.perf_counter()
        if len(request.options) > MAX_OPTIONS:
            raise TooManyOptionsError(
                f"{len(request.options)} options for {request.question!r}: a model is shown at most "
                f"{MAX_OPTIONS} at once; narrow the choice first (e.g. decide the category, then the skill)"
            )
        spent = _Spent()
        result = None
        if self._use_logprobs():
            result = await self._by_logprobs(request, spent)
        if result is None:
            result = await self._by_tool(request, spent)
        return finish(self, request, result, start)

    def _use_logprobs(self) -> bool:
        if self.mode == "logprobs":
            return True
        return (
            self.mode == "auto"
            and bool(getattr(self.provider, "supports_logprobs", False))
            and not self._logprobs_unavailable
        )

    def _messages(self, request: DecisionRequest, instruction: str) -> list[Message]:
        body = render_decision(request, self._descriptions(request))
        return [SystemMessage(content=self.system_prompt), UserMessage(content=f"{body}\n\n{instruction}")]

    def _descriptions(self, request: DecisionRequest) -> Mapping[str, str]:
        """Descriptions for options that came without one (none here; the judge adds some)."""
        return {"none": "None of the other options fits."}

    async def _by_logprobs(self, request: DecisionRequest, spent: _Spent) -> DecisionResult | None:
        letters = letters_for(request.options)
        messages = self._messages(request, letter_instruction(request))
        answers: list[str] = []
        for _ in range(2):
            response = await self._model.request(
                ModelRequest.build(messages, max_tokens=1, temperature=self.temperature, top_logprobs=self.top_logprobs)
            )
            spent.add(response)
            if not response.logprobs:
                if self.mode == "logprobs":
                    raise DecisionError(
                        f'{response.model_ref} returned no log-probabilities; use the llm engine with mode = "tool"'
                    )
                if response.model_ref == self.model:
                    self._logprobs_unavailable = True  # the provider itself has none: go straight to the tool
                answer = response.text.strip()
                if len(answer) == 1 and answer in letters:  # e.g. a fallback without log-probabilities
                    note = f"no probabilities: {response.model_ref} returned no log-probabilities"
                    return spent.result(request.options[letters.index(answer)].id, {}, None, note)
                return None
            position = response.logprobs[0]
            found = letter_logprobs(position, letters)
            if found:
                floor = floor_logprob(position, self.floor_margin)
                scores = {o.id: found.get(letter, floor) for letter, o in zip(letters, request.options)}
                probabilities = softmax(scores)
                selected = max(probabilities, key=probabilities.__getitem__)
                missing = [o.id for letter, o in zip(letters, request.options) if letter not in found]
                note = f"probabilities from the answer letter's log-probabilities (top {self.top_logprobs})"
                if missing:
                    note += f"; not among them, given the floor: {', '.join(missing)}"
                return spent.result(selected, scores, probabilities, note)
            answers.append(repr(response.text.strip()[:200]))
            messages = [
                *messages,
                AssistantMessage(content=response.text),
                UserMessage(content=f"{response.text!r} is not one of the options. {letter_instruction(request)}"),
            ]
        raise self._refused(request, answers)

    async def _by_tool(self, request: DecisionRequest, spent: _Spent) -> DecisionResult:
        ids = request.option_ids
        tool = choice_tool(request)
        messages = self._messages(request, f"Call {CHOICE_TOOL} with the id of the option you choose.")
        answers: list[str] = []
        for _ in range(2):
            response = await self._model.request(
                ModelRequest.build(
                    messages,
                    tools=[tool],
                    tool_choice=CHOICE_TOOL,
                    max_tokens=self.max_tokens,
                    temperature=self.temperature,
                )
            )
            spent.add(response)
            call = next((c for c in response.tool_calls if c.name == CHOICE_TOOL), None)
            answer = call.arguments.get("option") if call is not None else None
            if isinstance(answer, str) and answer in ids:
                note = "no probabilities: the provider returns no log-probabilities, so the choice was forced through a tool"
                return spent.result(answer, {}, None, note)
            shown = repr(answer) if call is not None else repr(response.text.strip()[:200])
            answers.append(shown)
            reminder = f"{shown} is not one of the options; call {CHOICE_TOOL} with one of: {', '.join(ids)}."
            if call is not None:
                messages = [
                    *messages,
                    AssistantMessage(content=response.text, tool_calls=(call,)),
                    ToolResultMessage(tool_call_id=call.id, content=reminder, is_error=True),
                ]
            else:
                messages = [*messages, AssistantMessage(content=response.text), UserMessage(content=reminder)]
        raise self._refused(request, answers)

    def _refused(self, request: DecisionRequest, answers: list[str]) -> DecisionError:
        return DecisionError(
            f"{self.model} answered outside the options of {request.question!r} twice "
            f"({'; then '.join(answers)}); "
            f"the options are: {', '.join(request.option_ids)}"
        )


class _Spent:
    """Usage and the answering model, summed over a decision's calls."""

    def __init__(self) -> None:
        self.usage = Usage()
        self.calls = 0
        self.model: str | None = None

    def add(self, response: Response) -> None:
        self.usage = self.usage + response.usage
        self.calls += 1
        self.model = response.model_ref

    def result(
        self, selected: str, scores: dict[str, float], probabilities: dict[str, float] | None, note: str
    ) -> DecisionResult:
        usage: dict[str, Any] = {**self.usage.to_dict(), "calls": self.calls}
        return DecisionResult(
            selected=selected, scores=scores, probabilities=probabilities, model=self.model, usage=usage, note=note
        )


ENGINE_KEYS = ("mode", "temperature", "top_logprobs", "max_tokens", "system_prompt", "floor_margin")


def engine_options(settings: Mapping[str, object]) -> dict[str, Any]:
    """The :class:`LLMEngine` keyword arguments found in engine settings."""
    return {k: settings[k] for k in ENGINE_KEYS if k in settings}


def build_provider(settings: Mapping[str, object]) -> LLMProvider:
    """The provider engine settings describe (``arg`` from ``llm:provider/model`` wins as the model)."""
    from .registry import create_provider
    from .settings import provider_arguments

    settings = dict(settings)
    if settings.get("arg"):
        settings["model"] = settings["arg"]
    model, kwargs = provider_arguments(settings)
    return create_provider(model, **kwargs)


def create(settings: Mapping[str, object]) -> LLMEngine:
    """The engine registry's factory for ``"llm"``."""
    return LLMEngine(build_provider(settings), **engine_options(settings))
