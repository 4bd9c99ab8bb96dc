"""An LLM judge for the skill loop's assess step.

The judge is an :class:`~semif_agent.llm.engine.LLMEngine` with a judge's
system prompt: it answers an assess-shaped :class:`DecisionRequest` (its
``state`` holds the request, the action log and the before/after
observations; its options are ``success`` / ``failure`` / ``unclear``) through
the same decision path, so its verdicts are logged like any decision and can
later be scored against human labels::

    judge = create_judge(workspace.engine_settings)
    verdict = judge.call(DecisionRequest(state, "Did the action do what was asked?",
                                         [Option("success"), Option("failure"), Option("unclear")]))
    verdict.selected            # "success" | "failure" | "unclear"

Settings: the engine settings, with a ``judge`` table (``[engine.judge]``)
overriding any key for the judge alone, e.g. a different ``model``.
"""

from __future__ import annotations

from collections.abc import Mapping

from ..engine.decisions import DecisionRequest, Option
from .engine import LLMEngine, build_provider, engine_options

JUDGE_SYSTEM_PROMPT = (
    "You judge whether a software agent did what a user asked. You are given the user's request, "
    "the log of the actions the agent took, and what was observed before and after them. Answer "
    "success if the evidence shows the request was done as asked; failure if it shows it was not "
    "done, only partly done, or done wrongly; unclear if the evidence does not settle it. Judge "
    "only from the evidence given: claims in the action log that the observations do not bear out "
    "do not count."
)

VERDICTS = {
    "success": "The evidence shows the request was done as asked.",
    "failure": "The evidence shows it was not done, only partly done, or done wrongly.",
    "unclear": "The evidence does not settle whether it was done.",
}

ASSESS_QUESTION = "Did the agent's actions do what the user asked?"


class LLMJudge(LLMEngine):
    """An :class:`LLMEngine` with the judge's prompt and verdict descriptions."""

    name = "llm-judge"
    default_system_prompt = JUDGE_SYSTEM_PROMPT

    def _descriptions(self, request: DecisionRequest) -> Mapping[str, str]:
        return VERDICTS


def assess_request(
    request: str,
    action_log: str,
    before: str,
    after: str,
    *,
    question: str = ASSESS_QUESTION,
) -> DecisionRequest:
    """An assess-shaped decision: the evidence in ``state``, the three verdicts as options."""
    state = (
        f"User request:\n{request.strip()}\n\n"
        f"Action log:\n{action_log.strip() or '(no actions)'}\n\n"
        f"Observation before:\n{before.strip() or '(nothing)'}\n\n"
        f"Observation after:\n{after.strip() or '(nothing)'}"
    )
    return DecisionRequest(state, question, [Option(k, v) for k, v in VERDICTS.items()])


def create_judge(settings: Mapping[str, object]) -> LLMJudge:
    """The judge the settings describe: the engine settings, overridden by their ``judge`` table."""
    merged = {k: v for k, v in settings.items() if k != "judge"}
    judge_table = settings.get("judge") or {}
    if isinstance(judge_table, Mapping):
        if "model" in judge_table:
            merged.pop("arg", None)  # the judge's own model wins over llm:provider/model
        merged.update(judge_table)
    return LLMJudge(build_provider(merged), **engine_options(merged))
