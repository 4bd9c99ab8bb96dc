"""The work behind :func:`.training.train`: embed, score the untrained way, fit, hold out, calibrate."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import replace
from typing import Any

import numpy as np

from ..engine.decisions import NONE_ID
from ..tree.tree import SkillTree
from ._head import Head, HeadData, Vocabulary, calibration_error, fit, temperature, top_probability
from .learned import LearnedRouter
from .scoring import LeafScorer

L2_PATH = (3e-4, 1e-4, 3e-5)  # strengths tried, strongest first (each fit starts from the last)
BETAS = (2.0, 8.0)  # weights of the untrained scores tried: little data leans on them more
REJECT_IN_SCOPE = 0.02  # without `none` rows, `none` takes the least sure 2% of held-out in-scope requests


class Fitter:
    """The rows as arrays (embeddings, words, untrained scores of every leaf, classes), and the fits made on them."""

    def __init__(self, tree: SkillTree, engine: Any, rows: Sequence[Any], *, base_threshold: float | None,
                 progress: Any = None) -> None:
        self.tree, self.engine, self.rows = tree, engine, list(rows)
        self._tell = progress or (lambda stage, done, total: None)
        texts = list(dict.fromkeys(r.text for r in self.rows))
        vectors = engine.embedder.embed(texts, progress=lambda done, total: self._tell("embedding", done, total))
        where = {text: i for i, text in enumerate(texts)}
        order = np.array([where[r.text] for r in self.rows], dtype=int)
        self.x = np.asarray(vectors, dtype=np.float32)[order]
        self.vocabulary = Vocabulary.of([r.text for r in self.rows])
        self.words = self.vocabulary.features([r.text for r in self.rows])
        base = LeafScorer(tree, engine, examples="off")
        index = base.current()
        self.leaves = list(index.names)
        priors = np.empty((len(texts), len(self.leaves)))
        for i, text in enumerate(texts):
            priors[i] = base.score_array(text, index)
            if i % 500 == 0 or i == len(texts) - 1:
                self._tell("scoring", i + 1, len(texts))
        self.prior_all = priors[order]
        self.tau = float(base_threshold if base_threshold is not None else base.default_threshold)
        learned = {r.skill for r in self.rows if r.skill is not None} | {r.wrong for r in self.rows if r.wrong}
        self.skills = [name for name in self.leaves if name in learned]
        self.learn_none = any(r.skill is None and r.wrong is None for r in self.rows)
        column = {name: i for i, name in enumerate(self.skills)}
        position = {name: i for i, name in enumerate(self.leaves)}
        prior = self.prior_all[:, [position[name] for name in self.skills]]
        if self.learn_none:
            prior = np.hstack([prior, np.full((len(self.rows), 1), self.tau)])
        none_class = len(self.skills)
        target = np.array([-1 if r.wrong else (column[r.skill] if r.skill is not None else none_class) for r in self.rows])
        wrong = np.array([column[r.wrong] if r.wrong else -1 for r in self.rows])
        weight = np.array([r.weight for r in self.rows], dtype=float)
        self.data = HeadData(self.x, self.words, prior, target, wrong, weight)
        self.width = len(self.skills) + (1 if self.learn_none else 0)
        self.none_bias: float | None = None
        self.temperature = 1.0

    # -- fitting ---------------------------------------------------------------

    def start(self, beta: float) -> Head:
        """The untrained head: the untrained scores, weighed by ``beta``."""
        return Head.untrained(self.width, self.x.shape[1], len(self.vocabulary.words), beta)

    def choose(self, train_rows: np.ndarray, test_rows: Sequence[int]) -> tuple[Head, float]:
        """The head fitted on ``train_rows`` whose weight of the untrained scores and strength do best on ``test_rows``."""
        data = self.data.subset(train_rows)
        best: tuple[float, Head, float] | None = None
        steps, done = len(BETAS) * len(L2_PATH), 0
        for beta in BETAS:
            head = self.start(beta)
            for l2 in L2_PATH:
                head = fit(data, self.width, l2=l2, start=head)
                score = self._accuracy(head, test_rows)
                if best is None or score > best[0]:
                    best = (score, head, l2)
                done += 1
                self._tell("fitting", done, steps + 1)
        assert best is not None
        _, head, l2 = best
        self.none_bias = None if self.learn_none else self.fit_none_bias(head, test_rows)
        logits, truth = self._route_logits(self._router(head, self.none_bias or 0.0, 1.0), test_rows)
        self.temperature = temperature(logits, truth)
        return head, l2

    def fit_all(self, l2: float, start: Head | None) -> Head:
        head = fit(self.data, self.width, l2=l2, start=start or self.start(BETAS[0]))
        self._tell("fitting", 1, 1)
        return head

    def fit_none_bias(self, head: Head, rows: Sequence[int]) -> float:
        """The ``none`` bias that leaves the least sure few in-scope ``rows`` to ``none``."""
        router = self._router(head, 0.0, 1.0)
        inside = [i for i in rows if self.rows[i].skill is not None]
        if not inside:
            return 0.0
        leaves, none = self._logits(router, inside)
        return float(np.quantile(leaves.max(axis=1) - none, REJECT_IN_SCOPE))

    def untrained_none_bias(self, head: Head) -> float:
        """``none``'s bias when nothing could be held out: the average bias, as for a skill never learned."""
        count = len(self.skills)
        return float(head.b[:count].mean()) if count else 0.0

    def router(self, head: Head, none_bias: float, temperature_: float, meta: dict[str, Any]) -> LearnedRouter:
        return self._router(head, none_bias, temperature_, meta)

    # -- measuring -------------------------------------------------------------

    def held_out_metrics(self, head: Head, rows: Sequence[int]) -> tuple[dict[str, Any], dict[str, Any]]:
        router = self._router(head, self.none_bias or 0.0, self.temperature)
        predicted = self._predict(router, rows)
        logits, _ = self._route_logits(router, rows)
        right = [p == self.rows[i].skill for p, i in zip(predicted, rows)]
        before = calibration_error(top_probability(logits, 1.0), right)
        after = calibration_error(top_probability(logits, self.temperature), right)
        return self._metrics(predicted, rows), {"temperature": round(self.temperature, 4),
                                                "calibration_error_before": before, "calibration_error_after": after}

    def untrained_metrics(self, rows: Sequence[int]) -> dict[str, Any]:
        """The untrained ``examples`` strategy on ``rows`` (their texts taken out of the skills' examples first)."""
        tree = without_examples(self.tree, {self.rows[i].text for i in rows})
        scorer = LeafScorer(tree, self.engine, examples="centroid")
        index = scorer.current()
        predicted = []
        for i in rows:
            scores = np.asarray(scorer.score_array(self.rows[i].text, index))
            best = int(scores.argmax())
            predicted.append(index.names[best] if scores[best] > self.tau else None)
        return self._metrics(predicted, rows)

    def _metrics(self, predicted: list[str | None], rows: Sequence[int]) -> dict[str, Any]:
        truth = [self.rows[i].skill for i in rows]
        inside = [(p, t) for p, t in zip(predicted, truth) if t is not None]
        outside = [(p, t) for p, t in zip(predicted, truth) if t is None]
        return {"examples": len(rows), "accuracy": _share(sum(p == t for p, t in zip(predicted, truth)), len(rows)),
                "in_scope_accuracy": _share(sum(p == t for p, t in inside), len(inside)),
                "out_of_scope_recall": _share(sum(p is None for p, _ in outside), len(outside))}

    def _accuracy(self, head: Head, rows: Sequence[int]) -> float:
        """Held-out accuracy: in-scope rows by their best leaf, and, when ``none`` is learned, the rest by it."""
        router = self._router(head, 0.0, 1.0)
        leaves, none = self._logits(router, rows)
        best = leaves.argmax(axis=1)
        right = 0
        for k, i in enumerate(rows):
            wanted = self.rows[i].skill
            if wanted is None:
                right += self.learn_none and leaves[k, best[k]] <= none[k]
            else:
                right += self.leaves[best[k]] == wanted and (not self.learn_none or leaves[k, best[k]] > none[k])
        return right / max(len(rows), 1)

    def _predict(self, router: LearnedRouter, rows: Sequence[int]) -> list[str | None]:
        leaves, none = self._logits(router, rows)
        best = leaves.argmax(axis=1)
        return [self.leaves[j] if leaves[k, j] > none[k] else None for k, j in enumerate(best)]

    def _logits(self, router: LearnedRouter, rows: Sequence[int]) -> tuple[np.ndarray, np.ndarray]:
        """Every leaf's logit and ``none``'s for ``rows``, as the learned router computes them when it routes."""
        rows = np.asarray(rows, dtype=int)
        column = {name: i for i, name in enumerate(router.classes)}
        seen = np.array([column.get(name, -1) for name in self.leaves])
        x = self.x[rows].astype(np.float64)
        words = self.words[rows]
        learned = x @ router.w.T + np.asarray(words @ router.v.T)
        leaves = router.beta * self.prior_all[rows] + router.unseen_bias
        mask = seen >= 0
        leaves[:, mask] = learned[:, seen[mask]] + router.b[seen[mask]] + router.beta * self.prior_all[rows][:, mask]
        none = x @ router.none_w + np.asarray(words @ router.none_v).ravel() + router.none_b + router.beta * router.none_prior
        return leaves, none

    def _route_logits(self, router: LearnedRouter, rows: Sequence[int]) -> tuple[np.ndarray, np.ndarray]:
        """Logits over [every leaf, none] and the index of each row's answer, for calibration."""
        leaves, none = self._logits(router, rows)
        position = {name: i for i, name in enumerate(self.leaves)}
        truth = np.array([position[self.rows[i].skill] if self.rows[i].skill is not None else len(self.leaves)
                          for i in rows])
        return np.hstack([leaves, none[:, None]]), truth

    def _router(self, head: Head, none_bias: float, temperature_: float, meta: dict[str, Any] | None = None) -> LearnedRouter:
        count = len(self.skills)
        if self.learn_none:
            none_w, none_v, none_b = head.w[count], head.v[count], float(head.b[count])
        else:
            none_w, none_v = np.zeros(self.x.shape[1]), np.zeros(len(self.vocabulary.words))
            none_b = none_bias
        return LearnedRouter(list(self.skills), head.w[:count], head.v[:count], head.b[:count], head.beta, none_w,
                             none_v, none_b, self.tau, temperature_, self.vocabulary, dict(meta or {}))


def without_examples(tree: SkillTree, texts: set[str]) -> SkillTree:
    """``tree`` with ``texts`` taken out of its skills' examples (so held-out rows cannot leak into the baseline)."""
    skills = {name: replace(leaf, examples=tuple(e for e in leaf.examples if e not in texts))
              for name, leaf in tree.skills.items()}
    return SkillTree(tree.categories, skills, tree.problems, tree.source)


def _share(numerator: int, denominator: int) -> float | None:
    return round(numerator / denominator, 4) if denominator else None
