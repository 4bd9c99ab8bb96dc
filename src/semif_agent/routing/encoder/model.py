"""The encoder's forward and backward passes in NumPy, and :func:`embed`.

One transformer layer: self-attention over the unpadded tokens (scaled dot
products, a softmax per head), a projection, a residual and a LayerNorm; then a
GELU (erf) feed-forward block, a residual and a LayerNorm. A text's vector is
the mean of the last layer's tokens under the mask, L2-normalised, as the engine
computes it. The backward passes return the gradients of every parameter of a
layer; the embeddings are never tuned, so their output enters as a given.
"""

from __future__ import annotations

import functools
import math
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

from .weights import EncoderWeights

if TYPE_CHECKING:
    import numpy as np
    from numpy.typing import NDArray

    Array = NDArray[np.floating[Any]]

MASKED = -1e9  # what a padded key adds to its attention score (its weight underflows to zero)
# The products are small (a batch's tokens by 384 or 1536): with a second BLAS thread, its waiting competes for the
# cores with whatever else runs (a 32-text batch's layer on 2 busy cores: 0.13 s forward with one thread, 0.5-3 s with two)
BLAS_THREADS = 1


def blas_threads() -> Any:
    """A context in which the matrix library uses :data:`BLAS_THREADS` threads."""
    from threadpoolctl import threadpool_limits

    return threadpool_limits(limits=BLAS_THREADS, user_api="blas")


@functools.lru_cache(maxsize=8)
def tokenizer(max_tokens: int) -> Any:
    """The engine's WordPiece tokenizer, truncating at ``max_tokens``."""
    from tokenizers import Tokenizer

    from ...engine.local import TOKENIZER_PATH

    tok = Tokenizer.from_file(str(TOKENIZER_PATH))
    tok.enable_truncation(max_tokens)
    tok.no_padding()
    return tok


def token_ids(texts: Sequence[str], max_tokens: int) -> list[list[int]]:
    return [list(e.ids) for e in tokenizer(max_tokens).encode_batch(list(texts))]


def pad(rows: Sequence[Any], hidden: int | None = None) -> tuple[Any, Any]:
    """Rows of unequal length stacked and zero-padded, and the float mask of their real positions."""
    import numpy as np

    lengths = np.array([len(r) for r in rows])
    length = int(lengths.max())
    mask = (np.arange(length) < lengths[:, None]).astype(np.float32)
    if hidden is None:
        ids = np.zeros((len(rows), length), dtype=np.int64)
        for i, r in enumerate(rows):
            ids[i, : len(r)] = r
        return ids, mask
    out = np.zeros((len(rows), length, hidden), dtype=rows[0].dtype)
    for i, r in enumerate(rows):
        out[i, : len(r)] = r
    return out, mask.astype(rows[0].dtype)


def layer_norm(x: Array, gain: Array, shift: Array, eps: float) -> tuple[Array, tuple[Array, Array]]:
    import numpy as np

    centred = x - x.mean(axis=-1, keepdims=True)
    rstd = 1.0 / np.sqrt((centred * centred).mean(axis=-1, keepdims=True) + eps)
    normed = centred * rstd
    return normed * gain + shift, (normed, rstd)


def layer_norm_back(grad: Array, gain: Array, cache: tuple[Array, Array]) -> tuple[Array, Array, Array]:
    normed, rstd = cache
    flat = grad.reshape(-1, grad.shape[-1])
    d_gain = (flat * normed.reshape(flat.shape)).sum(axis=0)
    d_shift = flat.sum(axis=0)
    d_normed = grad * gain
    dx = rstd * (
        d_normed - d_normed.mean(axis=-1, keepdims=True) - normed * (d_normed * normed).mean(axis=-1, keepdims=True)
    )
    return dx, d_gain, d_shift


def embeddings(weights: EncoderWeights, ids: Any) -> Array:
    """The embedding block's output (word + position + token type 0, then LayerNorm) for padded ids."""
    p = weights.params
    x = p["embeddings.word"][ids] + p["embeddings.position"][: ids.shape[1]] + p["embeddings.token_type"][0]
    return layer_norm(x, p["embeddings.norm.weight"], p["embeddings.norm.bias"], weights.eps)[0]


def _split(x: Array, heads: int) -> Array:
    b, n, h = x.shape
    return x.reshape(b, n, heads, h // heads).transpose(0, 2, 1, 3)


def _merge(x: Array) -> Array:
    b, heads, n, d = x.shape
    return x.transpose(0, 2, 1, 3).reshape(b, n, heads * d)


def layer_forward(
    weights: EncoderWeights, index: int, x: Array, mask: Array, *, keep: bool = False
) -> tuple[Array, dict[str, Any]]:
    """One layer's output for ``x`` (batch, tokens, hidden) under ``mask``; with ``keep``, what its backward needs."""
    import numpy as np
    from scipy.special import erf

    p = weights.params
    name = f"layer.{index}."
    heads = weights.heads
    q = _split(x @ p[name + "query.weight"] + p[name + "query.bias"], heads)
    k = _split(x @ p[name + "key.weight"] + p[name + "key.bias"], heads)
    v = _split(x @ p[name + "value.weight"] + p[name + "value.bias"], heads)
    scale = 1.0 / math.sqrt(q.shape[-1])  # Python floats: the arrays keep their own precision
    scores = (q @ k.transpose(0, 1, 3, 2)) * scale
    scores = scores + ((1.0 - mask) * MASKED)[:, None, None, :].astype(x.dtype)
    scores -= scores.max(axis=-1, keepdims=True)
    probs = np.exp(scores)
    probs /= probs.sum(axis=-1, keepdims=True)
    context = _merge(probs @ v)
    attended = context @ p[name + "attention_out.weight"] + p[name + "attention_out.bias"]
    h1, norm1 = layer_norm(
        attended + x, p[name + "attention_norm.weight"], p[name + "attention_norm.bias"], weights.eps
    )
    inner = h1 @ p[name + "intermediate.weight"] + p[name + "intermediate.bias"]
    cdf = 0.5 * (1.0 + erf(inner * (1.0 / math.sqrt(2.0))))
    gelu = inner * cdf
    out = gelu @ p[name + "output.weight"] + p[name + "output.bias"]
    y, norm2 = layer_norm(out + h1, p[name + "output_norm.weight"], p[name + "output_norm.bias"], weights.eps)
    cache = {}
    if keep:
        cache = {
            "x": x, "q": q, "k": k, "v": v, "probs": probs, "context": context, "norm1": norm1,
            "h1": h1, "inner": inner, "cdf": cdf, "gelu": gelu, "norm2": norm2, "scale": scale,
        }  # fmt: skip
    return y, cache


def _linear_back(grad: Array, x: Array, w: Array) -> tuple[Array, Array, Array]:
    flat_in = x.reshape(-1, x.shape[-1])
    flat = grad.reshape(-1, grad.shape[-1])
    return grad @ w.T, flat_in.T @ flat, flat.sum(axis=0)


def layer_backward(
    weights: EncoderWeights, index: int, grad: Array, c: dict[str, Any]
) -> tuple[Array, dict[str, Array]]:
    """The gradient of the layer's input, and of each of its parameters, from the gradient of its output."""
    import numpy as np

    p = weights.params
    name = f"layer.{index}."
    g: dict[str, Array] = {}
    d_sum2, g[name + "output_norm.weight"], g[name + "output_norm.bias"] = layer_norm_back(
        grad, p[name + "output_norm.weight"], c["norm2"]
    )
    d_gelu, g[name + "output.weight"], g[name + "output.bias"] = _linear_back(
        d_sum2, c["gelu"], p[name + "output.weight"]
    )
    inner = c["inner"]
    density = np.exp(-0.5 * inner * inner) * (1.0 / math.sqrt(2.0 * math.pi))
    d_inner = d_gelu * (c["cdf"] + inner * density)
    d_h1, g[name + "intermediate.weight"], g[name + "intermediate.bias"] = _linear_back(
        d_inner, c["h1"], p[name + "intermediate.weight"]
    )
    d_h1 = d_h1 + d_sum2
    d_sum1, g[name + "attention_norm.weight"], g[name + "attention_norm.bias"] = layer_norm_back(
        d_h1, p[name + "attention_norm.weight"], c["norm1"]
    )
    d_context, g[name + "attention_out.weight"], g[name + "attention_out.bias"] = _linear_back(
        d_sum1, c["context"], p[name + "attention_out.weight"]
    )
    d_ctx = _split(d_context, weights.heads)
    probs, q, k, v = c["probs"], c["q"], c["k"], c["v"]
    d_probs = d_ctx @ v.transpose(0, 1, 3, 2)
    d_v = probs.transpose(0, 1, 3, 2) @ d_ctx
    d_scores = probs * (d_probs - (d_probs * probs).sum(axis=-1, keepdims=True)) * c["scale"]
    d_q = d_scores @ k
    d_k = d_scores.transpose(0, 1, 3, 2) @ q
    x = c["x"]
    dx = d_sum1
    for part, d_part in (("query", d_q), ("key", d_k), ("value", d_v)):
        d_in, g[name + part + ".weight"], g[name + part + ".bias"] = _linear_back(
            _merge(d_part), x, p[name + part + ".weight"]
        )
        dx = dx + d_in
    return dx, g


def pool(hidden: Array, mask: Array) -> tuple[Array, tuple[Array, Array]]:
    """Unit vectors: the mean of the real tokens, L2-normalised; and what :func:`pool_back` needs."""
    import numpy as np

    counts = np.clip(mask.sum(axis=1, keepdims=True), 1e-9, None)
    pooled = (hidden * mask[:, :, None]).sum(axis=1) / counts
    norms = np.clip(np.linalg.norm(pooled, axis=1, keepdims=True), 1e-12, None)
    return pooled / norms, (norms, counts)


def pool_back(grad: Array, units: Array, mask: Array, cache: tuple[Array, Array]) -> Array:
    norms, counts = cache
    d_pooled = (grad - units * (units * grad).sum(axis=1, keepdims=True)) / norms
    return (d_pooled / counts)[:, None, :] * mask[:, :, None]


def encode(
    weights: EncoderWeights, x: Array, mask: Array, first: int, *, keep: bool = False
) -> tuple[Array, list[Any]]:
    """The last layer's output from the input ``x`` of layer ``first``; with ``keep``, each layer's cache."""
    caches = []
    for index in range(first, weights.layers):
        x, cache = layer_forward(weights, index, x, mask, keep=keep)
        caches.append(cache)
    return x, caches


def hidden_states(weights: EncoderWeights, ids: Sequence[Sequence[int]], upto: int) -> list[Array]:
    """Each text's tokens after the first ``upto`` layers (0: the embeddings' output), unpadded."""
    from ...engine.local import plan_batches

    out: list[Any] = [None] * len(ids)
    for batch in plan_batches([len(i) for i in ids], max_rows=32, max_tokens=2048):
        padded, mask = pad([ids[i] for i in batch])
        x = embeddings(weights, padded)
        for index in range(upto):
            x = layer_forward(weights, index, x, mask)[0]
        for row, i in enumerate(batch):
            out[i] = x[row, : len(ids[i])].copy()
    return out


def embed(weights: EncoderWeights, texts: Sequence[str], *, max_tokens: int = 256) -> Array:
    """Unit vectors (mean-pooled, L2-normalised) for ``texts``, as the engine computes them for these weights."""
    import numpy as np

    from ...engine.local import plan_batches

    ids = token_ids(texts, max_tokens)
    out = np.zeros((len(texts), weights.hidden), dtype=np.float32)
    with blas_threads():
        for batch in plan_batches([len(i) for i in ids], max_rows=32, max_tokens=2048):
            padded, mask = pad([ids[i] for i in batch])
            hidden = encode(weights, embeddings(weights, padded), mask, 0)[0]
            out[batch] = pool(hidden, mask)[0]
    return out
