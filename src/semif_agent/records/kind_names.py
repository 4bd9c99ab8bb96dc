"""The names of the log's kinds of row and the role of each, without their models.

What only needs the names (``semif log --help`` lists the kinds it can show)
imports this module, not pydantic; :mod:`.kinds` pairs each name with its
model. A kind is a **decision** of a run, a **step** a run took that is no
decision, a **record** about a run written after it, or a model **call**.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Literal

Role = Literal["decision", "step", "record", "call"]

ROUTE_KIND = "route"
ASSESS_KIND = "assess"
OUTCOME_KIND = "outcome"
LABEL_KIND = "label"
UNDO_KIND = "undo"
UNLABEL_KIND = "unlabel"
PROPOSE_KIND = "propose"
GENERATE_KIND = "generate"
MODEL_CALL_KIND = "model_call"

ROLES: Mapping[str, Role] = {
    ROUTE_KIND: "decision",
    "shortlist": "decision",
    "activate": "decision",
    "predict": "decision",
    "act": "decision",
    ASSESS_KIND: "decision",
    "create": "decision",
    PROPOSE_KIND: "step",
    GENERATE_KIND: "step",
    OUTCOME_KIND: "record",
    LABEL_KIND: "record",
    UNDO_KIND: "record",
    UNLABEL_KIND: "record",
    MODEL_CALL_KIND: "call",
}
"""Every kind the log holds, in the order it is listed, and its role."""


def listed_kinds() -> list[str]:
    """The kinds ``semif log --kind`` offers: a run's decisions and steps."""
    return [name for name, role in ROLES.items() if role in ("decision", "step")]
