"""Assessment: did the skill do what was asked? A SemIf decision over the run's evidence."""

from __future__ import annotations

from ..engine.decisions import DecisionRequest, Option
from .observe import Changes

ASSESS_QUESTION = "Did the skill do what the request asked?"
LABELS = ("success", "failure", "unclear")
ASSESS_OPTIONS = [
    Option("success", "Done: the request was carried out; the result was written, saved, created, added, found or listed."),
    Option("failure", "Failed: error, exception, refused, could not, no match, nothing was done."),
    Option("unclear", "Unclear: the outcome is uncertain or partly done; needs a human check."),
]


def assessment_request(request_text: str, action_log: str, changes: Changes) -> DecisionRequest:
    """The decision the judge answers: the request, the action log and what changed."""
    state = f"Request: {request_text}\nAction log: {action_log}\nChanges: {changes.summary()}"
    return DecisionRequest(state=state, question=ASSESS_QUESTION, options=list(ASSESS_OPTIONS))
