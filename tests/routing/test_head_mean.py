"""The learned router's head as a mean of the best settings' heads."""

from __future__ import annotations

import numpy as np

from semif_agent.routing._fitting import _within_noise
from semif_agent.routing._head import Head, mean_head


def logits(head: Head, x: np.ndarray, words: np.ndarray, prior: np.ndarray) -> np.ndarray:
    return x @ head.w.T + words @ head.v.T + head.b + head.beta * prior


def test_the_mean_head_scores_as_the_mean_of_the_scaled_heads() -> None:
    rng = np.random.default_rng(3)
    heads = [Head(rng.normal(size=(4, 6)), rng.normal(size=(4, 5)), rng.normal(size=4), beta) for beta in (2.0, 8.0)]
    scales = [1.5, 0.5]
    x, words, prior = rng.normal(size=(7, 6)), rng.normal(size=(7, 5)), rng.normal(size=(7, 4))
    expected = sum(logits(h, x, words, prior) * s for h, s in zip(heads, scales)) / 2
    np.testing.assert_allclose(logits(mean_head(heads, scales), x, words, prior), expected)


def test_only_settings_within_noise_of_the_best_join_the_mean() -> None:
    best = np.random.default_rng(5).exponential(size=3000)
    swing = np.resize([0.5, -0.5], 3000)  # row-by-row differences of mean 0, standard deviation 0.5
    assert _within_noise(best, best)
    assert _within_noise(best + swing + 0.001, best)  # a hair worse on average, far inside the noise
    assert not _within_noise(best + swing + 0.03, best)  # 3,000 rows tell 0.03 apart
    assert not _within_noise(best + 0.01, best)  # worse on every row: no noise to hide in
    few = best[:130]
    assert _within_noise(few + swing[:130] + 0.03, few)  # 130 rows cannot tell 0.03 apart
