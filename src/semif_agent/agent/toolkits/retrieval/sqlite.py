"""The built-in full-text retriever: documents with ids, text and namespaces in SQLite FTS5.

::

    from semif_agent.agent import SQLiteRetriever, rag_tools

    docs = SQLiteRetriever("docs.sqlite3")          # ":memory:" (the default) keeps it in this process
    docs.add([{"id": "c1-s1", "text": "The party met the dragon.", "namespace": "/campaign-1/sessions"}])
    docs.search("dragon", scope=RetrievalScope(include=("/campaign-1",)))

Scopes filter in SQL, before ranking. Ranking is BM25 over the words of the
query (any word matches; ``porter`` stemming). Without FTS5 in the SQLite
build it falls back to ``LIKE`` and ranks by how many words a document has.
"""

from __future__ import annotations

import json
import os
import threading
from collections.abc import Iterable, Mapping, Sequence
from typing import Any

from ....errors import check_type
from ...scope import RetrievalScope
from . import fts
from .base import Document, Hit, as_documents, scope_sql

_SCHEMA = """
CREATE TABLE IF NOT EXISTS documents (
    rowid INTEGER PRIMARY KEY AUTOINCREMENT,
    id TEXT NOT NULL UNIQUE,
    text TEXT NOT NULL,
    namespace TEXT NOT NULL,
    metadata TEXT NOT NULL DEFAULT '{}'
);
CREATE INDEX IF NOT EXISTS documents_by_namespace ON documents (namespace);
"""

_FTS_SCHEMA = f"""
CREATE VIRTUAL TABLE IF NOT EXISTS documents_fts USING fts5(
    text, content='documents', content_rowid='rowid', tokenize='{fts.TOKENIZE}'
);
CREATE TRIGGER IF NOT EXISTS documents_ai AFTER INSERT ON documents BEGIN
    INSERT INTO documents_fts (rowid, text) VALUES (new.rowid, new.text);
END;
CREATE TRIGGER IF NOT EXISTS documents_ad AFTER DELETE ON documents BEGIN
    INSERT INTO documents_fts (documents_fts, rowid, text) VALUES ('delete', old.rowid, old.text);
END;
CREATE TRIGGER IF NOT EXISTS documents_au AFTER UPDATE ON documents BEGIN
    INSERT INTO documents_fts (documents_fts, rowid, text) VALUES ('delete', old.rowid, old.text);
    INSERT INTO documents_fts (rowid, text) VALUES (new.rowid, new.text);
END;
"""

_COLUMNS = "d.id, d.text, d.namespace, d.metadata"


class SQLiteRetriever:
    """Full-text search over documents stored in SQLite (a file, or ``":memory:"``).

    ``fts5=False`` uses the ``LIKE`` search even where FTS5 is available.
    """

    def __init__(self, path: str = ":memory:", *, fts5: bool | None = None) -> None:
        check_type("path", path, (str, os.PathLike))
        self.path = str(path)
        self._lock = threading.RLock()
        self._conn = fts.connect(self.path)
        self.has_fts = fts.fts5_available(self._conn) and fts5 is not False
        with self._lock:
            self._conn.executescript(_SCHEMA)
            if self.has_fts:
                self._conn.executescript(_FTS_SCHEMA)

    def add(self, documents: Sequence[Document | Mapping[str, object]] | Mapping[str, str]) -> list[Document]:
        """Add documents, replacing any with the same id; return them."""
        docs = as_documents(documents)
        with self._lock:
            self._conn.execute("BEGIN")
            try:
                for doc in docs:
                    self._conn.execute(
                        "INSERT INTO documents (id, text, namespace, metadata) VALUES (?, ?, ?, ?) "
                        "ON CONFLICT(id) DO UPDATE SET text = excluded.text, namespace = excluded.namespace, "
                        "metadata = excluded.metadata",
                        (doc.id, doc.text, doc.namespace, json.dumps(doc.metadata, ensure_ascii=False, default=str)),
                    )
                self._conn.execute("COMMIT")
            except BaseException:
                self._conn.execute("ROLLBACK")
                raise
        return docs

    def delete(self, ids: Iterable[str]) -> int:
        """Delete documents by id; return how many there were."""
        ids = [str(i) for i in ids]
        with self._lock:
            return sum(self._conn.execute("DELETE FROM documents WHERE id = ?", (i,)).rowcount for i in ids)

    def get(self, doc_id: str) -> Document | None:
        with self._lock:
            row = self._conn.execute(f"SELECT {_COLUMNS} FROM documents d WHERE d.id = ?", (str(doc_id),)).fetchone()
        return _document(row) if row else None

    def __len__(self) -> int:
        with self._lock:
            return int(self._conn.execute("SELECT count(*) FROM documents").fetchone()[0])

    def search(
        self,
        query: str,
        *,
        limit: int = 5,
        scope: RetrievalScope | None = None,
        embedding: Sequence[float] | None = None,
    ) -> list[Hit]:
        """The documents in ``scope`` that best match ``query``, best first (``embedding`` is not used)."""
        del embedding
        terms = fts.words(query)
        if not terms or limit < 1:
            return []
        where, params = scope_sql(scope, "d.namespace")
        with self._lock:
            if self.has_fts:
                rows = self._conn.execute(
                    f"SELECT {_COLUMNS}, -bm25(documents_fts) FROM documents_fts "
                    f"JOIN documents d ON d.rowid = documents_fts.rowid "
                    f"WHERE documents_fts MATCH ? AND {where} ORDER BY bm25(documents_fts), d.id LIMIT ?",
                    [fts.match_expression(terms), *params, int(limit)],
                ).fetchall()
                return [Hit(document=_document(found[:4]), score=float(found[4])) for found in rows]
            clause, like_params = fts.like_clause("d.text", terms)
            rows = self._conn.execute(
                f"SELECT {_COLUMNS} FROM documents d WHERE {clause} AND {where}", [*like_params, *params]
            ).fetchall()
        hits = [Hit(document=doc, score=fts.like_score(doc.text, terms)) for doc in map(_document, rows)]
        hits.sort(key=lambda h: (-h.score, h.id))
        return hits[:limit]

    def close(self) -> None:
        with self._lock:
            self._conn.close()

    def __repr__(self) -> str:
        return f"<SQLiteRetriever {self.path!r}>"


def _document(row: Sequence[Any]) -> Document:
    doc_id, text, namespace, metadata = row
    return Document(id=doc_id, text=text, namespace=namespace, metadata=json.loads(metadata or "{}"))
