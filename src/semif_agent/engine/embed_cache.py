"""An on-disk cache of text embeddings, so a tree's options are embedded once.

Keys are a hash of the model id and the text: a changed description is a new
key, so the cache never serves a stale vector. Best effort: a cache that
cannot be opened or written is skipped with a warning, never an error.

The cache is bounded: a server embeds every request it is asked, so past
``max_rows`` vectors (:data:`MAX_ROWS`, about 650 MB) the ones written
longest ago are dropped, a tenth at a time; a text whose vector was dropped
is embedded again when it comes back.
"""

from __future__ import annotations

import hashlib
import os
import sqlite3
import threading
import warnings
from collections.abc import Iterable
from pathlib import Path

_SCHEMA = "CREATE TABLE IF NOT EXISTS embeddings (key TEXT PRIMARY KEY, vector BLOB NOT NULL)"
_CHUNK = 500
MAX_ROWS = 400_000
_LOOK_EVERY = 2_000  # vectors written between two looks at the cache's size


def default_cache_path() -> Path:
    """``$SEMIF_CACHE_DIR/embeddings.sqlite3``, else under ``$XDG_CACHE_HOME/semif`` (or ``~/.cache``)."""
    base = os.environ.get("SEMIF_CACHE_DIR")
    if not base:
        base = os.path.join(os.environ.get("XDG_CACHE_HOME") or os.path.join(Path.home(), ".cache"), "semif")
    return Path(base) / "embeddings.sqlite3"


def cache_key(model: str, text: str) -> str:
    return hashlib.sha256(f"{model}\0{text}".encode()).hexdigest()[:40]


class EmbeddingStore:
    """Vectors (raw float32 bytes) by key, in one SQLite file shared by processes."""

    def __init__(self, path: str | os.PathLike[str], *, max_rows: int = MAX_ROWS) -> None:
        self.path = Path(path)
        self.max_rows = max_rows
        self._written = 0  # since the last look at the size
        self._lock = threading.Lock()
        self._db: sqlite3.Connection | None = None
        self._broken = False

    def _connect(self) -> sqlite3.Connection | None:
        if self._db is None and not self._broken:
            try:
                self.path.parent.mkdir(parents=True, exist_ok=True)
                db = sqlite3.connect(self.path, check_same_thread=False, timeout=5)
                db.execute("PRAGMA journal_mode=WAL")
                db.execute("PRAGMA synchronous=NORMAL")  # a cache: no fsync a write (WAL keeps it whole)
                db.execute(_SCHEMA)
                self._db = db
            except (OSError, sqlite3.Error) as exc:
                self._give_up(exc)
        return self._db

    def _give_up(self, exc: Exception) -> None:
        self._broken = True
        warnings.warn(f"embedding cache {self.path} disabled: {exc}", RuntimeWarning, stacklevel=3)

    def get_many(self, keys: list[str]) -> dict[str, bytes]:
        found: dict[str, bytes] = {}
        with self._lock:
            db = self._connect()
            if db is None:
                return found
            try:
                for start in range(0, len(keys), _CHUNK):
                    chunk = keys[start : start + _CHUNK]
                    marks = ",".join("?" * len(chunk))
                    found.update(db.execute(f"SELECT key, vector FROM embeddings WHERE key IN ({marks})", chunk))
            except sqlite3.Error as exc:
                self._give_up(exc)
        return found

    def put_many(self, items: Iterable[tuple[str, bytes]]) -> None:
        with self._lock:
            db = self._connect()
            if db is None:
                return
            rows = list(items)
            try:
                with db:
                    db.executemany("INSERT OR REPLACE INTO embeddings (key, vector) VALUES (?, ?)", rows)
                self._written += len(rows)
                if self._written >= min(_LOOK_EVERY, max(1, self.max_rows // 10)):
                    self._written = 0
                    self._trim(db)
            except sqlite3.Error as exc:
                self._give_up(exc)

    def _trim(self, db: sqlite3.Connection) -> None:
        """Past ``max_rows``, drop the vectors written longest ago (a replaced one counts as written anew), down to
        nine tenths of it."""
        count = db.execute("SELECT count(*) FROM embeddings").fetchone()[0]
        if count > self.max_rows:
            with db:
                db.execute(
                    "DELETE FROM embeddings WHERE rowid IN (SELECT rowid FROM embeddings ORDER BY rowid LIMIT ?)",
                    (count - self.max_rows * 9 // 10,),
                )

    def __len__(self) -> int:
        with self._lock:
            db = self._connect()
            return db.execute("SELECT count(*) FROM embeddings").fetchone()[0] if db else 0

    def close(self) -> None:
        with self._lock:
            if self._db is not None:
                self._db.close()
                self._db = None
