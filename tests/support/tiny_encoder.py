"""A tiny random BERT encoder (2 layers, hidden 8, 2 heads) for tests of the encoder's numerics."""

from __future__ import annotations

from typing import Any

from semif_agent.routing.encoder.weights import EncoderWeights

HIDDEN, HEADS, INNER, LAYERS, VOCAB = 8, 2, 16, 2, 30522
PARTS = {
    "query": (HIDDEN, HIDDEN),
    "key": (HIDDEN, HIDDEN),
    "value": (HIDDEN, HIDDEN),
    "attention_out": (HIDDEN, HIDDEN),
    "intermediate": (HIDDEN, INNER),
    "output": (INNER, HIDDEN),
}


def tiny_encoder(rng: Any, dtype: Any = None) -> EncoderWeights:
    """Random weights of every kind the real encoder has (the word table sized for the real tokenizer)."""
    params = {
        "embeddings.word": rng.normal(size=(VOCAB, HIDDEN)),
        "embeddings.position": rng.normal(scale=0.1, size=(512, HIDDEN)),
        "embeddings.token_type": rng.normal(scale=0.1, size=(2, HIDDEN)),
        "embeddings.norm.weight": 1 + rng.normal(scale=0.1, size=HIDDEN),
        "embeddings.norm.bias": rng.normal(scale=0.1, size=HIDDEN),
    }
    for layer in range(LAYERS):
        for part, shape in PARTS.items():
            params[f"layer.{layer}.{part}.weight"] = rng.normal(scale=0.5, size=shape)
            params[f"layer.{layer}.{part}.bias"] = rng.normal(scale=0.1, size=shape[1])
        for norm in ("attention_norm", "output_norm"):
            params[f"layer.{layer}.{norm}.weight"] = 1 + rng.normal(scale=0.1, size=HIDDEN)
            params[f"layer.{layer}.{norm}.bias"] = rng.normal(scale=0.1, size=HIDDEN)
    if dtype is not None:
        params = {name: value.astype(dtype) for name, value in params.items()}
    return EncoderWeights(params, LAYERS, HEADS, eps=1e-12)
