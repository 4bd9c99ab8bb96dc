"""Tuning the encoder: batches, the learning-rate schedule, early stopping, the frozen layers' cache, and a real run."""

from __future__ import annotations

import random

import pytest

np = pytest.importorskip("numpy")
pytest.importorskip("scipy")
pytest.importorskip("tokenizers")
pytest.importorskip("onnx")

from support.tiny_encoder import tiny_encoder  # noqa: E402 (imported once the optional packages are known to be there)

from semif_agent.errors import UserError  # noqa: E402 (imported once the optional packages are known to be there)
from semif_agent.routing.encoder import (  # noqa: E402 (imported once the optional packages are known to be there)
    Pair,
    TuneSettings,
    embed,
    estimate_seconds,
    tune_encoder,
    tuning,
)
from semif_agent.routing.encoder.tuning import batches, epoch_plan, learning_rate  # noqa: E402 (imported once the optional packages are known to be there)


def test_a_batch_never_holds_two_pairs_of_one_group():
    pairs = [Pair(f"request {i}", f"skill {i % 3}", group=f"g{i % 3}") for i in range(30)]
    plan = batches(pairs, 8, random.Random(0))
    assert sorted(i for batch in plan for i in batch) == list(range(30))
    for batch in plan:
        assert len(batch) <= 8
        groups = [pairs[i].group for i in batch]
        assert len(groups) == len(set(groups))


def test_pairs_without_a_group_are_kept_apart_by_their_positive():
    pairs = [Pair(f"request {i}", "same text") for i in range(4)] + [Pair("other", "another text")]
    for batch in batches(pairs, 8, random.Random(1)):
        assert len({pairs[i].positive for i in batch}) == len(batch)


def test_an_epoch_draws_at_most_its_share_of_the_pairs_afresh_each_time():
    pairs = [Pair(f"request {i}", f"skill {i % 40}", group=f"g{i % 40}") for i in range(400)]
    rng = random.Random(3)
    settings = TuneSettings(batch=16, pairs_per_epoch=100)
    first, second = (sorted(i for batch in epoch_plan(pairs, settings, rng) for i in batch) for _ in range(2))
    assert 90 <= len(first) <= 100 and 90 <= len(second) <= 100  # a lone pair left at the end is not a batch
    assert first != second  # another draw each epoch, so every pair is met over the epochs
    every = [i for batch in epoch_plan(pairs, TuneSettings(batch=16, pairs_per_epoch=None), rng) for i in batch]
    assert len(every) == len(set(every)) >= 390  # all of them but the odd one left alone at the end


def test_the_learning_rate_warms_up_then_decays_to_zero():
    rates = [learning_rate(step, 100, 1e-4) for step in range(100)]
    assert rates[0] == pytest.approx(1e-5)
    assert max(rates) == pytest.approx(1e-4) and rates.index(max(rates)) == 9
    assert all(a >= b for a, b in zip(rates[9:], rates[10:]))
    assert rates[-1] < 2e-6


WORDS = ["alpha", "bravo", "charlie", "delta", "echo", "foxtrot", "golf", "hotel"]


def crossed_pairs():
    """Training pairs whose held-out twins ask for another skill: tuning on them makes held-out worse."""
    train = [Pair(f"{w} {w}", f"{w} skill", group=w) for w in WORDS]
    held = [Pair(f"{w} {w}", f"{WORDS[(i + 1) % 8]} skill", group=w) for i, w in enumerate(WORDS)]
    return train, held


def test_tuning_that_never_beats_the_base_returns_the_base_weights_and_stops_early():
    train, held = crossed_pairs()
    fitted = TuneSettings(epochs=8, batch=8, learning_rate=0.01, layers=2, max_tokens=8, patience=8)
    weights, _ = tune_encoder(tiny_encoder(np.random.default_rng(0), np.float32), held, held, fitted)
    settings = TuneSettings(epochs=5, batch=8, learning_rate=0.05, layers=2, max_tokens=8, patience=2)
    seen = []
    tuned, report = tune_encoder(
        weights, train, held, settings, progress=lambda done, total: seen.append((done, total))
    )
    assert tuned is weights
    assert report.best_epoch == 0 and report.stopped_early and report.epochs == 2
    assert report.held_out_loss[1] > report.held_out_loss[0] and len(report.held_out_loss) == 3
    assert report.train_loss[-1] < report.train_loss[0]
    assert report.steps == 2 and seen[0] == (0, 5) and seen[-1] == (2, 5)


def test_frozen_layers_run_once_per_text_and_stay_unchanged(monkeypatch):
    weights = tiny_encoder(np.random.default_rng(1), np.float32)
    before = weights.copy()
    ran: list[int] = []
    real = tuning.hidden_states
    monkeypatch.setattr(
        tuning, "hidden_states", lambda w, ids, upto: (ran.extend([upto] * len(ids)), real(w, ids, upto))[1]
    )
    train = [Pair(f"{w} please", f"{w} skill", group=w) for w in WORDS]
    held = [Pair(f"{w} now", f"{w} skill", group=w) for w in WORDS]
    tuned, report = tune_encoder(weights, train, held, TuneSettings(epochs=3, batch=4, learning_rate=1e-2, layers=1))
    assert ran == [1] * len(set(p.anchor for p in train + held) | set(p.positive for p in train))
    changed = {n for n in weights.params if not np.array_equal(tuned.params[n], before.params[n])}
    assert report.best_epoch > 0  # these pairs are easy: held-out loss falls
    assert changed == set(weights.layer_names(1))  # only the top layer was tuned
    assert all(np.array_equal(weights.params[n], before.params[n]) for n in weights.params)  # the input is not touched


def test_settings_out_of_range_are_one_line_errors():
    weights = tiny_encoder(np.random.default_rng(2), np.float32)
    with pytest.raises(UserError, match="layers must be between 1 and 2"):
        tune_encoder(weights, [], [], TuneSettings(layers=3))
    assert estimate_seconds(weights, crossed_pairs()[0], TuneSettings(layers=2, batch=4, epochs=2)) > 0


def made_up_intents(seed=1):
    """8 intents named by made-up words, 6 requests each mixing those words with common ones."""
    rng = random.Random(seed)
    syllables = ["ka", "lo", "mi", "zu", "te", "ra", "vo", "shi", "ne", "po", "gu", "fe", "xa", "di", "bru", "ylo"]
    filler = ["please", "can you", "i want to", "now", "for me", "the", "quickly", "today"]
    intents = {}
    for i in range(8):
        keys = ["".join(rng.choice(syllables) for _ in range(3)) for _ in range(3)]
        requests = [
            f"{rng.choice(filler)} {rng.choice(keys)} {rng.choice(filler)} {rng.choice(keys)}" for _ in range(6)
        ]
        intents[f"intent{i}"] = (f"{keys[0]} {keys[1]}", requests)
    return intents


@pytest.mark.slow  # the real encoder: a few seconds
def test_tuning_the_real_encoder_brings_held_out_requests_nearer_their_intent(tmp_path):
    from semif_agent.engine.local import model_file
    from semif_agent.routing.encoder import read_encoder, write_encoder

    intents = made_up_intents()
    train = [Pair(r, text, group=name) for name, (text, requests) in intents.items() for r in requests[:4]]
    held = [Pair(r, text, group=name) for name, (text, requests) in intents.items() for r in requests[4:]]
    names = list(intents)

    def margin(weights):
        """Mean cosine of each held-out request to its own intent, minus its best other intent's."""
        sims = embed(weights, [p.anchor for p in held]) @ embed(weights, [intents[n][0] for n in names]).T
        own = np.array([names.index(p.group) for p in held])
        rows = np.arange(len(held))
        others = np.where(np.eye(len(names))[own] > 0, -np.inf, sims).max(axis=1)
        return float((sims[rows, own] - others).mean())

    base = read_encoder(model_file())
    settings = TuneSettings(epochs=3, batch=8, learning_rate=1e-3, layers=2, max_tokens=32)
    tuned, report = tune_encoder(base, train, held, settings)
    assert report.best_epoch > 0 and report.held_out_loss[report.best_epoch] < report.held_out_loss[0]
    assert margin(tuned) > margin(base) + 0.02
    write_encoder(tuned, model_file(), tmp_path / "tuned.onnx")  # the gain survives the file's int8 rounding
    written = read_encoder(tmp_path / "tuned.onnx")
    assert np.abs(embed(written, [p.anchor for p in held]) - embed(tuned, [p.anchor for p in held])).max() < 1e-4


def test_without_held_out_pairs_every_epoch_runs_and_the_last_weights_are_kept():
    weights = tiny_encoder(np.random.default_rng(5), np.float32)
    train = [Pair(f"{w} please", f"{w} skill", group=w) for w in WORDS]
    tuned, report = tune_encoder(weights, train, [], TuneSettings(epochs=2, batch=4, learning_rate=1e-2, layers=1))
    assert report.epochs == 2 and report.best_epoch == 2 and not report.stopped_early
    assert not np.array_equal(tuned.params["layer.1.query.weight"], weights.params["layer.1.query.weight"])
