"""The local embedder on the real model: bounded batches, caches filled as it goes, a fast and safe start."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

import semif_agent
from semif_agent.engine import _onnx
from semif_agent.engine.embed_cache import EmbeddingStore, cache_key
from semif_agent.engine.local import MODEL_ID, Batch, Embedder, model_file, plan_batches, verify_model
from semif_agent.errors import EngineConfigError

WORDS = (
    "route each request to the skill that fits, write a draft for the contact, schedule the weekly "
    "meeting, summarise the quarterly report, archive old invoices and rename the shared photos"
).split()


def varied_texts(count: int) -> list[str]:
    """Texts from two words to far past the model's 256-token limit, not sorted by length."""
    lengths = [2 + (i * 37) % 90 for i in range(count - 2)] + [400, 1]
    return [f"text {i}: " + " ".join(WORDS[(i + k) % len(WORDS)] for k in range(n)) for i, n in enumerate(lengths)]


@pytest.fixture
def cache_dir(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    folder = tmp_path / "cache"
    monkeypatch.setenv("SEMIF_CACHE_DIR", str(folder))
    return folder


def run_python(code: str, cache: Path, *args: str) -> subprocess.CompletedProcess[str]:
    """``code`` in a new interpreter that sees this package and uses ``cache`` as its cache folder."""
    source = str(Path(semif_agent.__file__).parents[1])
    env = {
        **os.environ,
        "SEMIF_CACHE_DIR": str(cache),
        "PYTHONPATH": os.pathsep.join([source, os.environ.get("PYTHONPATH", "")]),
    }
    return subprocess.run([sys.executable, "-c", code, *args], capture_output=True, text=True, env=env, timeout=300)


def test_plan_batches_groups_by_length_within_both_bounds() -> None:
    lengths = [9, 3, 250, 3, 7, 40, 41, 5]
    plan = plan_batches(lengths, max_rows=3, max_tokens=60)
    assert sorted(i for batch in plan for i in batch) == list(range(len(lengths)))
    padded = [[lengths[i] for i in batch] for batch in plan]
    assert [p for batch in padded for p in batch] == sorted(lengths)
    for batch in padded:
        assert len(batch) <= 3 and (len(batch) * max(batch) <= 60 or len(batch) == 1)
    assert padded[-1] == [250]


@pytest.mark.slow
def test_small_batches_give_the_one_by_one_vectors_in_order_and_store_each(cache_dir: Path, tmp_path: Path) -> None:
    texts = varied_texts(30)
    texts = texts + texts[:3]  # repeated texts are embedded once and returned at each place
    store = EmbeddingStore(tmp_path / "embeddings.sqlite3")
    embedder = Embedder(model_file(), store=store, batch_rows=4, batch_tokens=96)
    calls: list[tuple[int, int]] = []
    vectors = embedder.embed(texts, progress=lambda done, total: calls.append((done, total)))

    distinct = len(set(texts))
    batches = embedder.last_batches
    assert len(batches) > 8 and sum(b.rows for b in batches) == distinct == embedder.computed
    for batch in batches:
        assert batch.rows <= 4 and (batch.rows * batch.length <= 96 or batch.rows == 1)
    assert [b.length for b in batches] == sorted(b.length for b in batches)
    assert batches[-1] == Batch(1, 256)  # the long text alone, cut at the model's limit
    assert calls[0] == (0, distinct) and calls[-1] == (distinct, distinct) and len(calls) == len(batches) + 1

    alone = Embedder(model_file())
    expected = np.stack([alone.embed([text])[0] for text in texts])
    assert vectors.shape == (len(texts), 384)
    np.testing.assert_allclose(vectors, expected, atol=1e-5)

    stored = EmbeddingStore(store.path).get_many([cache_key(MODEL_ID, t) for t in texts])
    assert len(stored) == distinct
    for text, vector in zip(texts, vectors):
        np.testing.assert_array_equal(np.frombuffer(stored[cache_key(MODEL_ID, text)], np.float32), vector)
    again = embedder.embed(texts[::-1])
    assert embedder.last_batches == [] and embedder.computed == distinct
    np.testing.assert_array_equal(again, vectors[::-1])


@pytest.mark.slow
def test_a_killed_run_keeps_the_batches_it_finished(cache_dir: Path, tmp_path: Path) -> None:
    store_path = tmp_path / "embeddings.sqlite3"
    texts = [f"skill number {i}: does task {i} for the user" for i in range(20)]
    code = (
        "import json, os, signal, sys\n"
        "from semif_agent.engine.embed_cache import EmbeddingStore\n"
        "from semif_agent.engine.local import Embedder, model_file\n"
        "def stop(done, total):\n"
        "    if done >= 8:\n"
        "        os.kill(os.getpid(), signal.SIGKILL)\n"
        "embedder = Embedder(model_file(), store=EmbeddingStore(sys.argv[1]), batch_rows=4)\n"
        "embedder.embed(json.loads(sys.argv[2]), progress=stop)\n"
    )
    done = run_python(code, cache_dir, str(store_path), json.dumps(texts))
    assert done.returncode == -9, done.stderr
    assert len(EmbeddingStore(store_path)) == 8

    resumed = Embedder(model_file(), store=EmbeddingStore(store_path), batch_rows=4)
    resumed.embed(texts)
    assert resumed.computed == 12 and len(EmbeddingStore(store_path)) == 20


COUNT_HASHES = (
    "import sys\n"
    "from pathlib import Path\n"
    "from semif_agent.engine import _onnx\n"
    "from semif_agent.engine.local import Embedder\n"
    "hashed = []\n"
    "real_hash = _onnx.file_sha256\n"
    "_onnx.file_sha256 = lambda path: (hashed.append(Path(path)), real_hash(path))[1]\n"
    "model = Path(sys.argv[1])\n"
    "vector = Embedder(model).embed(['count the hashes'])[0]\n"
    "print(sum(p == model for p in hashed), round(float(vector @ vector), 4))\n"
)


@pytest.mark.slow
def test_a_second_process_trusts_the_verification_record_until_the_file_changes(
    cache_dir: Path, tmp_path: Path
) -> None:
    model = tmp_path / "model.onnx"
    shutil.copyfile(model_file(), model)

    first = run_python(COUNT_HASHES, cache_dir, str(model))
    second = run_python(COUNT_HASHES, cache_dir, str(model))
    assert (first.stdout.split(), second.stdout.split()) == (["1", "1.0"], ["0", "1.0"]), first.stderr + second.stderr
    record = json.loads((cache_dir / _onnx.RECORD_NAME).read_text())
    assert record[str(model)]["size"] == model.stat().st_size

    stat = model.stat()
    with model.open("r+b") as handle:  # same size, and the old modification time put back
        handle.seek(4096)
        handle.write(b"\x00\x01\x02")
    os.utime(model, ns=(stat.st_atime_ns, stat.st_mtime_ns))
    refused = run_python(COUNT_HASHES, cache_dir, str(model))
    assert refused.returncode != 0 and "EngineConfigError" in refused.stderr and "sha256" in refused.stderr
    with pytest.raises(EngineConfigError, match="sha256"):
        verify_model(model)


def test_an_unwritable_cache_folder_still_verifies_and_embeds(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    blocker = tmp_path / "file"
    blocker.write_text("not a folder")
    monkeypatch.setenv("SEMIF_CACHE_DIR", str(blocker / "cache"))
    vectors = Embedder(model_file()).embed(["still works"])
    assert vectors.shape == (1, 384) and abs(float(vectors[0] @ vectors[0]) - 1.0) < 1e-5


def graph_folder(cache: Path) -> Path:
    (folder,) = (cache / _onnx.GRAPH_FOLDER).iterdir()
    return folder


def scramble(path: Path) -> None:
    """Garbage every 256 KiB, size unchanged: weights used from it would give other vectors."""
    with path.open("r+b") as handle:
        for offset in range(1024, path.stat().st_size, 1 << 18):
            handle.seek(offset)
            handle.write(os.urandom(64))


@pytest.mark.parametrize("damage", ["scrambled weights", "truncated graph", "broken record"])
@pytest.mark.slow
def test_a_damaged_optimised_graph_falls_back_on_the_model_and_is_rebuilt(
    cache_dir: Path, monkeypatch: pytest.MonkeyPatch, damage: str
) -> None:
    texts = varied_texts(12)
    reference = Embedder(model_file()).embed(texts)
    folder = graph_folder(cache_dir)
    record = json.loads((folder / _onnx.GRAPH_RECORD).read_text())
    assert set(record["files"]) == {_onnx.GRAPH_FILE, _onnx.GRAPH_DATA}

    loaded: list[str] = []
    real_session = _onnx._session
    monkeypatch.setattr(
        _onnx,
        "_session",
        lambda ort, path, *a, **k: (loaded.append(Path(path).name), real_session(ort, path, *a, **k))[1],
    )
    Embedder(model_file())
    assert loaded == [_onnx.GRAPH_FILE]  # a sound saved graph is used as is

    if damage == "scrambled weights":
        scramble(folder / _onnx.GRAPH_DATA)
    elif damage == "truncated graph":
        with (folder / _onnx.GRAPH_FILE).open("r+b") as handle:
            handle.truncate(1000)
    else:
        (folder / _onnx.GRAPH_RECORD).write_text("{not json")
    loaded.clear()
    np.testing.assert_allclose(Embedder(model_file()).embed(texts), reference, atol=1e-5)
    assert loaded == ["model.onnx"]

    loaded.clear()
    np.testing.assert_allclose(Embedder(model_file()).embed(texts), reference, atol=1e-5)
    assert loaded == [_onnx.GRAPH_FILE]  # the fallback saved a sound graph again


@pytest.mark.parametrize("threads", [None, 1])
@pytest.mark.slow
def test_sessions_sleep_between_runs_on_the_threads_they_are_given(cache_dir: Path, threads: int | None) -> None:
    for _ in range(2):  # from the model, then from the saved graph
        options = Embedder(model_file(), threads=threads)._session.get_session_options()
        assert options.intra_op_num_threads == (threads or _onnx.default_threads())
        assert options.inter_op_num_threads == 1
        assert options.get_session_config_entry("session.intra_op.allow_spinning") == "0"
        assert options.get_session_config_entry("session.inter_op.allow_spinning") == "0"


def test_the_on_disk_cache_is_bounded_dropping_what_was_written_longest_ago(tmp_path) -> None:
    store = EmbeddingStore(tmp_path / "embeddings.sqlite3", max_rows=100)
    vector = bytes(4 * 384)
    for batch in range(30):
        store.put_many((f"k{batch}-{n}", vector) for n in range(10))  # 300 written in all
    assert 80 <= len(store) <= 100
    kept = store.get_many([f"k{batch}-{n}" for batch in range(30) for n in range(10)])
    assert "k29-9" in kept and "k0-0" not in kept  # the latest kept, the oldest gone


def test_a_long_text_is_remembered_by_its_hash_and_served_from_memory(cache_dir: Path) -> None:
    embedder = Embedder(model_file())
    long = "book a table for two at the corner bistro " * 1500  # about 60 KB, as a request may be
    first = embedder.embed([long])
    assert all(len(key) <= 256 for key in embedder._cache)  # not held whole
    computed = embedder.computed
    np.testing.assert_array_equal(embedder.embed([long]), first)
    assert embedder.computed == computed  # the second time from memory
