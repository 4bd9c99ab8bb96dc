"""The skill loop: observe -> predict -> act -> observe -> assess.

Names are imported on first use, so a module of this package (the confined
child's, say) loads without the runner and everything it routes with. The
``observe`` function is not among them: the package's ``observe`` is its
module (importing ``semif_agent.loop.observe`` sets it), so it is
``semif_agent.loop.observe.observe``.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from .._lazy import lazy_namespace

_EXPORTS = {
    "SkillRunner": ".runner",
    "RunResult": ".runner",
    "Assessment": ".assess",
    "BudgetedEngine": ".context",
    "Changes": ".observe",
    "Observation": ".observe",
    "diff": ".observe",
    "guarded": ".guard",
    "assessment_request": ".assess",
    "ASSESS_OPTIONS": ".assess",
    "ASSESS_QUESTION": ".assess",
}
__all__ = sorted(_EXPORTS)

if TYPE_CHECKING:  # what a type checker sees: the same names, from the same modules
    from .assess import ASSESS_OPTIONS as ASSESS_OPTIONS
    from .assess import ASSESS_QUESTION as ASSESS_QUESTION
    from .assess import Assessment as Assessment
    from .assess import assessment_request as assessment_request
    from .context import BudgetedEngine as BudgetedEngine
    from .guard import guarded as guarded
    from .observe import Changes as Changes
    from .observe import Observation as Observation
    from .observe import diff as diff
    from .runner import RunResult as RunResult
    from .runner import SkillRunner as SkillRunner
else:  # at run time each name is imported on first use
    __getattr__, __dir__ = lazy_namespace(__name__, _EXPORTS, globals())
