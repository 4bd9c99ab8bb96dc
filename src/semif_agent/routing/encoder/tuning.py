"""Tuning the encoder's top layers on (request, skill text) pairs.

The loss is the in-batch softmax of MultipleNegativesRanking: each request's
scaled cosines to every candidate of its batch (the batch's positives, then its
hard negatives), against its own positive; pairs weigh ``Pair.weight``. A batch
never holds two pairs of one group, so no request is pushed away from its own
skill. AdamW with a linear warmup (a tenth of the steps) and a linear decay;
after each epoch the held-out loss decides whether these weights are the best
so far, and ``patience`` epochs without a better one stop the run.

The file keeps its big weights in int8, on a grid (max|w| / 127 per column)
coarser than most of what a few hundred steps change: rounded at the end, the
tuned weights lost most of their gain. So the tuning is aware of the grid: every
forward pass (training and held-out) runs on the weights rounded as the file
will hold them, and the gradient goes to float weights underneath (the straight-
through estimator), whose changes add up until they move a weight to another step.
The weights returned are the rounded ones: what :func:`write_encoder` writes.

The layers below the tuned ones never change: each text goes through them once,
and its tokens at the first tuned layer are kept for every later step.
"""

from __future__ import annotations

import random
import resource
import sys
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from .model import blas_threads, encode, hidden_states, layer_backward, pad, pool, pool_back, token_ids
from .weights import EncoderWeights, require_onnx

if TYPE_CHECKING:
    import numpy as np
    from numpy.typing import NDArray

    Array = NDArray[np.floating[Any]]

WARMUP = 0.1  # the share of the steps the learning rate rises over
BETAS = (0.9, 0.999)
ADAM_EPS = 1e-6
WEIGHT_DECAY = 0.01  # on the weight matrices, not on biases or norms


@dataclass(frozen=True)
class Pair:
    anchor: str
    positive: str
    negative: str | None = None
    weight: float = 1.0
    group: str = ""


@dataclass(frozen=True)
class TuneSettings:
    epochs: int = 3
    batch: int = 32
    # Measured on 512 HWU64 requests (8 per skill, 6 layers, 3 epochs, grid-aware): accuracy 0.57 before,
    # 0.73 at 5e-5, 0.84 at 1e-4, 0.85 at 3e-4; 1e-4 is within noise of the best and the milder on larger sets.
    learning_rate: float = 1e-4
    layers: int = 6
    max_tokens: int = 64
    patience: int = 1
    seed: int = 0
    scale: float = 20.0
    # Each epoch tunes on at most this many pairs, drawn afresh (None: all): 15,000 requests make some 30,000 pairs,
    # an hour an epoch on two cores, and the held-out loss has mostly settled within a few hundred steps.
    pairs_per_epoch: int | None = 4096


@dataclass
class TuneReport:
    steps: int
    epochs: int
    best_epoch: int
    train_loss: list[float] = field(default_factory=list)
    held_out_loss: list[float] = field(default_factory=list)
    seconds: float = 0.0
    stopped_early: bool = False
    peak_bytes: int = 0


def epoch_plan(pairs: Sequence[Pair], settings: TuneSettings, rng: random.Random) -> list[list[int]]:
    """One epoch's batches (indices of ``pairs``): of :attr:`TuneSettings.pairs_per_epoch` pairs drawn from them when
    there are more, each batch of at least two pairs."""
    chosen = list(range(len(pairs)))
    if settings.pairs_per_epoch is not None and len(pairs) > settings.pairs_per_epoch:
        chosen = sorted(rng.sample(chosen, settings.pairs_per_epoch))
    drawn = [pairs[i] for i in chosen]
    return [[chosen[j] for j in batch] for batch in batches(drawn, settings.batch, rng) if len(batch) > 1]


def epoch_pairs(count: int, settings: TuneSettings) -> int:
    """How many pairs one epoch tunes on, of ``count``."""
    return count if settings.pairs_per_epoch is None else min(count, settings.pairs_per_epoch)


def batches(pairs: Sequence[Pair], size: int, rng: random.Random) -> list[list[int]]:
    """Indices of ``pairs`` in shuffled batches of at most ``size``, no two of one group (or of one positive) together."""
    order = list(range(len(pairs)))
    rng.shuffle(order)
    open_batches: list[tuple[list[int], set[str]]] = []
    done: list[list[int]] = []
    for i in order:
        key = pairs[i].group or pairs[i].positive
        target = next((b for b in open_batches if key not in b[1]), None)
        if target is None:
            target = ([], set())
            open_batches.append(target)
        target[0].append(i)
        target[1].add(key)
        if len(target[0]) >= size:
            open_batches.remove(target)
            done.append(target[0])
    return done + [b[0] for b in open_batches]


def ranking_loss(anchors: Array, candidates: Array, weights: Array, scale: float) -> tuple[float, Array, Array]:
    """The weighted in-batch softmax loss (anchor ``i``'s positive is candidate ``i``) and its gradients."""
    import numpy as np

    logits = scale * anchors @ candidates.T
    logits = logits - logits.max(axis=1, keepdims=True)
    log_probs = logits - np.log(np.exp(logits).sum(axis=1, keepdims=True))
    rows = np.arange(len(anchors))
    share = weights / weights.sum()
    loss = float(-(share * log_probs[rows, rows]).sum())
    d_logits = np.exp(log_probs)
    d_logits[rows, rows] -= 1.0
    d_logits *= share[:, None] * scale
    return loss, d_logits @ candidates, d_logits.T @ anchors


class _Cache:
    """Each text's tokens at the first tuned layer, computed once."""

    def __init__(self, weights: EncoderWeights, first: int, max_tokens: int) -> None:
        self.weights, self.first, self.max_tokens = weights, first, max_tokens
        self.rows: dict[str, Any] = {}

    def fill(self, texts: Sequence[str]) -> None:
        missing = list(dict.fromkeys(t for t in texts if t not in self.rows))
        if missing:
            states = hidden_states(self.weights, token_ids(missing, self.max_tokens), self.first)
            self.rows.update(zip(missing, states))

    def batch(self, texts: Sequence[str]) -> tuple[Any, Any]:
        return pad([self.rows[t] for t in texts], self.weights.hidden)


def batch_loss(
    weights: EncoderWeights,
    first: int,
    anchors: tuple[Array, Array],
    candidates: tuple[Array, Array],
    pair_weights: Array,
    scale: float,
    *,
    grads: bool = True,
) -> tuple[float, dict[str, Array]]:
    """The loss of one batch given its texts' tokens at layer ``first``, and the gradients of the layers from there."""
    sides = []
    for x, mask in (anchors, candidates):
        hidden, caches = encode(weights, x, mask, first, keep=grads)
        units, pooled = pool(hidden, mask)
        sides.append((units, mask, pooled, caches))
    loss, d_anchor, d_candidate = ranking_loss(sides[0][0], sides[1][0], pair_weights, scale)
    total: dict[str, Array] = {}
    if not grads:
        return loss, total
    for (units, mask, pooled, caches), d_units in zip(sides, (d_anchor, d_candidate)):
        grad = pool_back(d_units, units, mask, pooled)
        for index, cache in reversed(list(zip(range(first, weights.layers), caches))):
            grad, layer_grads = layer_backward(weights, index, grad, cache)
            for name, value in layer_grads.items():
                total[name] = total[name] + value if name in total else value
    return loss, total


class AdamW:
    """AdamW over the named parameters, with the learning rate set per step."""

    def __init__(self, params: dict[str, Any], names: Sequence[str]) -> None:
        import numpy as np

        self.params, self.names, self.t = params, list(names), 0
        self.m = {n: np.zeros_like(params[n]) for n in self.names}
        self.v = {n: np.zeros_like(params[n]) for n in self.names}

    def step(self, grads: dict[str, Any], rate: float) -> None:
        import numpy as np

        self.t += 1
        b1, b2 = BETAS
        fix1, fix2 = 1 - b1**self.t, 1 - b2**self.t
        for n in self.names:
            g, p = grads[n], self.params[n]
            self.m[n] = b1 * self.m[n] + (1 - b1) * g
            self.v[n] = b2 * self.v[n] + (1 - b2) * (g * g)
            if n.endswith(".weight") and p.ndim == 2:
                p -= rate * WEIGHT_DECAY * p
            p -= (rate * (self.m[n] / fix1) / (np.sqrt(self.v[n] / fix2) + ADAM_EPS)).astype(p.dtype)


def learning_rate(step: int, total: int, peak: float) -> float:
    """Linear warmup over the first tenth of the steps, then linear decay to zero."""
    warm = max(1, int(total * WARMUP))
    if step < warm:
        return peak * (step + 1) / warm
    return peak * max(0.0, (total - step) / max(1, total - warm))


def _step_inputs(cache: _Cache, pairs: Sequence[Pair], batch: Sequence[int]) -> tuple[Any, Any, Any]:
    import numpy as np

    chosen = [pairs[i] for i in batch]
    candidates = [p.positive for p in chosen] + [p.negative for p in chosen if p.negative is not None]
    return (
        cache.batch([p.anchor for p in chosen]),
        cache.batch(candidates),
        np.array([p.weight for p in chosen], dtype=np.float32),
    )


def held_out_loss(weights: EncoderWeights, cache: _Cache, pairs: Sequence[Pair], settings: TuneSettings) -> float:
    """The mean loss over fixed batches of ``pairs`` (weighted by each batch's pairs' weight)."""
    if not pairs:
        return 0.0
    total = weight = 0.0
    for batch in batches(pairs, settings.batch, random.Random(settings.seed)):
        if len(batch) < 2 and len(pairs) > 1:
            continue  # a lone pair has nothing to be told apart from
        anchors, candidates, w = _step_inputs(cache, pairs, batch)
        loss, _ = batch_loss(weights, cache.first, anchors, candidates, w, settings.scale, grads=False)
        total += loss * float(w.sum())
        weight += float(w.sum())
    return total / weight if weight else 0.0


def _resident() -> int:
    """The process's peak resident memory so far, in bytes (0 when it cannot be read)."""
    try:
        peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    except (AttributeError, OSError):
        return 0
    return int(peak) * (1 if sys.platform == "darwin" else 1024)


def _check(weights: EncoderWeights, settings: TuneSettings) -> int:
    from ...errors import UserError

    if not 1 <= settings.layers <= weights.layers:
        raise UserError(f"layers must be between 1 and {weights.layers}, not {settings.layers}")
    if settings.batch < 2 or settings.epochs < 1 or settings.learning_rate <= 0:
        raise UserError("batch must be at least 2, epochs at least 1 and the learning rate positive")
    return weights.layers - settings.layers


def tune_encoder(
    weights: EncoderWeights,
    pairs: Sequence[Pair],
    held_out: Sequence[Pair],
    settings: TuneSettings = TuneSettings(),
    *,
    progress: Callable[[int, int], None] | None = None,
) -> tuple[EncoderWeights, TuneReport]:
    """The weights with the lowest held-out loss (``weights`` itself when tuning never beat it), and a report.

    Without held-out pairs every epoch runs and the last one's weights are returned.
    """
    require_onnx()
    first = _check(weights, settings)
    with blas_threads():
        return _tune(weights, first, pairs, held_out, settings, progress)


def _tune(
    weights: EncoderWeights,
    first: int,
    pairs: Sequence[Pair],
    held_out: Sequence[Pair],
    settings: TuneSettings,
    progress: Callable[[int, int], None] | None,
) -> tuple[EncoderWeights, TuneReport]:
    import numpy as np

    started, memory = time.monotonic(), _resident()
    rng = random.Random(settings.seed)
    tuned = weights.copy()
    cache = _Cache(weights, first, settings.max_tokens)
    texts = [t for p in [*pairs, *held_out] for t in (p.anchor, p.positive, p.negative) if t is not None]
    cache.fill(texts)
    plans = [epoch_plan(pairs, settings, rng) for _ in range(settings.epochs)]
    total = sum(len(plan) for plan in plans)
    names = [n for i in range(first, weights.layers) for n in tuned.layer_names(i)]
    optimiser = AdamW(tuned.params, names)
    tuning = set(names)
    report = TuneReport(
        steps=0, epochs=0, best_epoch=0, held_out_loss=[held_out_loss(tuned, cache, held_out, settings)]
    )
    best, best_params, waited = report.held_out_loss[0], None, 0
    if progress:
        progress(0, total)
    for epoch, plan in enumerate(plans, start=1):
        losses = []
        for batch in plan:
            anchors, candidates, w = _step_inputs(cache, pairs, batch)
            loss, grads = batch_loss(tuned.as_stored(tuning), first, anchors, candidates, w, settings.scale)
            optimiser.step(grads, learning_rate(report.steps, total, settings.learning_rate))
            losses.append(loss)
            report.steps += 1
            if progress:
                progress(report.steps, total)
        report.epochs = epoch
        report.train_loss.append(float(np.mean(losses)) if losses else 0.0)
        stored = tuned.as_stored(tuning)
        report.held_out_loss.append(held_out_loss(stored, cache, held_out, settings))
        if report.held_out_loss[-1] < best or not held_out:  # nothing held out: the last weights are kept
            best, report.best_epoch, waited = report.held_out_loss[-1], epoch, 0
            best_params = {n: stored.params[n].copy() for n in names}
        else:
            waited += 1
            if waited >= settings.patience and epoch < settings.epochs:
                report.stopped_early = True
                break
    report.seconds = time.monotonic() - started
    report.peak_bytes = max(0, _resident() - memory)
    if best_params is None:
        return weights, report
    result = weights.copy()
    result.params.update(best_params)
    return result, report


def estimate_seconds(weights: EncoderWeights, pairs: Sequence[Pair], settings: TuneSettings) -> float:
    """How long :func:`tune_encoder` takes at most on ``pairs`` (all epochs), from timing a few real steps.

    The held-out pairs are not known here: their caching and loss are counted as
    a tenth of the training pairs'.
    """
    first = _check(weights, settings)
    if len(pairs) < 2:
        return 0.0
    with blas_threads():
        return _estimate(weights, first, pairs, settings)


def _estimate(weights: EncoderWeights, first: int, pairs: Sequence[Pair], settings: TuneSettings) -> float:
    sample = random.Random(settings.seed).sample(list(pairs), min(len(pairs), 2 * settings.batch))
    cache = _Cache(weights, first, settings.max_tokens)
    texts = {t for p in sample for t in (p.anchor, p.positive, p.negative) if t is not None}
    started = time.monotonic()
    cache.fill(sorted(texts))
    per_text = (time.monotonic() - started) / max(1, len(texts))
    all_texts = {t for p in pairs for t in (p.anchor, p.positive, p.negative) if t is not None}
    trial = weights.copy()
    plan = [b for b in batches(sample, settings.batch, random.Random(settings.seed)) if len(b) > 1][:2]
    names = {n for i in range(first, weights.layers) for n in trial.layer_names(i)}
    optimiser = AdamW(trial.params, sorted(names))
    started = time.monotonic()
    for batch in plan:
        anchors, candidates, w = _step_inputs(cache, sample, batch)
        optimiser.step(batch_loss(trial.as_stored(names), first, anchors, candidates, w, settings.scale)[1], 0.0)
    per_pair = (time.monotonic() - started) / max(1, sum(len(b) for b in plan))
    training = per_pair * epoch_pairs(len(pairs), settings) * settings.epochs
    held = 0.1 * (per_pair / 3) * len(pairs) * (settings.epochs + 1)  # a forward pass is about a third of a step
    return per_text * len(all_texts) * 1.1 + training + held
