"""The encoder's backward pass against finite differences, on a tiny random encoder in float64."""

from __future__ import annotations

import pytest

np = pytest.importorskip("numpy")
pytest.importorskip("scipy")

from support.tiny_encoder import HIDDEN, tiny_encoder  # noqa: E402 (imported once the optional packages are known to be there)

from semif_agent.routing.encoder.tuning import batch_loss  # noqa: E402 (imported once the optional packages are known to be there)


def side(rng, lengths):
    x = rng.normal(size=(len(lengths), max(lengths), HIDDEN))
    mask = (np.arange(max(lengths)) < np.array(lengths)[:, None]).astype(np.float64)
    return x, mask


def test_backward_matches_finite_differences_for_every_parameter():
    rng = np.random.default_rng(3)
    weights = tiny_encoder(rng)
    anchors = side(rng, [3, 5, 2])
    candidates = side(rng, [4, 6, 6, 2])  # three positives and one hard negative
    pair_weights = np.array([1.0, 2.0, 0.5])

    def loss():
        return batch_loss(weights, 0, anchors, candidates, pair_weights, 5.0, grads=False)[0]

    _, grads = batch_loss(weights, 0, anchors, candidates, pair_weights, 5.0)
    assert set(grads) == {n for n in weights.params if n.startswith("layer.")}
    step = 1e-6
    for name, grad in grads.items():
        value = weights.params[name]
        for flat in rng.choice(value.size, size=min(4, value.size), replace=False):
            index = np.unravel_index(flat, value.shape)
            original = value[index]
            value[index] = original + step
            up = loss()
            value[index] = original - step
            down = loss()
            value[index] = original
            numeric = (up - down) / (2 * step)
            assert grad[index] == pytest.approx(numeric, rel=1e-4, abs=1e-7), (name, index)


def test_padding_changes_nothing():
    rng = np.random.default_rng(4)
    weights = tiny_encoder(rng)
    anchors = side(rng, [3, 5])
    candidates = side(rng, [4, 6])
    w = np.ones(2)
    before = batch_loss(weights, 0, anchors, candidates, w, 5.0, grads=False)[0]
    x, mask = anchors
    x[0, 3:] = rng.normal(size=x[0, 3:].shape)  # other values in the padding
    assert batch_loss(weights, 0, (x, mask), candidates, w, 5.0, grads=False)[0] == pytest.approx(before, abs=1e-12)
