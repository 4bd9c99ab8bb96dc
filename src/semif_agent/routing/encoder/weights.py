"""The encoder's parameters, read from and written back to the engine's ONNX file.

The engine's file holds each big weight as an int8 initializer ``<name>_q`` and a
float ``<name>_scale`` (per output column, or per row for the embeddings),
turned back into floats in the graph (``Cast`` then ``Mul``). Parameters are found
by tracing the graph: each ``MatMul`` whose weight is such a product feeds an
``Add`` of a named bias, which says which layer and projection it is; the
``LayerNormalization`` nodes name their own scale and shift; the ``Gather`` fed
by ``input_ids`` is the word table, the one fed by ``token_type_ids`` the
token-type table, the other the position table.

numpy and onnx are imported when a file is read or written.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ..._files import replace_file
from ...errors import EngineConfigError

if TYPE_CHECKING:
    import numpy as np
    from numpy.typing import NDArray

    Array = NDArray[np.floating[Any]]

ONNX_MISSING = "fine-tuning the encoder needs onnx: pip install 'semif-agent[tune]'"

# What each bias names, and the parameter it belongs to.
_BIAS = re.compile(
    r"layer\.(\d+)\.(attention\.self\.query|attention\.self\.key|attention\.self\.value|"
    r"attention\.output\.dense|intermediate\.dense|output\.dense)\.bias$"
)
_NORM = re.compile(r"(?:layer\.(\d+)\.(attention\.output|output)|embeddings)\.LayerNorm\.(weight|bias)$")
PROJECTIONS = {
    "attention.self.query": "query",
    "attention.self.key": "key",
    "attention.self.value": "value",
    "attention.output.dense": "attention_out",
    "intermediate.dense": "intermediate",
    "output.dense": "output",
}
NORMS = {"attention.output": "attention_norm", "output": "output_norm"}


def require_onnx() -> Any:
    """The onnx module, or the one-line error saying how to install it."""
    try:
        import onnx
    except ImportError as exc:
        raise EngineConfigError(ONNX_MISSING) from exc
    return onnx


@dataclass
class EncoderWeights:
    """Float parameters of a BERT encoder, by name (``layer.<i>.<part>.weight|bias``, ``embeddings.*``).

    ``sources`` maps a parameter to the initializer it came from (a quantized one
    is named without its ``_q``/``_scale`` suffix); ``int8`` maps each parameter the
    file stores as int8 to the axis its scale is taken over (0: one scale per
    column, 1: one per row); ``base_sha256`` is the file's.
    """

    params: dict[str, Array]
    layers: int
    heads: int
    eps: float = 1e-12
    sources: dict[str, str] = field(default_factory=dict)
    base_sha256: str = ""
    int8: dict[str, int] = field(default_factory=dict)

    def copy(self) -> EncoderWeights:
        return self.with_params({k: v.copy() for k, v in self.params.items()})

    def with_params(self, params: dict[str, Array]) -> EncoderWeights:
        """The same encoder with other values of its parameters."""
        return EncoderWeights(
            params, self.layers, self.heads, self.eps, dict(self.sources), self.base_sha256, dict(self.int8)
        )

    def as_stored(self, names: Any = None) -> EncoderWeights:
        """These weights as the file will hold them: each int8 one (of ``names``, default all) rounded to its grid."""
        params = dict(self.params)
        for name, axis in self.int8.items():
            if names is None or name in names:
                q, scale = quantize(params[name], axis=axis)
                params[name] = (q.astype(scale.dtype) * scale).astype(params[name].dtype)
        return self.with_params(params)

    @property
    def hidden(self) -> int:
        return int(self.params["embeddings.word"].shape[1])

    def layer_names(self, layer: int) -> list[str]:
        """The parameters of one transformer layer."""
        prefix = f"layer.{layer}."
        return [name for name in self.params if name.startswith(prefix)]


def read_encoder(path: Path) -> EncoderWeights:
    """The float weights of an ONNX file in the engine's format (int8 weights with float scales)."""
    onnx = require_onnx()
    import numpy as np
    from onnx import numpy_helper

    from ...engine._onnx import file_sha256

    model = onnx.load(str(path))
    graph = model.graph
    inits = {i.name: i for i in graph.initializer}
    producer = {out: node for node in graph.node for out in node.output}
    consumers: dict[str, list[Any]] = {}
    for node in graph.node:
        for name in node.input:
            consumers.setdefault(name, []).append(node)

    def array(name: str) -> Any:
        return numpy_helper.to_array(inits[name])

    def weight_source(name: str, param: str) -> tuple[str, Any]:
        """The initializer behind a weight: a ``Mul(Cast(q), scale)`` product, or a float one."""
        if name in inits:
            return name, array(name).astype(np.float32)
        node = producer.get(name)
        if node is None or node.op_type != "Mul":
            raise ValueError(f"{path}: {name} is neither an initializer nor a dequantised weight")
        cast = producer.get(node.input[0])
        if cast is None or cast.op_type != "Cast" or cast.input[0] not in inits or node.input[1] not in inits:
            raise ValueError(f"{path}: {name} is not Cast(int8) * scale")
        scale = array(node.input[1]).astype(np.float32)
        int8[param] = 0 if scale.shape[0] == 1 else 1
        return name, array(cast.input[0]).astype(np.float32) * scale

    params: dict[str, Any] = {}
    sources: dict[str, str] = {}
    int8: dict[str, int] = {}
    eps = 1e-12
    heads = 0
    for node in graph.node:
        if node.op_type == "MatMul":
            adds = [n for n in consumers.get(node.output[0], []) if n.op_type == "Add"]
            bias = next((i for n in adds for i in n.input if i in inits and _BIAS.search(i)), None)
            if bias is None:
                continue  # an attention product, not a projection
            match = _BIAS.search(bias)
            assert match is not None
            key = f"layer.{match.group(1)}.{PROJECTIONS[match.group(2)]}"
            sources[f"{key}.weight"], params[f"{key}.weight"] = weight_source(node.input[1], f"{key}.weight")
            sources[f"{key}.bias"], params[f"{key}.bias"] = bias, array(bias).astype(np.float32)
            if PROJECTIONS[match.group(2)] == "query":
                heads = heads or _heads(params[f"{key}.weight"].shape[1], adds, consumers, producer, inits, array)
        elif node.op_type == "LayerNormalization":
            for i, part in ((1, "weight"), (2, "bias")):
                match = _NORM.search(node.input[i])
                if match is None:
                    raise ValueError(f"{path}: cannot tell which norm {node.input[i]} is")
                key = f"layer.{match.group(1)}.{NORMS[match.group(2)]}" if match.group(1) else "embeddings.norm"
                sources[f"{key}.{part}"], params[f"{key}.{part}"] = node.input[i], array(node.input[i])
            eps = next((a.f for a in node.attribute if a.name == "epsilon"), eps)
        elif node.op_type == "Gather" and _is_table(node.input[0], inits, producer):
            table = {"input_ids": "word", "token_type_ids": "token_type"}.get(node.input[1], "position")
            sources[f"embeddings.{table}"], params[f"embeddings.{table}"] = weight_source(
                node.input[0], f"embeddings.{table}"
            )
    layers = len({k.split(".")[1] for k in params if k.startswith("layer.")})
    if not layers or not heads or "embeddings.word" not in params:
        raise ValueError(f"{path}: not a BERT encoder of the engine's format")
    return EncoderWeights(params, layers, heads, float(eps), sources, file_sha256(path), int8)


def _is_table(name: str, inits: dict[str, Any], producer: dict[str, Any]) -> bool:
    """Whether ``name`` is an embedding table: a 2-D float initializer, or a dequantised one."""
    node = producer.get(name)
    if name in inits:
        return len(inits[name].dims) == 2 and inits[name].data_type in (1, 11)  # float, double
    return node is not None and node.op_type == "Mul"


def _heads(hidden: int, adds: list[Any], consumers: Any, producer: Any, inits: Any, array: Any) -> int:
    """The head count: the hidden size over the head size the query projection is reshaped to."""
    for add in adds:
        for reshape in consumers.get(add.output[0], []):
            if reshape.op_type != "Reshape":
                continue
            shape = producer.get(reshape.input[1])
            parts = [array(i) for i in shape.input if i in inits] if shape is not None else []
            if shape is None and reshape.input[1] in inits:
                parts = [array(reshape.input[1])[2:]]
            values = [int(v) for part in parts for v in part.reshape(-1)]
            if values and values[-1] > 0:  # [batch, length, heads (or -1), head size]
                return hidden // values[-1]
    return 0


def write_encoder(weights: EncoderWeights, base: Path, out: Path) -> str:
    """The graph of ``base`` with ``weights`` in it (re-quantized as ``base`` is), written atomically; its sha256.

    An int8 weight is quantized symmetrically per channel like the base's (scale =
    max|w| / 127 along the scale's shape); a weight equal to the base's keeps its
    bytes, so unchanged weights give back the same file.
    """
    onnx = require_onnx()
    import hashlib

    import numpy as np
    from onnx import numpy_helper

    from ...engine._onnx import file_sha256

    if weights.base_sha256 and file_sha256(base) != weights.base_sha256:
        raise EngineConfigError(f"{base}: not the model file these weights were read from")
    model = onnx.load(str(base))
    inits = {i.name: i for i in model.graph.initializer}
    for name, source in weights.sources.items():
        value = weights.params[name]
        if source in inits:  # a float initializer
            old = numpy_helper.to_array(inits[source])
            if not np.array_equal(old, value.astype(old.dtype)):
                inits[source].CopyFrom(numpy_helper.from_array(value.astype(old.dtype), source))
            continue
        q_init, scale_init = inits[f"{source}_q"], inits[f"{source}_scale"]
        q_old, scale_old = numpy_helper.to_array(q_init), numpy_helper.to_array(scale_init)
        if np.array_equal(q_old.astype(np.float32) * scale_old, value.astype(np.float32)):
            continue
        q, scale = quantize(value, axis=0 if scale_old.shape[0] == 1 else 1)
        q_init.CopyFrom(numpy_helper.from_array(q.astype(q_old.dtype), q_init.name))
        scale_init.CopyFrom(numpy_helper.from_array(scale.astype(scale_old.dtype), scale_init.name))
    data = model.SerializeToString()
    replace_file(out, data)
    return hashlib.sha256(data).hexdigest()


def quantize(value: Array, *, axis: int) -> tuple[Any, Any]:
    """Symmetric int8 per channel: ``q * scale ~ value``, ``scale = max|value| / 127`` reduced over ``axis``."""
    import numpy as np

    value = value.astype(np.float32)
    scale = np.abs(value).max(axis=axis, keepdims=True) / np.float32(127)
    scale = np.where(scale > 0, scale, np.float32(1)).astype(np.float32)
    q = np.clip(np.rint(value / scale), -127, 127).astype(np.int8)
    return q, scale
