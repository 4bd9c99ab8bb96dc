"""Fine-tuning the embedded engine's encoder on a skill tree's requests.

:func:`read_encoder` turns the engine's int8 ONNX file into float weights;
:func:`tune_encoder` trains its top layers on (request, skill text) pairs with an
in-batch softmax loss; :func:`write_encoder` puts the tuned weights back into the
same graph, re-quantized as the base file is; :func:`embed` gives the vectors the
engine would compute with given weights. numpy, onnx and tokenizers are imported
when used; a missing ``onnx`` is one-line :class:`~semif_agent.errors.EngineConfigError`.
"""

from __future__ import annotations

from .model import embed
from .tuning import Pair, TuneReport, TuneSettings, estimate_seconds, tune_encoder
from .weights import EncoderWeights, read_encoder, write_encoder

__all__ = [
    "EncoderWeights",
    "Pair",
    "TuneReport",
    "TuneSettings",
    "embed",
    "estimate_seconds",
    "read_encoder",
    "tune_encoder",
    "write_encoder",
]
