"""The encoder read from and written back to the engine's real ONNX file, run by onnxruntime."""

from __future__ import annotations

import sys

import pytest

from semif_agent.errors import EngineConfigError
from semif_agent.routing.encoder import Pair, TuneSettings, read_encoder, tune_encoder, write_encoder

TEXTS = ["set an alarm for seven tomorrow morning", "play some jazz", "what is the weather in paris " * 20, "hi"]


def test_without_onnx_reading_writing_and_tuning_say_which_extra_to_install(monkeypatch, tmp_path):
    monkeypatch.setitem(sys.modules, "onnx", None)  # import onnx raises ImportError
    message = "fine-tuning the encoder needs onnx: pip install 'semif-agent[tune]'"
    with pytest.raises(
        EngineConfigError, match=r"^fine-tuning the encoder needs onnx: pip install 'semif-agent\[tune\]'$"
    ):
        read_encoder(tmp_path / "model.onnx")
    with pytest.raises(EngineConfigError) as caught:
        write_encoder(None, tmp_path / "model.onnx", tmp_path / "out.onnx")  # type: ignore[arg-type]  # no weights: onnx is missing before they are looked at
    assert str(caught.value) == message
    with pytest.raises(EngineConfigError) as caught:
        tune_encoder(None, [Pair("a", "b")], [], TuneSettings())  # type: ignore[arg-type]  # no weights: onnx is missing before they are looked at
    assert str(caught.value) == message


@pytest.fixture(scope="module")
def base():
    pytest.importorskip("onnx")
    pytest.importorskip("onnxruntime")
    from semif_agent.engine.local import model_file

    return model_file(), read_encoder(model_file())


def run_file(path, texts):
    """The engine's pooling over onnxruntime's output for ``path`` (any sha: the engine pins its own)."""
    import numpy as np
    import onnxruntime as ort

    from semif_agent.routing.encoder.model import pad, token_ids

    session = ort.InferenceSession(str(path), providers=["CPUExecutionProvider"])
    out = []
    for text in texts:  # one at a time: no padding
        ids, mask = pad(token_ids([text], 256))
        hidden = session.run(
            None, {"input_ids": ids, "attention_mask": mask.astype(np.int64), "token_type_ids": 0 * ids}
        )[0]
        pooled = hidden.mean(axis=1)
        out.append(pooled[0] / np.linalg.norm(pooled[0]))
    return np.array(out)


@pytest.mark.slow  # the embedded model
def test_the_weights_read_from_the_file_embed_as_the_engine_does(base, tmp_path):
    import numpy as np

    from semif_agent.engine.local import Embedder
    from semif_agent.routing.encoder import embed

    path, weights = base
    assert weights.layers == 6 and weights.heads == 12 and weights.hidden == 384
    engine = Embedder(path, cache_size=0, cache_dir=tmp_path).embed(TEXTS)
    ours = embed(weights, TEXTS)
    assert np.abs(ours - engine).max() < 1e-4
    assert np.allclose(np.linalg.norm(ours, axis=1), 1, atol=1e-5)


@pytest.mark.slow  # the embedded model, written twice
def test_written_files_run_in_onnxruntime_with_the_weights_given(base, tmp_path):
    import numpy as np

    from semif_agent.engine._onnx import file_sha256
    from semif_agent.routing.encoder import embed

    path, weights = base
    same = tmp_path / "same.onnx"
    digest = write_encoder(weights, path, same)
    assert digest == file_sha256(same) == file_sha256(path)  # unchanged weights: the very same file
    assert np.abs(run_file(same, TEXTS) - run_file(path, TEXTS)).max() < 1e-6

    changed = weights.copy()
    rng = np.random.default_rng(0)
    for name in changed.layer_names(5):
        noise = rng.normal(scale=0.02, size=changed.params[name].shape)
        changed.params[name] = (changed.params[name] + noise).astype(np.float32)
    other = tmp_path / "other.onnx"
    digest = write_encoder(changed, path, other)
    assert digest == file_sha256(other) != file_sha256(path)
    written = run_file(other, TEXTS)
    assert np.abs(written - run_file(path, TEXTS)).max() > 1e-3
    assert np.abs(written - embed(changed, TEXTS)).max() < 5e-3  # only int8 rounding apart
    reread = read_encoder(other)
    tuned = changed.params["layer.5.query.weight"]
    step = np.abs(tuned).max(axis=0) / 127  # per output column, as the base file quantizes
    assert (np.abs(reread.params["layer.5.query.weight"] - tuned) <= step / 2 + 1e-7).all()
    assert np.array_equal(reread.params["layer.4.query.weight"], weights.params["layer.4.query.weight"])
    assert other.stat().st_size == path.stat().st_size


def test_weights_are_written_only_into_the_file_they_were_read_from(tmp_path):
    pytest.importorskip("onnx")
    from semif_agent.routing.encoder import EncoderWeights

    other = tmp_path / "other.onnx"
    other.write_bytes(b"not the same model")
    weights = EncoderWeights({}, 6, 12, base_sha256="0" * 64)
    with pytest.raises(EngineConfigError, match="not the model file these weights were read from"):
        write_encoder(weights, other, tmp_path / "out.onnx")
    assert not (tmp_path / "out.onnx").exists()
