"""The skill loop: observe -> predict -> act -> observe -> assess.

Names are imported on first use, so a module of this package (the confined
child's, say) loads without the runner and everything it routes with.
"""

from __future__ import annotations

from .._lazy import lazy_namespace

_EXPORTS = {
    "SkillRunner": ".runner",
    "RunResult": ".runner",
    "Assessment": ".assess",
    "BudgetedEngine": ".context",
    "Changes": ".observe",
    "Observation": ".observe",
    "observe": ".observe",
    "diff": ".observe",
    "guarded": ".guard",
    "assessment_request": ".assess",
    "ASSESS_OPTIONS": ".assess",
    "ASSESS_QUESTION": ".assess",
}
__all__ = sorted(_EXPORTS)

__getattr__, __dir__ = lazy_namespace(__name__, _EXPORTS, globals())
