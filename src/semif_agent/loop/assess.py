"""Assessment: did the skill do what was asked? The judge's reading, checked against what the run did.

The judge is a SemIf decision over the run (:func:`assessment_request`: the
request, the action log and the changes; answered by the routing engine, or
the LLM judge when the engine is a model), logged as the run's ``assess``
row. :func:`weigh` sets its verdict against the run's observable evidence
(:mod:`.evidence`); the first rule that applies gives the label:

1. an ``error`` (a body that raised, a refused write, a timeout, a budget
   overrun) is ``failure``; the judge is not asked;
2. a hand-back (the request returned as the new state) is ``failure``: the
   skill chose not to act, so what was asked was not done (it may still have
   been the right skill: the evidence says ``handed_back`` so training can
   tell). It is ``unclear`` if files changed all the same;
3. no verdict (the judge could not decide) is ``unclear``;
4. ``success`` stands only when nothing speaks against it: the skill is the
   kind asked for (``fits``), its log does not say it could not act, what it
   wrote carries some of the request's words (``carries_request``: a draft
   of "Tell Alice I'm running late" that says only "Hi Alice" lost the
   message, however well it is addressed), a
   request to change something changed files (when the data dirs are all
   it could change: a code skill), a question changed none, an answer that
   changed nothing does not say there was nothing to find (the wrong skill,
   or the right one looking in the wrong place, says that too), none of the
   skill's own decisions was a close call (margin under
   :data:`CLOSE_CALL_BELOW`), and the judge gave ``success`` a probability
   of at least :data:`UNSURE_BELOW`, or a lower one while the run shows what
   such a request needs (as in rule 5: it changed files for anything but a
   question, or answered a question without changing any); otherwise
   ``unclear``. (An embedded judge's probabilities are those of a similarity
   model: a correct note or listing often gets 0.55-0.7, and "unclear" is for
   runs a person has to look at, not for those the run's own record settles);
5. ``failure`` is ``unclear`` when the run shows what such a request needs:
   it fits, its log reports no problem, what it wrote is not empty of the
   request's words, and it changed files (for anything
   but a question) or answered without changing any (for anything but a
   change). Otherwise it stands when the evidence agrees (the skill is not
   the kind asked for, its log says it could not act, a code skill changed
   nothing for a change request, a question changed files) or the judge is
   sure, and is ``unclear`` when the judge is unsure;
6. ``unclear`` from the judge stays ``unclear``.

So evidence alone never makes a ``success``, and only an error or a
hand-back makes a ``failure`` without the judge: a wrong reading of the
request's wording costs an ``unclear``, or at worst backs a failure the
judge gave itself. The outcome row keeps the evidence, the judge's
probability and the rule that decided (``evidence``), so training can weigh
each label by how it was reached. ``bench/assessment.py`` measures the
labels against people's.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from .._text import clip
from ..engine.decisions import DecisionRequest, DecisionResult, Option
from .evidence import Evidence, read_request
from .observe import Changes

ASSESS_QUESTION = "Did the skill do what the request asked?"
LABELS = ("success", "failure", "unclear")
ASSESS_OPTIONS = [
    Option(
        "success", "Done: the request was carried out; the result was written, saved, created, added, found or listed."
    ),
    Option("failure", "Failed: error, exception, refused, could not, no match, nothing was done."),
    Option("unclear", "Unclear: the outcome is uncertain or partly done; needs a human check."),
]

UNSURE_BELOW = (
    0.75  # the judge's probability for its verdict under which it is too unsure to label (bench/assessment.py)
)
CLOSE_CALL_BELOW = 0.05  # a skill's own decision whose top two options are nearer than this is a coin toss
_EXCERPT = 90


@dataclass
class Assessment:
    """The run's outcome label (``success`` / ``failure`` / ``unclear``), one sentence why, and what it rests on.

    ``decision`` is the judge's (request, verdict) when it was asked;
    ``evidence`` the facts weighed and the ``rule`` that decided.
    """

    label: str
    reason: str
    decision: tuple[DecisionRequest, DecisionResult] | None = None
    evidence: dict[str, Any] = field(default_factory=dict)

    @property
    def verdict(self) -> str | None:
        """What the judge said on its own, if it was asked."""
        return self.decision[1].selected if self.decision is not None else None

    def to_dict(self) -> dict[str, Any]:
        out: dict[str, Any] = {"label": self.label, "reason": self.reason}
        if self.decision is not None:
            out["engine"] = self.decision[1].engine
            out["scores"] = self.decision[1].to_dict()["scores"]
        if self.evidence:
            out["evidence"] = self.evidence
        return out


def assessment_request(request_text: str, action_log: str, changes: Changes) -> DecisionRequest:
    """The decision the judge answers: the request, the action log and what changed.

    "No files changed" is said only of a request that is not a question or a lookup: for one that
    is, changing nothing is what was asked, and the words read to an embedded judge as "nothing was
    done" (the failure option's words), which made correct answers look unsure or failed.
    """
    state = f"Request: {request_text}\nAction log: {action_log}"
    if not changes.empty or read_request(request_text).asks != "lookup":
        state += f"\nChanges: {changes.summary()}"
    return DecisionRequest(state=state, question=ASSESS_QUESTION, options=list(ASSESS_OPTIONS))


def needs_judge(evidence: Evidence) -> bool:
    """False when the evidence settles the run alone (an error)."""
    return evidence.error is None


def settled(label: str, reason: str, evidence: Evidence, rule: str) -> Assessment:
    """A label the loop fixes before any judging (no skill fits, a stub, instructions handed back), with its evidence."""
    return Assessment(label, reason, evidence={**evidence.to_dict(), "rule": rule})


def weigh(
    evidence: Evidence,
    decision: tuple[DecisionRequest, DecisionResult] | None = None,
    *,
    judge_error: str | None = None,
) -> Assessment:
    """The label for a run: the judge's verdict (``decision``) weighed against ``evidence`` (see the module's rules)."""
    verdict = decision[1] if decision is not None else None
    label, rule, reason = _label(evidence, verdict, judge_error)
    facts = evidence.to_dict()
    if verdict is not None:
        facts["judge"] = {
            "label": verdict.selected,
            "p": _round(_probability(verdict)),
            "margin": _round(_margin(verdict)),
        }
    facts["rule"] = rule
    return Assessment(label, reason, decision, facts)


def _label(evidence: Evidence, verdict: DecisionResult | None, judge_error: str | None) -> tuple[str, str, str]:
    """``(label, rule, reason)``."""
    if evidence.error is not None:
        return "failure", "error", f"it failed: {_short(evidence.error)}"
    if evidence.handed_back:
        if evidence.changed:
            return "unclear", "hand-back", f"it handed the request back but {_changed(evidence)}"
        return "failure", "hand-back", "it handed the request back without acting"
    if verdict is None:
        return "unclear", "no verdict", f"the judge could not decide: {_short(judge_error or 'no answer')}"
    said, p = verdict.selected, _probability(verdict)
    judged = f"judged {said}" + (f" (p={p:.2f})" if p is not None else "")
    unsure = p is not None and p < UNSURE_BELOW
    if said == "success":
        doubt = _doubt_success(evidence)
        if doubt:
            return "unclear", "contradicted", f"{judged}, but {doubt}"
        done = _doing(evidence)
        if unsure and not done:
            return "unclear", "unsure", f"{judged}: too unsure to label"
        if unsure:
            return "success", "judge and evidence", f"{judged}, and {done}"
        return "success", "judge", f"{judged}, and {_done(evidence)}"
    if said == "failure":
        done = _doing(evidence)
        if done:
            return "unclear", "contradicted", f"{judged}, but {done}"
        agrees = _doubt_success(evidence, close_calls=False)
        if agrees:
            return "failure", "judge", f"{judged}, and {agrees}"
        if unsure:
            return "unclear", "unsure", f"{judged}: too unsure to label"
        return "failure", "judge", f"{judged}, and {_done(evidence)}"
    return "unclear", "judge", f"{judged}"


def _doubt_success(evidence: Evidence, *, close_calls: bool = True) -> str | None:
    """What speaks against a success verdict, if anything (a close call only with ``close_calls``)."""
    if evidence.fits is False:
        return _misfit(evidence)
    if evidence.could_not:
        return "its log says it could not act"
    if evidence.carries_request is False:
        return f"what it wrote carries none of the request's words ({_changed(evidence)})"
    if evidence.asks == "change" and not evidence.changed and evidence.confined:
        return f"nothing was changed for a request to {evidence.verb!r}"
    if evidence.asks == "lookup" and evidence.changed:
        return f"a question {_changed(evidence)}"
    if close_calls and evidence.found_nothing and not evidence.changed:
        return "it found nothing, which does not show it looked in the right place"
    call = evidence.close_call
    if close_calls and call is not None and call.margin < CLOSE_CALL_BELOW:
        return f"its answer {call.selected!r} to {call.question!r} was a close call (margin {call.margin:.2f})"
    return None


def _doing(evidence: Evidence) -> str | None:
    """What shows the run did what such a request needs (against a failure verdict), if anything."""
    if evidence.fits is False or evidence.could_not or evidence.carries_request is False:
        return None
    if evidence.changed and evidence.asks != "lookup":
        return f"it {_changed(evidence)} and reported no problem"
    if evidence.answered and evidence.asks != "change" and not evidence.changed:
        return "it answered and reported no problem"
    return None


def _misfit(evidence: Evidence) -> str:
    if evidence.verb:
        return f"the request asks to {evidence.verb!r}, which {evidence.skill} does not do"
    return f"none of the request's words are {evidence.skill}'s"


def _done(evidence: Evidence) -> str:
    if evidence.changed:
        return f"it {_changed(evidence)}"
    if evidence.answered:
        return "it answered without changing files"
    return "it changed no files"


def _changed(evidence: Evidence) -> str:
    """What the run changed, as a verb phrase: "created data/drafts/x.txt", "changed 3 files"."""
    changes = evidence.changes
    done = [
        (verb, paths)
        for verb, paths in (("created", changes.created), ("modified", changes.modified), ("deleted", changes.deleted))
        if paths
    ]
    if len(done) == 1 and len(done[0][1]) == 1:
        return f"{done[0][0]} {done[0][1][0]}"
    return f"changed {evidence.changed} files"


def _probability(verdict: DecisionResult) -> float | None:
    return verdict.probabilities.get(verdict.selected) if verdict.probabilities else None


def _margin(verdict: DecisionResult) -> float | None:
    ranked = sorted((verdict.probabilities or {}).values(), reverse=True)
    return ranked[0] - ranked[1] if len(ranked) > 1 else None


def _round(value: float | None) -> float | None:
    return round(value, 3) if value is not None else None


def _short(text: str) -> str:
    return clip(text.strip().splitlines()[0] if text.strip() else "", _EXCERPT)
