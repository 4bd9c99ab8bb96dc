"""A model re-ranking ``find``'s shortlist: the ranker's best skills and ``none`` as one decision of at most 16 options.

The ranker (:mod:`._ranking`) scores every skill; a model reads only the
:data:`~semif_agent.routing.strategies.SHORTLIST_SIZE` best (15) and
``none``, with their descriptions, and picks one, as the ``shortlist``
strategy's decision does. Its answer counts as much as the ranking: each
option's probability becomes the mean of the ranker's and the model's (the
model's distribution over the options when it gives one, else all on its
pick), and the skills are ordered by it (ties: the model's pick first, then
the ranker's order). A model that picks a skill ranked fifth so puts it
first; one that picks ``none`` makes ``none`` the best answer.

It is on when ``semif.toml`` says ``[mcp] rerank = true``, off when it says
``false``, and otherwise on only when the workspace's engine is an LLM
engine (a model is configured to decide).
"""

from __future__ import annotations

from dataclasses import dataclass

from ..engine.base import Engine, decide
from ..engine.decisions import NONE_ID, DecisionRequest, DecisionResult, Option
from ..errors import DecisionError
from ..routing.strategies import SHORTLIST_QUESTION
from ..tree.tree import NONE_SKILL
from ..workspace import Workspace
from ._ranking import Ranked


@dataclass(frozen=True)
class Reranked:
    """The shortlist as the model re-ranked it, and the decision it answered (``result`` None: the model failed)."""

    ranked: Ranked
    request: DecisionRequest
    result: DecisionResult | None
    error: str | None = None


def rerank_configured(workspace: Workspace, engine: Engine) -> bool:
    """Whether ``find`` asks ``engine`` to re-rank: ``[mcp] rerank`` when set, else whether it is an LLM engine."""
    setting = workspace.settings.mcp.rerank
    return setting if setting is not None else engine.name == "llm"


async def rerank(engine: Engine, text: str, ranked: Ranked, descriptions: dict[str, str]) -> Reranked:
    """``ranked`` (at most 15 skills) re-ranked by ``engine``'s decision among them and ``none``.

    A model that fails (:class:`~semif_agent.errors.DecisionError`) leaves the
    ranking as it was, and says why in ``error``.
    """
    options = [Option(name, descriptions[name]) for name in ranked.names] + [NONE_SKILL]
    request = DecisionRequest(text, SHORTLIST_QUESTION, options)
    try:
        result = await decide(engine, request)
    except DecisionError as exc:
        return Reranked(ranked, request, None, error=str(exc))
    votes = model_distribution(result, [o.id for o in options])
    mixed = {name: (p + votes[name]) / 2 for name, p in zip(ranked.names, ranked.probabilities)}
    scores = dict(zip(ranked.names, ranked.scores))
    order = sorted(ranked.names, key=lambda name: (-mixed[name], name != result.selected))
    return Reranked(
        Ranked(
            names=order,
            probabilities=[mixed[name] for name in order],
            scores=[scores[name] for name in order],
            none_probability=(ranked.none_probability + votes[NONE_ID]) / 2,
            none_score=ranked.none_score,
            copies=[ranked.copies_of(name) for name in order],
        ),
        request,
        result,
    )


def model_distribution(result: DecisionResult, ids: list[str]) -> dict[str, float]:
    """The model's probability of each of ``ids``: its own distribution over them when it gives one, else 1 on its pick."""
    given = {i: max(0.0, float((result.probabilities or {}).get(i, 0.0))) for i in ids}
    total = sum(given.values())
    if total > 0:
        return {i: p / total for i, p in given.items()}
    return {i: 1.0 if i == result.selected else 0.0 for i in ids}
