"""The work behind :func:`.training.train`: embed, score the untrained way, fit on a part, hold out, calibrate."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, replace
from functools import partial
from typing import TYPE_CHECKING, Any

import numpy as np

from ..tree.tree import SkillTree
from ._head import (
    Head,
    HeadData,
    Vocabulary,
    calibration_error,
    fit,
    mean_head,
    nearness,
    row_losses,
    temperature,
    top_probability,
)
from .learned import LearnedHead
from .scoring import LeafScorer, example_centroids

if TYPE_CHECKING:
    from ..engine.base import Engine
    from .training import TrainingExample

# Strengths tried, strongest first (each fit starts from the last): the strongest keep the head near the untrained
# scores, which is what a few dozen requests support (measured by cross-validation on the starter's examples).
L2_PATH = (1.0, 0.3, 0.1, 3e-2, 1e-2, 1e-3, 3e-4, 1e-4, 3e-5)
PATIENCE = 2  # weaker strengths are not tried once this many in a row did worse than the best of the same weight
# but only among strengths below this over the requests per skill: every stronger one is tried. Between trusting the
# untrained scores (strong) and trusting the requests (weak) the held-out loss can rise before it falls, and the more
# requests per skill, the further down the second valley lies (200 synthetic skills of ~80 requests, weight 2: worse
# at 1e-2 and 1e-3 than at 3e-2, best at 3e-5; cut there, the router fell back on weight 32: 83.6% right, not 87.4%).
PATIENT_BELOW = 0.05
BETAS = (2.0, 8.0, 32.0)  # weights of the untrained scores tried: little data leans on them more
# Without `none` rows, `none` takes only held-out in-scope requests less sure than this share of them: nothing says
# what an out-of-scope request looks like, and each share held back cost as much leaf accuracy (HWU64, 10 per skill).
REJECT_IN_SCOPE = 0.0
# Fewer out-of-scope rows than this among those that place the `none` cut, and they count as rows like the others, not
# as half of a balanced score (one `--none` label would place the cut alone)
MIN_BALANCED = 10
# The router is the mean of the heads of at most this many settings, the best on the held-out rows and within noise
# of the best one (:func:`_within_noise`): which one setting is best is decided by ~130 held-out rows at 10 per skill,
# and a lucky one costs a point or two on the test split; the mean (linear, so routing costs what one head does)
# keeps most of the best one's gain on every draw. With thousands of held-out rows the best stands out, alone.
BLENDED_SETTINGS = 3

Encoder = Callable[[list[str], Callable[[str, int, int], None]], tuple[np.ndarray, np.ndarray]]
"""``(texts, progress) -> (vectors, untrained scores)``: what :func:`encode` computes, perhaps elsewhere (a cluster)."""


def encode(
    scorer: LeafScorer, texts: Sequence[str], progress: Callable[[str, int, int], None] | None = None
) -> tuple[np.ndarray, np.ndarray]:
    """Each text's embedding, and every leaf's untrained score for it (``scorer``'s, in its leaf order).

    A row depends only on its text, so the texts may be encoded in parts, anywhere, and stacked.
    """
    tell = progress or (lambda stage, done, total: None)
    vectors = scorer.embedder.embed(list(texts), progress=lambda done, total: tell("embedding", done, total))
    index = scorer.current()
    priors = np.empty((len(texts), len(index.names)))
    for i, text in enumerate(texts):
        priors[i] = scorer.score_array(text, index)
        if i % 500 == 0 or i == len(texts) - 1:
            tell("scoring", i + 1, len(texts))
    return np.asarray(vectors, dtype=np.float32), priors


@dataclass(frozen=True)
class Setting:
    """One fit's strength and weight of the untrained scores, and the scale its logits enter the mean with
    (1 / the temperature that suited it on the held-out rows, so no setting outweighs the others by its scale)."""

    l2: float
    beta: float
    scale: float = 1.0


@dataclass
class Part:
    """Rows to fit on: the skills they teach (in leaf order), and the head's data over them."""

    rows: np.ndarray
    skills: list[str]
    learn_none: bool
    data: HeadData
    shift: np.ndarray  # each skill's move from its description to its centroid, folded into the router's weights
    labelled: np.ndarray  # the rows a person labelled with a skill or ``none``: each pulls its neighbours (._head)

    @property
    def width(self) -> int:
        return len(self.skills) + (1 if self.learn_none else 0)


class Fitter:
    """The rows as arrays (embeddings, words, every leaf's untrained score), and the fits made on parts of them."""

    def __init__(
        self,
        tree: SkillTree,
        engine: Engine,
        rows: Sequence[TrainingExample],
        *,
        base_threshold: float | None,
        progress: Callable[[str, int, int], None] | None = None,
        encoder: Encoder | None = None,
    ) -> None:
        self.tree, self.engine, self.rows = tree, engine, list(rows)
        clients = {name: k for k, name in enumerate(dict.fromkeys(r.client for r in self.rows if r.client))}
        self.client = np.array([clients[r.client] if r.client else -1 for r in self.rows], dtype=int)
        self._tell = progress or (lambda stage, done, total: None)
        texts = list(dict.fromkeys(r.text for r in self.rows))
        base = LeafScorer(tree, engine, examples="off")
        index = base.current()
        vectors, priors = (encoder or partial(encode, base))(texts, self._tell)
        where = {text: i for i, text in enumerate(texts)}
        order = np.array([where[r.text] for r in self.rows], dtype=int)
        self.x = np.asarray(vectors, dtype=np.float32)[order]
        taught = {r.skill for r in self.rows} | {r.wrong for r in self.rows if r.wrong}
        self.vocabulary = Vocabulary.of([r.text for r in self.rows], skills=len(taught))
        self.words = self.vocabulary.features([r.text for r in self.rows])
        self.leaves = list(index.names)
        self.position = {name: i for i, name in enumerate(self.leaves)}
        self.prior_all = np.asarray(priors, dtype=np.float64)[order]
        self.descriptions = np.asarray(index.vectors, dtype=np.float64)  # each leaf's embedded description
        self.tau = float(base_threshold if base_threshold is not None else base.default_threshold)
        self.none_offset = 0.0  # without `none` rows: where `none` starts above the skills' mean bias, set on test rows
        self.none_shift = 0.0  # with `none` rows: the move of the learned `none` that balances the held-out rows
        self.temperature = 1.0
        self.chosen: tuple[Part, dict[Setting, Head]] | None = None  # the first fold's part and head of each setting

    # -- parts and fits ------------------------------------------------------------

    def part(self, rows: np.ndarray) -> Part:
        """The rows ``rows`` ready to fit: their skills, targets, weights, and untrained scores with their requests folded in.

        As the ``examples`` strategy does, a skill's vector becomes the centroid of
        its description and its requests among ``rows``; a row's own skill is
        scored by the centroid of the OTHER requests (leave one out), so a
        request never vouches for itself. Skills with no row here are left to
        the untrained scores, as they will be when routing.
        """
        taught = {self.rows[i].skill for i in rows if self.rows[i].skill is not None}
        taught |= {self.rows[i].wrong for i in rows if self.rows[i].wrong}
        skills = [name for name in self.leaves if name in taught]
        column = {name: k for k, name in enumerate(skills)}
        learn_none = any(self.rows[i].skill is None and self.rows[i].wrong is None for i in rows)
        count = len(skills)
        target = np.array([-1 if self.rows[i].wrong else column.get(self.rows[i].skill, count) for i in rows])
        wrong = np.array([column[self.rows[i].wrong] if self.rows[i].wrong else -1 for i in rows])
        given = client_capped(
            np.array([self.rows[i].weight for i in rows], dtype=float), self.client[rows], self.leaves
        )
        weight = client_capped(given * _balance(target, wrong, given), self.client[rows], self.leaves)
        columns = np.array([self.position[name] for name in skills], dtype=int)
        descriptions = self.descriptions[columns]
        own = np.where((target >= 0) & (target < count), target, -1)
        centroids, sums = example_centroids(descriptions, self.x[rows[own >= 0]], own[own >= 0], np)
        shift = centroids - descriptions
        x = self.x[rows].astype(np.float64)
        prior = self.prior_all[rows][:, columns] + x @ shift.T
        mine = np.flatnonzero(own >= 0)
        if len(mine):
            k = own[mine]
            rest = np.linalg.norm(sums[k] - x[mine], axis=1)
            cosine = ((x[mine] * sums[k]).sum(axis=1) - 1.0) / np.maximum(rest, 1e-9)
            prior[mine, k] += cosine - (x[mine] * (descriptions[k] + shift[k])).sum(axis=1)
        if learn_none:
            prior = np.hstack([prior, np.full((len(rows), 1), self.tau)])
        labelled = np.flatnonzero((target >= 0) & np.array([self.rows[i].source == "label" for i in rows], dtype=bool))
        near = nearness(self.x[rows], self.x[rows[labelled]])
        data = HeadData(self.x[rows], self.words[rows], prior, target, wrong, weight, near, labelled)
        return Part(rows, skills, learn_none, data, shift, rows[labelled])

    def start(self, part: Part, beta: float) -> Head:
        """The untrained head of ``part``: the untrained scores, weighed by ``beta``."""
        return Head.untrained(part.width, self.x.shape[1], len(self.vocabulary.words), beta)

    def router(self, part: Part, head: Head, meta: dict[str, Any] | None = None) -> LearnedHead:
        """The router ``head`` (fitted on ``part``) scores as, with the centroids folded into its weights."""
        count = len(part.skills)
        w = head.w[:count] + head.beta * part.shift
        pulls = np.zeros((count + 1, len(part.labelled)))  # each label's pull on every skill and on ``none``
        if head.a is not None and len(head.a) == len(part.labelled):
            pulls[part.data.target[part.data.labelled], np.arange(len(part.labelled))] = head.a
        if part.learn_none:
            none_w, none_v, none_b = head.w[count], head.v[count], float(head.b[count]) + self.none_shift
        else:
            none_w, none_v = np.zeros(self.x.shape[1]), np.zeros(len(self.vocabulary.words))
            none_b = (float(head.b[:count].mean()) if count else 0.0) + self.none_offset
        return LearnedHead(
            list(part.skills),
            w,
            head.v[:count],
            head.b[:count],
            head.beta,
            none_w,
            none_v,
            none_b,
            self.tau,
            self.temperature,
            self.vocabulary,
            dict(meta or {}),
            self.x[part.labelled],
            pulls,
        )

    def choose(self, folds: Sequence[tuple[np.ndarray, Sequence[int]]]) -> tuple[list[LearnedHead], list[Setting]]:
        """The settings (weight of the untrained scores, strength) that predict the folds' test rows best, each fitted
        without them: the :data:`BLENDED_SETTINGS` best, whose heads' mean is the router.

        ``folds`` are (rows to fit on, rows to test on): one held-out share, or
        the folds of a cross-validation when there are too few rows to hold any
        out. The best has the lowest log loss on the in-scope test rows at the
        temperature that suits it (smooth, where the share ranked first barely
        moves on a few hundred rows); ties go to the most ranked first, then to
        the stronger regularisation (nearer the untrained scores). Down the path
        of strengths of one weight, every strength down to
        :data:`PATIENT_BELOW` over the requests per skill is tried; below it,
        the weaker ones are left untried once :data:`PATIENCE` in a row did
        worse than that weight's best there, or (once it has done better than
        its strongest) than an earlier weight at the same strength (the
        weights part as the strength weakens; one behind twice does not catch
        up). ``none`` is then placed and the
        temperature fitted on every test row, each scored by the router fitted
        without it. Returns those routers (one per fold) and the settings.
        """
        parts = [(self.part(np.asarray(train, dtype=int)), list(test)) for train, test in folds]
        truths = [np.array([self.position.get(self.rows[i].skill or "", -1) for i in test]) for _, test in parts]
        tried: list[tuple[tuple[float, int], list[Head], Setting, np.ndarray]] = []
        best_at: dict[float, tuple[float, int]] = {}  # the best score at each strength, over the weights tried
        steps, done = len(BETAS) * len(L2_PATH) * len(parts), 0
        first = parts[0][0]
        patient_below = PATIENT_BELOW * max(len(first.skills), 1) / max(len(first.rows), 1)
        for beta in BETAS:
            heads = [self.start(part, beta) for part, _ in parts]
            beta_best, below_best, worse, behind, improved = None, None, 0, 0, False
            for l2 in L2_PATH:
                if worse >= PATIENCE or behind >= PATIENCE:
                    done += len(parts)
                    continue
                scored, wanted = [], []
                for k, (part, test) in enumerate(parts):
                    heads[k] = fit(part.data, part.width, l2=l2, start=heads[k])
                    leaves, _ = self.logits(self.router(part, heads[k]), test)
                    inside = truths[k] >= 0
                    scored.append(leaves[inside])
                    wanted.append(truths[k][inside])
                    done += 1
                    self._tell("fitting", done, steps + 1)
                score, scale, losses = _calibrated_score(np.vstack(scored), np.concatenate(wanted))
                improved = improved or (beta_best is not None and score > beta_best)
                if l2 < patient_below:
                    worse = 0 if below_best is None or score > below_best else worse + 1
                    below_best = score if below_best is None else max(below_best, score)
                    behind = behind + 1 if improved and l2 in best_at and score < best_at[l2] else 0
                beta_best = score if beta_best is None else max(beta_best, score)
                best_at[l2] = max(best_at.get(l2, score), score)
                tried.append((score, list(heads), Setting(l2, beta, scale), losses))
        ranked = sorted(tried, key=lambda entry: entry[0], reverse=True)[:BLENDED_SETTINGS]
        best = [entry for entry in ranked if _within_noise(entry[3], ranked[0][3])]
        settings = [setting for _, _, setting, _ in best]
        scales = [setting.scale for setting in settings]
        heads = [mean_head([fitted[k] for _, fitted, _, _ in best], scales) for k in range(len(parts))]
        self.chosen = (parts[0][0], {setting: fitted[0] for _, fitted, setting, _ in best})
        self.none_offset, self.none_shift = 0.0, 0.0
        test_rows = [i for _, test in parts for i in test]
        leaves, none = self._pooled([self.router(part, head) for (part, _), head in zip(parts, heads)], parts)
        if parts[0][0].learn_none:
            self.none_shift = self._none_shift(leaves, none, test_rows)
        else:
            in_scope = [k for k, i in enumerate(test_rows) if self.rows[i].skill is not None]
            margins = leaves[in_scope].max(axis=1) - none[in_scope] if in_scope else np.zeros(1)
            self.none_offset = float(np.quantile(margins, REJECT_IN_SCOPE))
        routers = [self.router(part, head) for (part, _), head in zip(parts, heads)]
        leaves, none = self._pooled(routers, parts)
        truth = np.array(
            [self.position[skill] if (skill := self.rows[i].skill) else len(self.leaves) for i in test_rows]
        )
        self.temperature = temperature(np.hstack([leaves, none[:, None]]), truth)
        for router in routers:
            router.temperature = self.temperature
        return routers, settings

    def _pooled(self, routers: list[LearnedHead], parts: list[tuple[Part, list[int]]]) -> tuple[np.ndarray, np.ndarray]:
        """Every test row's leaf logits and ``none``'s, each from the router of its own fold, stacked."""
        scored = [self.logits(router, test) for router, (_, test) in zip(routers, parts)]
        return np.vstack([leaves for leaves, _ in scored]), np.concatenate([none for _, none in scored])

    def fit_all(self, settings: Sequence[Setting], *, leaving_out: Sequence[int] = ()) -> LearnedHead:
        """The router fitted on every row: the mean of a head per setting chosen (held-out ``none`` and temperature kept).

        Each fit starts from the first fold's head of its setting (what most of the rows already taught), where
        :meth:`choose` made one: the loss is the same, its minimum is reached in a fraction of the steps.
        ``leaving_out`` names rows to fit without (what a router without one label would be, the same way).
        """
        part = self.part(np.setdiff1d(np.arange(len(self.rows)), np.asarray(leaving_out, dtype=int)))
        heads = []
        for done, setting in enumerate(settings, start=1):
            heads.append(fit(part.data, part.width, l2=setting.l2, start=self._warm_start(part, setting)))
            self._tell("fitting", done, len(settings))
        return self.router(part, mean_head(heads, [setting.scale for setting in settings]))

    def _warm_start(self, part: Part, setting: Setting) -> Head:
        """``part``'s head at ``setting``'s weight, holding the chosen fold head's rows for the classes both have."""
        head = self.start(part, setting.beta)
        if self.chosen is None or setting not in self.chosen[1]:
            return head
        fold, fitted = self.chosen[0], self.chosen[1][setting]
        classes = [*fold.skills, *([None] if fold.learn_none else [])]
        wanted = {name: k for k, name in enumerate([*part.skills, *([None] if part.learn_none else [])])}
        for k, name in enumerate(classes):
            if name in wanted:
                head.w[wanted[name]], head.v[wanted[name]], head.b[wanted[name]] = fitted.w[k], fitted.v[k], fitted.b[k]
        return head

    # -- measuring -------------------------------------------------------------

    def predicted(self, router: LearnedHead, rows: Sequence[int]) -> list[str | None]:
        """Where ``router`` sends each of ``rows`` (``None``: no skill)."""
        leaves, none = self.logits(router, rows)
        best = leaves.argmax(axis=1)
        return [self.leaves[j] if leaves[k, j] > none[k] else None for k, j in enumerate(best)]

    def held_out_metrics(
        self, router: LearnedHead, rows: Sequence[int], predicted: list[str | None]
    ) -> tuple[dict[str, Any], dict[str, Any]]:
        """``router``'s metrics on ``rows`` (where it sent them: ``predicted``) and its calibration error there."""
        logits, _ = self.route_logits(router, rows)
        right = [p == self.rows[i].skill for p, i in zip(predicted, rows)]
        before = calibration_error(top_probability(logits, 1.0), right)
        after = calibration_error(top_probability(logits, router.temperature), right)
        return self.metrics(predicted, rows), {
            "temperature": round(router.temperature, 4),
            "calibration_error_before": before,
            "calibration_error_after": after,
        }

    def untrained_predicted(self, rows: Sequence[int]) -> list[str | None]:
        """Where the untrained ``examples`` strategy sends ``rows`` (their texts taken out of the skills' examples first)."""
        tree = without_examples(self.tree, {self.rows[i].text for i in rows})
        scorer = LeafScorer(tree, self.engine, examples="centroid")
        index = scorer.current()
        predicted = []
        for i in rows:
            scores = np.asarray(scorer.score_array(self.rows[i].text, index))
            best = int(scores.argmax())
            predicted.append(index.names[best] if scores[best] > self.tau else None)
        return predicted

    def balanced(self, leaves: np.ndarray, none: np.ndarray, rows: Sequence[int], *, learned_none: bool) -> float:
        """In-scope rows right by their best leaf (beating ``none``, when it is learned), the rest right by ``none``;
        with both kinds held out, the mean of the two (so neither side can win by giving up the other), but with fewer
        than :data:`MIN_BALANCED` out of scope, the share of all rows right: else one out-of-scope row (a single
        ``--none`` label, where the tree has no ``none_examples``) weighs as much as every in-scope row together, and
        the ``none`` cut is moved for it alone."""
        best = leaves.argmax(axis=1)
        top = leaves[np.arange(len(best)), best]
        wanted = [self.rows[i].skill for i in rows]
        inside = [
            self.leaves[b] == w and (not learned_none or t > n)
            for b, t, n, w in zip(best, top, none, wanted)
            if w is not None
        ]
        outside = [bool(learned_none and t <= n) for t, n, w in zip(top, none, wanted) if w is None]
        if len(outside) < MIN_BALANCED:  # a few out-of-scope rows (one `--none` label) are rows like the others
            return (sum(inside) + sum(outside)) / len(wanted) if wanted else 0.0
        parts = [sum(group) / len(group) for group in (inside, outside) if group]
        return sum(parts) / len(parts) if parts else 0.0

    def _none_shift(self, leaves: np.ndarray, none: np.ndarray, rows: Sequence[int]) -> float:
        """How far to move the learned ``none`` so the held-out rows balance best (in-scope accuracy and recall)."""
        if {self.rows[i].skill is None for i in rows} != {True, False}:
            return 0.0
        margins = np.sort(leaves.max(axis=1) - none)
        candidates = [0.0, *((margins[:-1] + margins[1:]) / 2)]
        return float(
            max(
                candidates,
                key=lambda shift: (self.balanced(leaves, none + shift, rows, learned_none=True), -abs(shift)),
            )
        )

    def metrics(self, predicted: list[str | None], rows: Sequence[int]) -> dict[str, Any]:
        truth = [self.rows[i].skill for i in rows]
        inside = [(p, t) for p, t in zip(predicted, truth) if t is not None]
        outside = [(p, t) for p, t in zip(predicted, truth) if t is None]
        return {
            "examples": len(rows),
            "accuracy": _share(sum(p == t for p, t in zip(predicted, truth)), len(rows)),
            "in_scope_accuracy": _share(sum(p == t for p, t in inside), len(inside)),
            "out_of_scope_recall": _share(sum(p is None for p, _ in outside), len(outside)),
        }

    def logits(self, router: LearnedHead, rows: Sequence[int]) -> tuple[np.ndarray, np.ndarray]:
        """Every leaf's logit and ``none``'s for ``rows``, as the router computes them when it routes."""
        picked = np.asarray(rows, dtype=int)
        column = {name: i for i, name in enumerate(router.classes)}
        seen = np.array([column.get(name, -1) for name in self.leaves])
        x = self.x[picked].astype(np.float64)
        words = self.words[picked]
        leaves = router.beta * self.prior_all[picked] + router.unseen_bias
        mask = seen >= 0
        if mask.any():
            learned = x @ router.w.T + np.asarray(words @ router.v.T)
            leaves[:, mask] = (
                learned[:, seen[mask]] + router.b[seen[mask]] + router.beta * self.prior_all[picked][:, mask]
            )
        none = (
            x @ router.none_w
            + np.asarray(words @ router.none_v).ravel()
            + router.none_b
            + router.beta * router.none_prior
        )
        if len(router.labelled):
            pulled = nearness(x, router.labelled) @ router.pulls.T
            leaves[:, mask] += pulled[:, seen[mask]]
            none += pulled[:, -1]
        return leaves, none

    def route_logits(self, router: LearnedHead, rows: Sequence[int]) -> tuple[np.ndarray, np.ndarray]:
        """Logits over [every leaf, none] and the index of each row's answer, for calibration."""
        leaves, none = self.logits(router, rows)
        truth = np.array(
            [self.position[skill] if (skill := self.rows[i].skill) is not None else len(self.leaves) for i in rows]
        )
        return np.hstack([leaves, none[:, None]]), truth


def _calibrated_score(leaves: np.ndarray, truth: np.ndarray) -> tuple[tuple[float, int], float, np.ndarray]:
    """How well ``leaves`` rank ``truth``, higher is better: minus the log loss at the temperature that suits them
    best (so weights of the untrained scores, which scale the logits, compare fairly), then how many rank first;
    1 / that temperature; and each row's loss at it."""
    if not len(truth):
        return (0.0, 0), 1.0, np.zeros(0)
    fitted = temperature(leaves, truth)
    losses = row_losses(leaves / fitted, truth)
    return (-round(float(losses.mean()), 6), int((leaves.argmax(axis=1) == truth).sum())), 1.0 / fitted, losses


def _within_noise(losses: np.ndarray, best: np.ndarray) -> bool:
    """Whether ``losses`` are worse than ``best`` (the same rows') by at most one standard error of the mean difference."""
    if len(losses) < 2:
        return bool(losses.sum() <= best.sum())
    difference = losses - best
    return bool(difference.mean() <= difference.std(ddof=1) / np.sqrt(len(difference)))


def _balance(target: np.ndarray, wrong: np.ndarray, weight: np.ndarray) -> np.ndarray:
    """Per-row factors that keep a skill with many requests from drowning those with few: 1/sqrt(the weight of its
    rows), scaled so the rows weigh what they did in all. By weight, not count: many light rows (a client's) cannot
    thin out a skill's own examples."""
    key = np.where(target >= 0, target, -2 - np.maximum(wrong, 0))
    _, inverse = np.unique(key, return_inverse=True)
    totals = np.bincount(inverse, weights=weight)
    factor = 1.0 / np.sqrt(np.maximum(totals[inverse], 1e-12))
    balanced = (weight * factor).sum()
    return factor * (weight.sum() / balanced) if balanced > 0 else factor


# One client's rows weigh at most this share of the workspace's own evidence (its rows' weight, and one per skill for
# its description, so that picks teach a workspace of SKILL.md skills without examples too), and every client's
# together at most the second share: a client names itself, so one caller may pass for many.
CLIENT_SHARE = 0.05
CLIENTS_SHARE = 0.25


def client_capped(weight: np.ndarray, client: np.ndarray, leaves: Sequence[str]) -> np.ndarray:
    """``weight`` with clients' rows (``client`` >= 0, the client's number; -1: the workspace's own) scaled down so
    that each client's weigh at most :data:`CLIENT_SHARE` of the workspace's own evidence (its rows, and one
    per skill of ``leaves`` for its description), and all clients' together at most :data:`CLIENTS_SHARE`."""
    theirs = client >= 0
    if not theirs.any():
        return weight
    own = float(weight[~theirs].sum()) + len(leaves)
    capped = weight.copy()
    for number in np.unique(client[theirs]):
        mine = client == number
        total = float(capped[mine].sum())
        if total > CLIENT_SHARE * own:
            capped[mine] *= CLIENT_SHARE * own / total
    total = float(capped[theirs].sum())
    if total > CLIENTS_SHARE * own:
        capped[theirs] *= CLIENTS_SHARE * own / total
    return capped


def without_examples(tree: SkillTree, texts: set[str]) -> SkillTree:
    """``tree`` with ``texts`` taken out of its skills' examples (so held-out rows cannot leak into the baseline)."""
    skills = {
        name: replace(leaf, examples=tuple(e for e in leaf.examples if e not in texts))
        for name, leaf in tree.skills.items()
    }
    return SkillTree(tree.categories, skills, tree.problems, tree.source)


def _share(numerator: int, denominator: int) -> float | None:
    return round(numerator / denominator, 4) if denominator else None
