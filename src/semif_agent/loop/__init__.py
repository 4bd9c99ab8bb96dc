"""The skill loop: observe -> predict -> act -> observe -> assess."""

from .assess import ASSESS_OPTIONS, ASSESS_QUESTION, assessment_request
from .context import BudgetedEngine
from .guard import guarded
from .observe import Changes, Observation, diff, observe
from .runner import Assessment, RunResult, SkillRunner

__all__ = [
    "SkillRunner",
    "RunResult",
    "Assessment",
    "BudgetedEngine",
    "Changes",
    "Observation",
    "observe",
    "diff",
    "guarded",
    "assessment_request",
    "ASSESS_OPTIONS",
    "ASSESS_QUESTION",
]
