"""Probabilities that mean what they say, before any training: fitted from what the tree itself holds.

A leaf-aware strategy turns its leaf scores into probabilities with a softmax
(``none`` scoring the threshold). How sharp that softmax should be depends on
the tree: how many skills it has, how near their descriptions lie, how much a
skill's example requests vary. So the temperature (and how much BM25 is
blended with the cosine) is fitted per version of the tree, from its skills'
example requests routed leave-one-out: each example is scored against the tree
with its own skill's example left out, its skill the target. No label and no
test request is used. The weight is the one that routes the held-out examples
best (ties: the default); the temperature the one that minimises their
negative log-likelihood.

A tree with too few examples (fewer than :data:`MIN_SKILLS_WITH_EXAMPLES`
skills with at least :data:`MIN_EXAMPLES` each) has nothing of its own to fit
on. Its probabilities are made scale-free instead (:func:`zero_shot`): each
request's temperature is its own spread of leaf scores (their standard
deviation) times a factor that grows with the logarithm of the number of
leaves, so a tree of terse descriptions (low, bunched cosines) and one of rich
ones (higher, spread cosines) get comparable probabilities; and ``none``
starts at :data:`ZERO_SHOT_NONE`. These constants were fitted once, without
the test sets: on BFCL's live requests (699 functions in their own words, and
its irrelevant requests), the starter workspace stripped of its examples, and
HWU64's train split (``bench/calibration.py`` measures them).
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from types import ModuleType
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    import numpy as np
    from numpy.typing import NDArray

    from .._arrays import Indexes, Scores

DEFAULT_TEMPERATURE = 0.0588
"""The softmax temperature of blended leaf scores for a tree without enough examples (fitted on BFCL, 0 shots)."""
DEFAULT_LEXICAL_WEIGHT = 0.5
"""How much BM25 is blended with the cosine for a tree without enough examples (fitted on BFCL, 0 shots)."""
LEXICAL_WEIGHTS = (0.0, 0.1, 0.25, 0.5)
"""The blends tried on the held-out examples."""
MIN_HELD_OUT_FOR_BLEND = 100
"""Fewer held-out examples, and the blend stays the default: a few dozen cannot tell blends apart beyond noise
(on the starter's 35, a blend one example better there routed 5 of its 111 requests worse)."""
SPREAD_TEMPERATURE = (0.50, 0.05)
"""Without examples, a request's temperature is ``(a + b * ln(leaves)) * spread`` (its leaf scores' standard
deviation): fitted for the least worst calibration error over the development sets named above (the starter's
``none_examples`` counted as requests out of scope) and a small set of everyday requests on eight skills described
tersely and richly (ECE 0.090 on HWU64's train split, 0.089 on BFCL, 0.098 on the stripped starter, 0.115 on the
small set). The more leaves, the more of them share the mass a sharp softmax would give the best, hence the
logarithm. How much of a tree's traffic no skill serves moves the best value (the stripped starter, a third out of
scope, wants it higher than sets with none), and nothing in a tree without examples tells it."""
NONE_ROUTE_SCORE = (0.18, 0.03)
"""Where ``none`` scores in the leaf softmax that gives a route ended by an engine's ``none`` its probability
(``chain``, ``beam``, ``shortlist``): ``a + b * ln(words)``, ``words`` the mean number of words a leaf is embedded
as (:func:`none_route_score`). Terse descriptions ("alarm set") score the requests they serve low, so a low best
score says less that no skill serves a request than it does next to descriptions of a sentence or two: ``none``
must score lower there. No constant served both: the starter stripped of its examples (a third of its requests out
of scope) wanted 0.27 to 0.29, HWU64's train split (every request in scope, two words a leaf) 0.19 to 0.23. Fitted
for the least worst calibration error of those strategies on both and on the starter with its examples (BFCL's
tree, 22 words a leaf, moves the same way)."""
MIN_SPREAD = 0.05
"""The least spread a request's temperature is scaled by (a tree of two or three leaves has a spread of one margin)."""
ZERO_SHOT_NONE = 0.17
"""Where ``none`` starts on blended scores when a tree has no examples to fit it: the highest cut that loses at most
0.5% of the requests routed right on each development set (0.4% on HWU64's train split, none on BFCL or the
stripped starter). A tree of terse descriptions ("alarm set") scores its own requests low: the engine's 0.35 sent
12% of HWU64's requests to ``none``. Out-of-scope requests written close to the skills ("cancel my appointment"
next to "schedule an appointment") score like in-scope ones; no label-free measure told them apart, so a tree
catches them with ``none_examples`` and skill examples (a fitted cut) or leaves them to the act gate."""
MIN_EXAMPLES = 2
MIN_SKILLS_WITH_EXAMPLES = 3
ECE_BINS = 10
_LOG_T_RANGE = (math.log(0.002), math.log(2.0))


@dataclass(frozen=True)
class Calibration:
    """How a tree's leaf scores become probabilities: the blend, the temperature, and what they were fitted on.

    ``held_out`` is the number of example requests routed leave-one-out to fit
    them (0: the defaults); ``accuracy`` how many of those went to their own
    skill at the chosen blend (None for the defaults).
    """

    temperature: float = DEFAULT_TEMPERATURE
    lexical_weight: float = DEFAULT_LEXICAL_WEIGHT
    held_out: int = 0
    accuracy: float | None = None
    none_threshold: float | None = None  # where ``none`` starts, fitted with them (None: the engine's default)
    spread_scale: float | None = None  # a request's temperature per unit of its scores' spread (None: fixed)

    @property
    def fitted(self) -> bool:
        return self.held_out > 0

    def temperature_of(self, leaf_scores: Scores | Sequence[float], numpy: ModuleType | None = None) -> float:
        """The softmax temperature for one request's ``leaf_scores``: :attr:`temperature`, or, without examples to
        fit one, :attr:`spread_scale` times the scores' standard deviation (at least :data:`MIN_SPREAD`)."""
        if self.spread_scale is None or not len(leaf_scores):
            return self.temperature
        if numpy is not None:
            spread = float(numpy.std(leaf_scores))
        else:
            mean = sum(leaf_scores) / len(leaf_scores)
            spread = math.sqrt(sum((v - mean) ** 2 for v in leaf_scores) / len(leaf_scores))
        return self.spread_scale * max(spread, MIN_SPREAD)

    def describe(self) -> str:
        if not self.fitted:
            if self.spread_scale is not None:
                return (
                    f"temperature {self.spread_scale:.3g} x each request's spread of leaf scores, none from "
                    f"{self.none_threshold:.3g} (the defaults: the tree has too few examples to fit them)"
                )
            return f"temperature {self.temperature:g} (the default: the tree has too few examples to fit one)"
        temperature = (
            f"temperature {self.spread_scale:.4g} x each request's spread of leaf scores"
            if self.spread_scale is not None
            else f"temperature {self.temperature:.4g}"
        )
        return (
            f"{temperature}, BM25 weight {self.lexical_weight:g}, none from "
            f"{self.none_threshold:.3g}, fitted on {self.held_out} examples held out "
            f"({self.accuracy:.0%} routed to their skill)"
        )


def zero_shot(leaves: int, lexical_weight: float, none_threshold: float | None) -> Calibration:
    """The scale-free calibration of a tree of ``leaves`` skills without examples to fit one (no label used)."""
    base, per_log_leaf = SPREAD_TEMPERATURE
    return Calibration(
        lexical_weight=lexical_weight,
        none_threshold=none_threshold,
        spread_scale=round(base + per_log_leaf * math.log(max(leaves, 1)), 4),
    )


def none_route_score(words_per_leaf: float) -> float:
    """Where ``none`` scores when an engine ended a route with it, on a tree whose leaves average
    ``words_per_leaf`` words (see :data:`NONE_ROUTE_SCORE`)."""
    base, per_log_word = NONE_ROUTE_SCORE
    return base + per_log_word * math.log(max(words_per_leaf, 1.0))


def expected_calibration_error(
    confidences: Sequence[float], correct: Sequence[bool], bins: int = ECE_BINS
) -> float | None:
    """ECE: over ``bins`` equal-width bins of the confidence, the mean gap between confidence and accuracy, weighted by size.

    ``None`` when there is nothing to measure. A confidence of exactly 0 falls in the first bin.
    """
    pairs = list(zip(confidences, correct))
    if not pairs:
        return None
    totals = [[0.0, 0.0, 0] for _ in range(bins)]
    for confidence, right in pairs:
        b = min(max(math.ceil(confidence * bins) - 1, 0), bins - 1)
        totals[b][0] += confidence
        totals[b][1] += bool(right)
        totals[b][2] += 1
    gap = sum(abs(conf - hits) for conf, hits, n in totals if n)
    return round(gap / len(pairs), 4)


def fit_temperature(logits: Scores, targets: Indexes, numpy: ModuleType, spreads: Scores | None = None) -> float:
    """The temperature whose softmax of ``logits`` (rows of scores) gives ``targets`` (column indexes) the least NLL.

    With ``spreads`` (one per row), row ``i`` is softmaxed at the temperature
    times ``spreads[i]``, and the factor is what is fitted. A golden-section
    search over the logarithm of the temperature (the NLL is unimodal in it
    for a fixed set of scores), from 0.002 to 2.
    """
    np = numpy
    rows = np.arange(len(targets))
    per_row = np.ones((len(targets), 1)) if spreads is None else np.asarray(spreads).reshape(-1, 1)

    def nll(log_t: float) -> float:
        return mean_nll(logits / (math.exp(log_t) * per_row), targets, rows, np)

    low, high = _LOG_T_RANGE
    ratio = (math.sqrt(5) - 1) / 2
    a, b = high - ratio * (high - low), low + ratio * (high - low)
    fa, fb = nll(a), nll(b)
    for _ in range(60):
        if fa < fb:
            high, b, fb = b, a, fa
            a = high - ratio * (high - low)
            fa = nll(a)
        else:
            low, a, fa = a, b, fb
            b = low + ratio * (high - low)
            fb = nll(b)
    return round(math.exp((low + high) / 2), 5)


def mean_nll(z: Scores, targets: Indexes, rows: Indexes, numpy: ModuleType) -> float:
    """The mean negative log-likelihood of ``targets`` under the softmax of each row of ``z``."""
    z = z - z.max(axis=1, keepdims=True)
    return float((numpy.log(numpy.exp(z).sum(axis=1)) - z[rows, targets]).mean())


def spreads_of(scores: Scores, numpy: ModuleType) -> Scores:
    """Each row's spread of leaf scores (standard deviation, at least :data:`MIN_SPREAD`)."""
    return numpy.maximum(scores.std(axis=1), MIN_SPREAD)


def enough_examples(example_counts: Sequence[int]) -> bool:
    """Whether a tree whose skills have these many examples each can be calibrated from them."""
    return sum(n >= MIN_EXAMPLES for n in example_counts) >= MIN_SKILLS_WITH_EXAMPLES


IN_SCOPE_KEPT = 1.0
"""Without examples of what no skill serves, the share of the scores with which held-out examples reached their own
skill that ``none`` starts below: all of them. Nothing then tells where requests no skill serves score, and each
held-out example cut stands for more requests lost: on validation splits drawn from the train requests of HWU64 (10
shots, 3 draws), cutting the lowest 0.5% cost 0.2 in-scope points against no cut, and 0.7 with 16 intents held out as
out of scope (1.7% of those caught); cutting none of them 0.1 and 0.3 (0.4%)."""

NONE_TRADE = 10.0
"""How many times the share of held-out examples it takes from their skill a ``none`` cut must catch of the tree's
``none_examples`` to be worth it. A request no skill serves routed to a skill still meets the act gate, which weighs
it against the ``none_examples`` one by one (:mod:`semif_agent.loop.gate`); a request a skill serves sent to ``none``
is lost. Examples of what no skill serves written close to the skills (HWU64 with 16 intents held out as out of
scope, 10 shots, on validation splits drawn from its train requests) made the balanced best cut catch one in ten of
them for two in-scope requests in a hundred (a trade of 5), and the walks that do not fold examples into their leaves
routed 41% right there against 53% with no cut; from 10 up, neither loses more than 0.3 points to its cut. The
starter's ``none_examples``, far from its skills, are worth theirs: 17 of 31 caught for 2 of its 72 held-out
examples (a trade of 20); from 3 to 15 its cut stays there."""

NEAR = 0.1
"""BM25 re-ranks only the leaves whose cosine is within this of the best: a clear cosine winner stays the winner."""


def blend(cosines: Scores, keywords: Scores | None, weight: float, numpy: ModuleType | None) -> Scores:
    """Cosines with BM25 added at ``weight`` to the leaves within :data:`NEAR` of the best cosine (per row)."""
    if keywords is None or not weight:
        return cosines
    near = cosines >= cosines.max(axis=-1, keepdims=True) - NEAR
    return cosines + weight * keywords * near


FIND_LEXICAL_WEIGHT = 0.25
"""How much BM25 counts against the cosine (each scaled by its spread) when ranking a shortlist to find skills by.

At 1 a single rare word a request shares with a skill's text outweighed the meaning of the rest ("inventory" took
a request about counting a shop's stock to Zoho Inventory); on requests written for real skills in users' words
(``bench/data/real_skill_requests_dev.jsonl``, 4,055 skills of public collections) a quarter put the right skill
first for 39% of them against 29% at 1 (47.5% against 42.5% with the SKILL.md bodies' "when to use" items), and any
weight from 0.15 to 0.35 did nearly as well."""


def fuse(cosines: Scores, keywords: Scores | None, weight: float, numpy: ModuleType) -> Scores:
    """Cosines and BM25 fused per row over every leaf (z-score fusion, BM25 at ``weight``), in cosine units.

    Each signal counts by its spread in the row, so neither swamps the other
    whatever the number of leaves; the fused row is mapped back onto the
    cosines' mean and spread, so a temperature or threshold keeps its
    meaning. A row without a known keyword (BM25 all equal) is its cosines.
    On real SKILL.md collections, where a word the encoder misses often names
    the skill, this finds the right one more often than either alone or
    :func:`blend` (``bench/skill_retrieval.py``); on short intent names
    (HWU64) :func:`blend` routes better, so routing keeps it.
    """
    if keywords is None or not weight:
        return cosines
    np = numpy
    spread = cosines.std(axis=-1, keepdims=True)
    keyword_spread = keywords.std(axis=-1, keepdims=True)
    ratio = np.divide(spread, keyword_spread, out=np.zeros_like(spread), where=keyword_spread > 0)
    fused = cosines + weight * ratio * keywords
    fused_spread = fused.std(axis=-1, keepdims=True)
    scale = np.divide(spread, fused_spread, out=np.ones_like(spread), where=fused_spread > 0)
    return cosines.mean(axis=-1, keepdims=True) + (fused - fused.mean(axis=-1, keepdims=True)) * scale


def fit_none_threshold(
    tops: Scores, right: NDArray[np.bool_], none_tops: Scores, default: float, numpy: ModuleType
) -> float:
    """Where ``none`` should start, from held-out examples' best scores (``tops``, ``right``: reached their skill)
    and the best scores of requests no skill serves (``none_tops``, maybe empty).

    Without ``none_tops``: below :data:`IN_SCOPE_KEPT` of the right routes
    (every one). With them: the threshold that maximises the balanced accuracy
    (the share of held-out examples routed to their skill and kept, plus the
    share of the others sent to ``none``) among those that take no held-out
    example from its skill or catch at least :data:`NONE_TRADE` times the share
    they take; ties go to the lower threshold. Never above ``default``.
    """
    np = numpy
    kept = tops[right]
    if not len(kept):
        return default
    below_every_right = float(min(default, np.quantile(kept, 1 - IN_SCOPE_KEPT)))
    if not len(none_tops):
        return below_every_right
    candidates = np.unique(np.concatenate([kept, none_tops + 1e-9, [default]]))
    candidates = candidates[candidates <= default]
    best, best_score = below_every_right, -1.0
    for threshold in candidates:
        taken = float((kept < threshold).sum() / len(tops))
        caught = float((none_tops < threshold).mean())
        if taken and caught < NONE_TRADE * taken:
            continue
        if caught - taken > best_score + 1e-12:
            best, best_score = float(threshold), caught - taken
    return best


def fit_calibration(
    cosines: Scores,
    keywords: Scores | None,
    targets: Indexes,
    none_score: Callable[[float], float],
    numpy: ModuleType,
    *,
    weights: Sequence[float] = LEXICAL_WEIGHTS,
    none_rows: tuple[Scores, Scores | None] | None = None,
) -> Calibration:
    """The blend, temperature and ``none`` threshold for held-out examples: their ``cosines`` and BM25 ``keywords``
    (rows, one column a leaf).

    ``targets`` are each row's own leaf; ``none_score(weight)`` the engine's
    default score of ``none`` at that blend. The blend is the one of
    ``weights`` that routes most rows right (none without ``keywords``). The
    threshold comes from :func:`fit_none_threshold`, over ``none_rows`` (the
    cosines and BM25 scores of requests no skill serves) when given; the
    temperature minimises the held-out rows' negative log-likelihood with
    ``none`` scored at it (a column appended to the scores).
    """
    np = numpy
    if keywords is None:
        weights = (0.0,)
    elif len(targets) < MIN_HELD_OUT_FOR_BLEND and DEFAULT_LEXICAL_WEIGHT in weights:
        weights = (DEFAULT_LEXICAL_WEIGHT,)
    best: tuple[float, float] | None = None
    # the default first: another blend must route more held-out examples right to be chosen
    for weight in sorted(weights, key=lambda w: w != DEFAULT_LEXICAL_WEIGHT):
        scores = blend(cosines, keywords, weight, np)
        accuracy = float((scores.argmax(axis=1) == targets).mean())
        if best is None or accuracy > best[1] + 1e-9:
            best = (weight, accuracy)
    assert best is not None
    weight, accuracy = best
    scores = blend(cosines, keywords, weight, np)
    none_tops = np.zeros(0)
    if none_rows is not None and len(none_rows[0]):
        none_tops = blend(none_rows[0], none_rows[1], weight, np).max(axis=1)
    right = scores.argmax(axis=1) == targets
    threshold = fit_none_threshold(scores.max(axis=1), right, none_tops, none_score(weight), np)
    with_none = np.concatenate([scores, np.full((len(scores), 1), threshold)], axis=1)
    temperature = fit_temperature(with_none, targets, np)
    spreads = spreads_of(scores, np)
    spread_scale = fit_temperature(with_none, targets, np, spreads)
    rows = np.arange(len(targets))
    by_spread = mean_nll(with_none / (spread_scale * spreads.reshape(-1, 1)), targets, rows, np)
    fixed = mean_nll(with_none / temperature, targets, rows, np)
    return Calibration(
        temperature,
        weight,
        len(targets),
        round(accuracy, 4),
        round(threshold, 4),
        spread_scale if by_spread < fixed else None,
    )
