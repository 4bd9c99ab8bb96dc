"""SQLite full-text search helpers: FTS5 when the SQLite build has it, ``LIKE`` otherwise.

Shared by the memory store (facts) and :class:`~semif_agent.agent.toolkits.retrieval.SQLiteRetriever`.
A query is split into words; a row matches when it has any of them. FTS5
ranks with BM25 (``porter`` stemming, diacritics folded); the ``LIKE``
fallback ranks by how many of the words a row contains.
"""

from __future__ import annotations

import re
import sqlite3
from collections.abc import Sequence

TOKENIZE = "porter unicode61 remove_diacritics 2"
_WORD = re.compile(r"\w+", re.UNICODE)
MAX_TERMS = 32


def words(text: str) -> list[str]:
    """The distinct words of ``text`` (at most :data:`MAX_TERMS`), lower-cased, in order."""
    return list(dict.fromkeys(w.lower() for w in _WORD.findall(text or "")))[:MAX_TERMS]


def fts5_available(conn: sqlite3.Connection) -> bool:
    """True when this SQLite build can make FTS5 tables."""
    try:
        conn.execute("CREATE VIRTUAL TABLE IF NOT EXISTS temp._semif_fts5_probe USING fts5(x)")
        conn.execute("DROP TABLE IF EXISTS temp._semif_fts5_probe")
        return True
    except sqlite3.OperationalError:
        return False


def match_expression(terms: Sequence[str]) -> str:
    """An FTS5 ``MATCH`` expression for rows having any of ``terms`` (each quoted: no query syntax leaks in)."""
    return " OR ".join('"' + term.replace('"', '""') + '"' for term in terms)


def like_clause(column: str, terms: Sequence[str]) -> tuple[str, list[str]]:
    """A ``WHERE`` fragment (and its parameters) for rows whose ``column`` contains any of ``terms``."""
    clause = " OR ".join(f"lower({column}) LIKE ? ESCAPE '\\'" for _ in terms)
    return f"({clause})", [f"%{escape_like(term)}%" for term in terms]


def like_score(text: str, terms: Sequence[str]) -> float:
    """How many of ``terms`` ``text`` contains (the ``LIKE`` fallback's rank)."""
    lowered = text.lower()
    return float(sum(1 for term in terms if term in lowered))


def escape_like(text: str) -> str:
    return text.replace("\\", "\\\\").replace("%", "\\%").replace("_", "\\_")


def connect(path: str) -> sqlite3.Connection:
    """A connection shared by threads (callers hold a lock), in autocommit mode; WAL for files."""
    conn = sqlite3.connect(path, check_same_thread=False, isolation_level=None, timeout=10.0)
    if path != ":memory:" and not path.startswith("file::memory:"):
        conn.execute("PRAGMA journal_mode=WAL")
    conn.execute("PRAGMA busy_timeout=10000")
    return conn
