"""The learned router's head: a weighted softmax regression on frozen embeddings and words, over the untrained scores.

For a request with embedding ``x`` (unit length), word features ``f`` (the
TF-IDF of its terms and term pairs, unit length, times :data:`WORD_SCALE`)
and untrained scores ``s`` (each class's blended cosine and BM25; ``none``
scored its threshold), class ``k`` gets the logit

    z_k = w_k . x + v_k . f + b_k + beta * s_k + sum_i a_i * K(x, x_i)  (over the labels i of class k)

where the ``x_i`` are the requests a person labelled with class ``k``, and
``K`` their nearness (:func:`nearness`: 1 for the same request, falling fast
with the cosine): a request near a labelled one leans to its label, and only
to it. The pulls are fitted after the rest, which is held: they add only
what ``W`` could not learn of a label (a label ``W`` learns, with a weak
penalty, is left to it, and to the breadth of what ``W`` generalises). Each
label's pull ``a_i`` (at least 0) is penalised by ``l2 / 2`` times the label's
own weight among the rows, not once for all of them as ``W`` is: the loss
counts a row by its share of the weight, so a label among hundreds of
examples could move ``W`` by only that share, and a person's label was not
even learned for the request it was given on.
Penalised by its own weight, a label is fitted around itself as firmly as the
whole head is fitted to all the rows, and the rows near it (examples of
other skills worded alike) hold it back where they disagree.

With ``W``, ``V`` and ``b`` at zero the head ranks exactly as the untrained
router does (``beta`` says how much to trust it); the regression adds what
the examples teach: the embedding carries meaning, the words what a small
model misses. The loss is the weighted cross-entropy of the rows whose class
is known, plus, for a row that only says which class is WRONG (a run judged a
failure), ``-log(1 - p_wrong)``; ``W``, ``V`` and ``b`` are penalised by
``l2 / 2`` times their squared norm. The biases are penalised too: free, a
few labels move a whole skill up against its neighbours (one label of
"Email Grace ..." for ``email.compose`` sent every email question there),
where a penalised head has to find what sets the labelled request apart.
Fitted with L-BFGS (scipy).
"""

from __future__ import annotations

import math
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np
from numpy.typing import ArrayLike

from ..engine.lexical import terms

MAX_ITERATIONS = 150
TOLERANCE = 1e-7  # stop once an iteration improves the loss by less than this share
# The steps L-BFGS remembers: each costs a pass over the ~10^5-10^6 weights per iteration, and 10 took as long.
MEMORY = 5
MIN_WORD_COUNT = 2  # a word (or pair) seen in fewer requests is left out: it would only learn one row
# and, among many requests, one seen in fewer than the smaller of these shares: of all requests, and of one skill's
# (the requests over the skills). Rare words and pairs carry little over the embedding, and each costs a weight per
# class in every step of the fit (15,000 requests of 64 skills: 10,084 words and pairs seen twice, 1,666 seen 8
# times; fitting 40 -> 27 s, held-out accuracy 93.5% both). The share of one skill's requests keeps the words that
# mark a skill when there are many: such a word is seen about as often as its skill's requests, and the share of all
# requests alone left 199 tools of 16,530 requests no word seen fewer than 9 times, a tenth of one tool's requests.
MIN_WORD_SHARE = 1 / 2000
MIN_WORD_SKILL_SHARE = 1 / 30
WORD_SCALE = 0.5  # the word features' length next to the unit embedding


def words_of(text: str) -> list[str]:
    """A request's terms (stemmed, stop-words out) and its pairs of neighbouring terms."""
    found = terms(text)
    return found + [f"{a} {b}" for a, b in zip(found, found[1:])]


@dataclass
class Vocabulary:
    """The words the head knows, with their inverse document frequencies."""

    words: list[str]
    idf: np.ndarray
    column: dict[str, int] = field(init=False, repr=False, compare=False)  # each word's column

    def __post_init__(self) -> None:
        self.column = {w: i for i, w in enumerate(self.words)}

    @classmethod
    def of(cls, texts: Sequence[str], skills: int = 1) -> Vocabulary:
        """The words of ``texts`` (requests of ``skills`` skills) seen often enough to learn from (:data:`MIN_WORD_COUNT`)."""
        counts = Counter(word for text in texts for word in set(words_of(text)))
        n = len(texts)
        least = max(MIN_WORD_COUNT, math.ceil(min(n * MIN_WORD_SHARE, n / max(skills, 1) * MIN_WORD_SKILL_SHARE)))
        words = sorted(w for w, c in counts.items() if c >= least)
        return cls(words, np.array([math.log((1 + n) / (1 + counts[w])) + 1.0 for w in words]))

    def features(self, texts: Sequence[str]) -> Any:
        """The rows of scaled, unit TF-IDF word features (a scipy sparse matrix)."""
        from scipy.sparse import csr_matrix

        rows, cols, values = [], [], []
        for row, text in enumerate(texts):
            found, weights = self.vector(text)
            rows.extend([row] * len(found))
            cols.extend(found)
            values.extend(weights)
        return csr_matrix((values, (rows, cols)), shape=(len(texts), len(self.words)))

    def vector(self, text: str) -> tuple[list[int], list[float]]:
        """One request's scaled, unit TF-IDF word features as (column indexes, values)."""
        counts = Counter(self.column[w] for w in words_of(text) if w in self.column)
        weights = [(1.0 + math.log(c)) * float(self.idf[col]) for col, c in counts.items()]
        norm = math.sqrt(sum(v * v for v in weights)) or 1.0
        return list(counts), [WORD_SCALE * v / norm for v in weights]


@dataclass
class HeadData:
    """Training rows: embeddings, word features, untrained scores per class, the class (or -1), the wrong class (or -1), weights."""

    x: np.ndarray  # (n, d) float32
    words: Any  # (n, vocabulary) sparse
    prior: np.ndarray  # (n, c) untrained scores of the classes
    target: np.ndarray  # (n,) class index, -1 when only a wrong class is known
    wrong: np.ndarray  # (n,) class index the row must not go to, -1 when none
    weight: np.ndarray  # (n,)
    near: np.ndarray | None = None  # (n, labels) each row's nearness to each labelled request (:func:`nearness`)
    labelled: np.ndarray | None = None  # (labels,) the rows that are those labelled requests

    def subset(self, rows: np.ndarray) -> HeadData:
        return HeadData(
            self.x[rows],
            self.words[rows],
            self.prior[rows],
            self.target[rows],
            self.wrong[rows],
            self.weight[rows],
            None if self.near is None else self.near[rows],
            self.labelled,
        )


@dataclass
class Head:
    """``W`` (c, d), ``V`` (c, vocabulary), ``b`` (c,), ``beta``, and ``a`` (labels,): each label's pull."""

    w: np.ndarray
    v: np.ndarray
    b: np.ndarray
    beta: float
    a: np.ndarray | None = None

    @classmethod
    def untrained(cls, classes: int, dimension: int, vocabulary: int, beta: float) -> Head:
        return cls(np.zeros((classes, dimension)), np.zeros((classes, vocabulary)), np.zeros(classes), float(beta))


def mean_head(heads: Sequence[Head], scales: Sequence[float]) -> Head:
    """The head whose logits are the mean of ``heads``' logits, each times its scale (logits are linear in a head)."""
    weights = np.asarray(scales, dtype=np.float64) / len(heads)
    return Head(
        np.tensordot(weights, np.stack([h.w for h in heads]), axes=1),
        np.tensordot(weights, np.stack([h.v for h in heads]), axes=1),
        np.tensordot(weights, np.stack([h.b for h in heads]), axes=1),
        float(weights @ np.array([h.beta for h in heads])),
        None
        if heads[0].a is None
        else np.tensordot(weights, np.stack([h.a for h in heads if h.a is not None]), axes=1),
    )


def fit(
    data: HeadData,
    classes: int,
    *,
    l2: float,
    start: Head,
    max_iterations: int = MAX_ITERATIONS,
    fit_beta: bool = False,
) -> Head:
    """The head minimising the weighted loss from ``start`` (L-BFGS); ``beta`` stays ``start``'s unless ``fit_beta``;
    each label's pull ``a`` is fitted when ``data`` has nearnesses."""
    from scipy.optimize import Bounds, minimize

    n, d = data.x.shape
    vocabulary = data.words.shape[1]
    x = data.x.astype(np.float32)
    x_t = np.ascontiguousarray(x.T)  # the gradient's product runs several times faster on this than on dz.T @ x
    words = data.words.tocsr().astype(np.float32)
    words_t = words.T.tocsr()
    total = float(data.weight.sum()) or 1.0
    known = data.target >= 0
    onehot = np.zeros((n, classes), dtype=np.float32)
    onehot[np.flatnonzero(known), data.target[known]] = 1.0
    wrong_rows = np.flatnonzero(data.wrong >= 0)
    wrong_cols = data.wrong[wrong_rows]
    weight = (data.weight / total).astype(np.float32)
    prior = data.prior.astype(np.float32)
    near = np.zeros((n, 0), dtype=np.float32) if data.near is None else data.near.astype(np.float32)
    labels = near.shape[1]
    near_t = np.ascontiguousarray(near.T)
    pulled = data.target[data.labelled] if labels else np.zeros(0, dtype=int)  # each label's class
    own = weight[data.labelled] if labels else np.zeros(0, dtype=np.float32)  # each label's share of the weight
    sizes = (classes * d, classes * vocabulary, classes, labels)

    def unpack(theta: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray, float]:
        """``W`` (c, d), ``V`` transposed (vocabulary, c: the layout both word products read and write in
        order), ``b``, the labels' pulls and ``beta``."""
        w = theta[: sizes[0]].reshape(classes, d)
        v_t = theta[sizes[0] : sizes[0] + sizes[1]].reshape(vocabulary, classes)
        b = theta[sizes[0] + sizes[1] : sum(sizes[:3])]
        a = theta[sum(sizes[:3]) : sum(sizes)]
        return w, v_t, b, a, float(theta[-1])

    known_weight = np.where(known, weight, 0.0).astype(np.float32)[:, None]  # rows with a known class

    def loss_and_grad(theta: np.ndarray) -> tuple[float, np.ndarray]:
        w, v_t, b, a, beta = unpack(theta)
        z = x @ w.T.astype(np.float32)
        z += words @ v_t.astype(np.float32)
        z += b.astype(np.float32) + beta * prior
        if labels:
            np.add.at(z.T, pulled, (near * a.astype(np.float32)).T)
        z -= z.max(axis=1, keepdims=True)
        p = np.exp(z)
        norm = p.sum(axis=1, keepdims=True)
        p /= norm
        z -= np.log(norm)  # now the log-probabilities
        loss = -float((known_weight * z * onehot).sum())
        dz = (p - onehot) * known_weight
        if len(wrong_rows):
            p_wrong = np.clip(p[wrong_rows, wrong_cols], 0.0, 1.0 - 1e-6)
            loss -= float((weight[wrong_rows] * np.log1p(-p_wrong)).sum())
            scale = (weight[wrong_rows] * p_wrong / (1.0 - p_wrong))[:, None]
            step = -p[wrong_rows]
            step[np.arange(len(wrong_rows)), wrong_cols] += 1.0
            dz[wrong_rows] += scale * step
        loss += 0.5 * l2 * (float((w * w).sum()) + float((v_t * v_t).sum()) + float((b * b).sum()))
        loss += 0.5 * l2 * float((own * a * a).sum())
        grad_w = (x_t @ dz).T.astype(np.float64) + l2 * w
        grad_v = np.asarray(words_t @ dz, dtype=np.float64) + l2 * v_t
        grad_beta = float((dz * prior).sum()) if fit_beta else 0.0
        grad_a = (near_t * dz.T[pulled]).sum(axis=1).astype(np.float64) + l2 * own * a
        grad_b = dz.sum(axis=0).astype(np.float64) + l2 * b
        grad = np.concatenate([grad_w.ravel(), grad_v.ravel(), grad_b, grad_a.ravel(), [grad_beta]])
        return loss, grad

    pulls = start.a if start.a is not None and start.a.shape == (labels,) else np.zeros(labels)
    theta0 = np.concatenate([start.w.ravel(), start.v.T.ravel(), start.b, pulls.ravel(), [start.beta]])
    options = {"maxiter": max_iterations, "ftol": TOLERANCE, "maxcor": MEMORY}
    pulls_at = slice(sum(sizes[:3]), sum(sizes))
    if not labels:
        result = minimize(loss_and_grad, theta0, jac=True, method="L-BFGS-B", options=options)
    else:  # the head first, the labels' pulls held at 0; then the pulls alone, the head held where it is
        low, high = np.full(len(theta0), -np.inf), np.full(len(theta0), np.inf)
        theta0[pulls_at] = low[pulls_at] = high[pulls_at] = 0.0
        first = minimize(loss_and_grad, theta0, jac=True, method="L-BFGS-B", options=options, bounds=Bounds(low, high))
        low, high = first.x.copy(), first.x.copy()
        low[pulls_at], high[pulls_at] = 0.0, np.inf
        result = minimize(
            loss_and_grad, first.x, jac=True, method="L-BFGS-B", options=options, bounds=Bounds(low, high)
        )
    w, v_t, b, a, beta = unpack(result.x)
    return Head(w.copy(), np.ascontiguousarray(v_t.T), b.copy(), beta, a.copy())


# How fast nearness falls with the cosine: exp((cosine - 1) / NEAR_WIDTH). A rewording of a request lies at a cosine
# of about 0.8 from it (nearness 0.56), a request about something else at 0.4 or less (under 0.18). On two fresh
# starters (four labels each, four rewordings of each labelled request), rewordings right after training: at 0.2,
# 12 and 14 of 16; at 0.35, 14 and 14 (the labels' pulls take only what the head could not learn, so it reaches
# no further than a label needs).
NEAR_WIDTH = 0.35


def nearness(x: np.ndarray, labelled: np.ndarray) -> np.ndarray:
    """``exp((cosine - 1) / NEAR_WIDTH)`` of each row of ``x`` to each of ``labelled`` (unit embeddings): (n, labels)."""
    cosine = np.asarray(x, dtype=np.float32) @ np.asarray(labelled, dtype=np.float32).T
    return np.exp((np.minimum(cosine, 1.0) - 1.0) / NEAR_WIDTH)


def temperature(logits: np.ndarray, target: np.ndarray) -> float:
    """The temperature in [0.05, 20] whose softmax best predicts ``target`` (log loss).

    The loss is convex in 1 / temperature, so it has one minimum along the log of the temperature: a bounded
    scalar search finds it to 0.1% in about 25 evaluations (a grid fine enough took 81). It is given to four
    significant digits, what the search resolves: logits that differ only in their last bits (computed on
    other machines, or with other thread counts) give the same temperature.
    """
    from scipy.optimize import minimize_scalar

    result = minimize_scalar(
        lambda log_t: log_loss(logits / math.exp(log_t), target),
        bounds=(math.log(0.05), math.log(20.0)),
        method="bounded",
        options={"xatol": 1e-3},
    )
    return float(f"{math.exp(result.x):.4g}")


def log_loss(logits: np.ndarray, target: np.ndarray) -> float:
    """The mean negative log-probability of ``target`` under the softmax of ``logits``."""
    return float(row_losses(logits, target).mean())


def row_losses(logits: np.ndarray, target: np.ndarray) -> np.ndarray:
    """Each row's negative log-probability of its ``target`` under the softmax of its ``logits``."""
    z = logits - logits.max(axis=1, keepdims=True)
    log_p = z - np.log(np.exp(z).sum(axis=1, keepdims=True))
    return -log_p[np.arange(len(target)), target]


def top_probability(logits: np.ndarray, temperature_: float) -> np.ndarray:
    """The probability of each row's top class at ``temperature_``."""
    z = logits / temperature_
    z = z - z.max(axis=1, keepdims=True)
    exp = np.exp(z)
    return exp.max(axis=1) / exp.sum(axis=1)


def calibration_error(confidence: ArrayLike, correct: ArrayLike, bins: int = 10) -> float:
    """Expected calibration error of ``confidence`` (top-1 probabilities) against ``correct``."""
    confidence = np.asarray(confidence, dtype=float)
    correct = np.asarray(correct, dtype=float)
    if not len(confidence):
        return 0.0
    edges = np.linspace(0.0, 1.0, bins + 1)
    total = 0.0
    for low, high in zip(edges[:-1], edges[1:]):
        members = (confidence > low) & (confidence <= high) if low > 0 else (confidence >= low) & (confidence <= high)
        if members.any():
            total += abs(confidence[members].mean() - correct[members].mean()) * members.sum()
    return float(round(total / len(confidence), 4))
