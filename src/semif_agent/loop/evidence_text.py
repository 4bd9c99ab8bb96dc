"""The evidence of an assessment as people read it: short named lines, one per fact that applies.

An outcome row keeps its evidence as data (:meth:`.evidence.Evidence.to_dict`,
the judge's verdict, the rule that decided and the act gate's reading, see
:mod:`.assess` and :mod:`.gate`). ``semif log show`` prints these lines and the
web view's run page shows them as a table, so both say the same thing the same
way::

    evidence    judge:      success (94%)
                decided by: the judge's verdict
                wording:    asks to change something; its first word "email" is one of email.compose's words
                changed:    1 file
                confined:   yes: a code skill writes only to the data dirs
                answered:   yes: it returned a result
                act gate:   acted: email.compose at 89% clears the act threshold 16%

A fact that does not apply is left out (no hand-back, no error, a margin too
wide to be a close call, whether a run that reached no skill was confined),
and no value is shown as
Python writes it: yes / no, percentages, sentences. A key this module does not
know (an older or newer log) is still shown, its value made readable the same way.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import TypeGuard

from .._text import percent
from .assess import CLOSE_CALL_BELOW

RULES = {
    "error": "the error: an error is a failure",
    "hand-back": "the hand-back: the skill returned the request without acting",
    "no verdict": "no verdict: the judge could not decide",
    "contradicted": "the run's evidence, against the judge's verdict",
    "unsure": "the judge's doubt: too unsure to label",
    "judge": "the judge's verdict",
    "judge and evidence": "the judge's verdict, unsure but borne out by what the run did",
    "no skill": "no skill fits the request",
    "gate": "the act gate, which handed the request back",
    "stub": "the skill is a stub",
    "instructions": "its instructions were handed back for someone to follow",
}
"""What each rule of :mod:`.assess` (and the loop's settled labels) means, as the ``decided by`` line says it."""

ASKS = {"lookup": "asks to look something up", "change": "asks to change something"}

_SHOWN = (
    "judge",
    "rule",
    "error",
    "handed_back",
    "could_not",
    "asks",
    "verb",
    "fits",
    "changed",
    "confined",
    "answered",
    "found_nothing",
    "close_call",
    "carries_request",
    "gate",
)
"""The keys :func:`evidence_lines` reads itself; any other key is shown after them as it comes."""


def evidence_lines(evidence: Mapping[str, object], skill: str | None = None) -> list[tuple[str, str]]:
    """``(name, text)`` for each fact of ``evidence`` (an outcome row's) that applies to a run that went to ``skill``."""
    lines: list[tuple[str, str]] = []

    def add(name: str, text: str | None) -> None:
        if text:
            lines.append((name, text))

    add("judge", _judge(evidence.get("judge")))
    rule = evidence.get("rule")
    add("decided by", RULES.get(str(rule), str(rule)) if rule else None)
    add("error", "yes: the skill did not finish" if evidence.get("error") else None)
    add("handed back", "yes: the request came back unchanged" if evidence.get("handed_back") else None)
    add("could not", "yes: its log says it could not act" if evidence.get("could_not") else None)
    add("wording", _wording(evidence, skill))
    if skill is not None or evidence.get("changed"):
        add("changed", _files(evidence.get("changed")))
    if skill is not None:  # whether a run that reached no skill was confined means nothing
        confined = evidence.get("confined")
        add(
            "confined",
            "yes: a code skill writes only to the data dirs"
            if confined
            else "no: a SKILL.md skill may act outside the data dirs, or answer in text"
            if confined is False
            else None,
        )
    add("answered", "yes: it returned a result" if evidence.get("answered") else None)
    lost = evidence.get("carries_request") is False
    add("wrote", "none of the request's words: what it asked to say is not in what was written" if lost else None)
    add("found nothing", "its answer says there was nothing to find" if evidence.get("found_nothing") else None)
    margin = evidence.get("close_call")
    # a wider margin spoke for nothing
    close = margin if isinstance(margin, (int, float)) and margin < CLOSE_CALL_BELOW else None
    add("close call", f"its own closest decision was won by {_points(close)}" if close is not None else None)
    add("act gate", _gate(evidence.get("gate")))
    for key, value in evidence.items():
        if key not in _SHOWN:
            add(key.replace("_", " "), readable(value))
    return lines


def readable(value: object) -> str:
    """Any logged value as text for people: yes / no, numbers rounded, lists and tables as ``name value`` pairs;
    ``""`` for nothing (None, empty), which the caller leaves out."""
    if value is None:
        return ""
    if isinstance(value, bool):
        return "yes" if value else "no"
    if isinstance(value, float):
        return f"{value:.3g}"
    if isinstance(value, Mapping):
        return ", ".join(f"{str(k).replace('_', ' ')} {shown}" for k, v in value.items() if (shown := readable(v)))
    if isinstance(value, (list, tuple)):
        return "; ".join(shown for item in value if (shown := readable(item)))
    return str(value)


def _judge(judge: object) -> str | None:
    """The judge's verdict with its probability: "success (94%)"."""
    if not isinstance(judge, Mapping) or not judge.get("label"):
        return readable(judge) or None
    p = judge.get("p")
    return f"{judge['label']} ({percent(p)})" if _is_number(p) else str(judge["label"])


def _wording(evidence: Mapping[str, object], skill: str | None) -> str | None:
    """What the request's wording asks for, and whether it is in the skill's words, as one sentence:
    'asks to change something; its first word "email" is one of email.compose's words'."""
    asks, verb, fits = evidence.get("asks"), evidence.get("verb"), evidence.get("fits")
    if asks is None and verb is None and fits is None:
        return None
    parts = [ASKS[asks]] if isinstance(asks, str) and asks in ASKS else []
    if verb:
        first = f'its first word "{verb}"'
        if skill and fits is not None:
            first += f" is one of {skill}'s words" if fits else f" is not one of {skill}'s words"
        parts.append(first)
    elif skill and fits is not None:
        parts.append(f"in {skill}'s words" if fits else f"in none of {skill}'s words")
    return "; ".join(parts) or None


def _gate(gate: object) -> str | None:
    """The act gate's decision as a sentence: what it did and why."""
    if not isinstance(gate, Mapping):
        return readable(gate) or None
    did = "acted" if gate.get("acts") else "handed the request back"
    reason = gate.get("reason")
    text = f"{did}: {reason}" if reason else did
    if gate.get("rerouted_from"):
        text += f" (rerouted from {gate['rerouted_from']})"
    return text


def _files(count: object) -> str | None:
    if not _is_number(count):
        return None
    return "no files" if count == 0 else "1 file" if count == 1 else f"{count} files"


def _points(margin: float) -> str:
    """A margin between two probabilities in percentage points: "3 points", "<1 point"."""
    points = margin * 100
    return "<1 point" if points < 1 else f"{points:.0f} points"


def _is_number(value: object) -> TypeGuard[int | float]:
    return isinstance(value, (int, float)) and not isinstance(value, bool)
