"""The memory manager: an agent's conversation history and persistent facts, in one SQLite file.

::

    from semif_agent.agent import Agent, MemoryManager, memory_tools

    memory = MemoryManager("memory.sqlite3")              # ":memory:" (the default) keeps it in this process
    agent = Agent(...).with_memory(memory).with_tools(memory_tools(memory))

History is kept per *session*: finished turns (their messages, tool calls
and results included) are appended to the manager's session, and the next
turn starts from them, so a conversation survives the process and can be
resumed by another agent. Facts are shared by every session of the store:
``save_fact`` / ``search_facts`` / ``update_fact`` / ``delete_fact``, with
full-text search (SQLite FTS5, BM25-ranked; a ``LIKE`` search where the
SQLite build lacks FTS5).

One manager may serve several agents at once (they then share the session);
:meth:`MemoryManager.session` gives a view of the same store under another
session, so agents keep separate conversations and share the facts. Calls
are serialized by a lock; a file store is in WAL mode, so several processes
may use it too.
"""

from __future__ import annotations

import json
import sqlite3
import threading
import time
from collections.abc import Sequence
from typing import Any

from pydantic import ConfigDict

from ....errors import InvalidArgumentError
from ....llm.messages import AssistantMessage, Message, SystemMessage, ToolCall, ToolResultMessage, UserMessage
from ..._validated import ValidatedModel
from ...errors import AgentError
from ..retrieval import fts

SCHEMA_VERSION = 1
DEFAULT_SESSION = "default"

_SCHEMA = """
CREATE TABLE IF NOT EXISTS memory_meta (key TEXT PRIMARY KEY, value TEXT NOT NULL);
CREATE TABLE IF NOT EXISTS facts (
    id INTEGER PRIMARY KEY AUTOINCREMENT,
    content TEXT NOT NULL,
    tags TEXT NOT NULL DEFAULT '',
    created_at REAL NOT NULL,
    updated_at REAL NOT NULL
);
CREATE TABLE IF NOT EXISTS turns (
    id INTEGER PRIMARY KEY AUTOINCREMENT,
    session TEXT NOT NULL,
    messages TEXT NOT NULL,
    tokens INTEGER NOT NULL,
    created_at REAL NOT NULL
);
CREATE INDEX IF NOT EXISTS turns_by_session ON turns (session, id);
"""

_FTS_SCHEMA = f"""
CREATE VIRTUAL TABLE IF NOT EXISTS facts_fts USING fts5(
    content, tags, content='facts', content_rowid='id', tokenize='{fts.TOKENIZE}'
);
CREATE TRIGGER IF NOT EXISTS facts_ai AFTER INSERT ON facts BEGIN
    INSERT INTO facts_fts (rowid, content, tags) VALUES (new.id, new.content, new.tags);
END;
CREATE TRIGGER IF NOT EXISTS facts_ad AFTER DELETE ON facts BEGIN
    INSERT INTO facts_fts (facts_fts, rowid, content, tags) VALUES ('delete', old.id, old.content, old.tags);
END;
CREATE TRIGGER IF NOT EXISTS facts_au AFTER UPDATE ON facts BEGIN
    INSERT INTO facts_fts (facts_fts, rowid, content, tags) VALUES ('delete', old.id, old.content, old.tags);
    INSERT INTO facts_fts (rowid, content, tags) VALUES (new.id, new.content, new.tags);
END;
"""


class FactNotFoundError(AgentError, LookupError):
    """No fact has that id (it was never saved, or was deleted)."""


class Fact(ValidatedModel):
    """One persistent fact (frozen)."""

    model_config = ConfigDict(frozen=True)

    id: int
    content: str
    tags: tuple[str, ...] = ()
    created_at: float = 0.0
    updated_at: float = 0.0

    def render(self) -> str:
        """``[id] content (tags: a, b)``: how tools show it to a model."""
        tags = f" (tags: {', '.join(self.tags)})" if self.tags else ""
        return f"[{self.id}] {self.content}{tags}"


class _Store:
    """The connection, its lock and what the schema supports; shared by every session view."""

    def __init__(self, path: str, fts5: bool | None) -> None:
        self.path = path
        self.lock = threading.RLock()
        self.conn = fts.connect(path)
        self.has_fts = fts.fts5_available(self.conn) and fts5 is not False
        with self.lock:
            self.conn.executescript(_SCHEMA)
            if self.has_fts:
                self.conn.executescript(_FTS_SCHEMA)
            self.conn.execute(
                "INSERT OR IGNORE INTO memory_meta (key, value) VALUES ('schema_version', ?)", (str(SCHEMA_VERSION),)
            )
        self.closed = False

    def close(self) -> None:
        with self.lock:
            if not self.closed:
                self.closed = True
                self.conn.close()


class MemoryManager:
    """Conversation history (per session) plus persistent facts, stored in SQLite.

    ``path`` is a database file (created if missing) or ``":memory:"``.
    ``session`` names the conversation this manager reads and appends to.
    ``fts5=False`` searches facts with ``LIKE`` even where FTS5 is available.
    """

    def __init__(
        self, path: str | Any = ":memory:", *, session: str = DEFAULT_SESSION, fts5: bool | None = None
    ) -> None:
        self._store = path if isinstance(path, _Store) else _Store(str(path), fts5)
        if not session:
            raise InvalidArgumentError("a memory session needs a name")
        self.session_id = str(session)

    @property
    def path(self) -> str:
        return self._store.path

    @property
    def full_text_search(self) -> str:
        """``"fts5"`` or ``"like"``: how facts are searched with this SQLite build."""
        return "fts5" if self._store.has_fts else "like"

    def session(self, name: str) -> MemoryManager:
        """A view of the same store under session ``name`` (its own history, the same facts)."""
        return MemoryManager(self._store, session=name)

    # -- facts ---------------------------------------------------------------

    def save_fact(self, content: str, tags: Sequence[str] = ()) -> Fact:
        """Store a fact; return it with its id."""
        content = _clean_content(content)
        now = time.time()
        with self._store.lock:
            cursor = self._conn.execute(
                "INSERT INTO facts (content, tags, created_at, updated_at) VALUES (?, ?, ?, ?)",
                (content, _tags_text(tags), now, now),
            )
            fact_id = int(cursor.lastrowid or 0)
        return Fact(id=fact_id, content=content, tags=_tags(tags), created_at=now, updated_at=now)

    def get_fact(self, fact_id: int) -> Fact | None:
        with self._store.lock:
            row = self._conn.execute(
                "SELECT id, content, tags, created_at, updated_at FROM facts WHERE id = ?", (int(fact_id),)
            ).fetchone()
        return _fact(row) if row else None

    def update_fact(self, fact_id: int, content: str, tags: Sequence[str] | None = None) -> Fact:
        """Replace a fact's content (and its tags, when given). Raises :class:`FactNotFoundError`."""
        content = _clean_content(content)
        with self._store.lock:
            current = self.get_fact(fact_id)
            if current is None:
                raise FactNotFoundError(f"no fact has id {fact_id}")
            new_tags = current.tags if tags is None else _tags(tags)
            now = time.time()
            self._conn.execute(
                "UPDATE facts SET content = ?, tags = ?, updated_at = ? WHERE id = ?",
                (content, _tags_text(new_tags), now, int(fact_id)),
            )
        return current.model_copy(update={"content": content, "tags": new_tags, "updated_at": now})

    def delete_fact(self, fact_id: int) -> Fact:
        """Delete a fact; return what it was. Raises :class:`FactNotFoundError`."""
        with self._store.lock:
            current = self.get_fact(fact_id)
            if current is None:
                raise FactNotFoundError(f"no fact has id {fact_id}")
            self._conn.execute("DELETE FROM facts WHERE id = ?", (int(fact_id),))
        return current

    def facts(self) -> list[Fact]:
        """Every fact, oldest first."""
        with self._store.lock:
            rows = self._conn.execute(
                "SELECT id, content, tags, created_at, updated_at FROM facts ORDER BY id"
            ).fetchall()
        return [_fact(row) for row in rows]

    def search_facts(self, query: str, limit: int = 5) -> list[Fact]:
        """The facts that best match ``query`` (any of its words, in content or tags), best first."""
        terms = fts.words(query)
        limit = max(1, int(limit))
        if not terms:
            return []
        with self._store.lock:
            if self._store.has_fts:
                rows = self._conn.execute(
                    "SELECT f.id, f.content, f.tags, f.created_at, f.updated_at FROM facts_fts "
                    "JOIN facts f ON f.id = facts_fts.rowid WHERE facts_fts MATCH ? "
                    "ORDER BY bm25(facts_fts), f.id DESC LIMIT ?",
                    (fts.match_expression(terms), limit),
                ).fetchall()
                return [_fact(row) for row in rows]
            clause, params = fts.like_clause("content || ' ' || tags", terms)
            rows = self._conn.execute(
                f"SELECT id, content, tags, created_at, updated_at FROM facts WHERE {clause}",
                params,
            ).fetchall()
        found = [_fact(row) for row in rows]
        found.sort(key=lambda f: (-fts.like_score(f"{f.content} {' '.join(f.tags)}", terms), -f.id))
        return found[:limit]

    # -- conversation --------------------------------------------------------

    def add_turn(self, messages: Sequence[Message], tokens: int | None = None) -> None:
        """Append one finished turn's messages to this session."""
        if not messages:
            return
        if tokens is None:
            from ..._turn_messages import message_tokens

            tokens = sum(message_tokens(m) for m in messages)
        data = json.dumps([message_to_dict(m) for m in messages], ensure_ascii=False)
        with self._store.lock:
            self._conn.execute(
                "INSERT INTO turns (session, messages, tokens, created_at) VALUES (?, ?, ?, ?)",
                (self.session_id, data, int(tokens), time.time()),
            )

    def recent_turns(self, room: int | None = None) -> list[tuple[tuple[Message, ...], int]]:
        """This session's latest turns that fit in ``room`` tokens together (all with ``None``), oldest first.

        Turns are taken newest first and whole; the first that does not fit
        ends the walk (an older turn is never kept without the newer ones).
        """
        kept: list[tuple[tuple[Message, ...], int]] = []
        with self._store.lock:
            cursor = self._conn.execute(
                "SELECT messages, tokens FROM turns WHERE session = ? ORDER BY id DESC", (self.session_id,)
            )
            for data, tokens in cursor:
                if room is not None:
                    if tokens > room:
                        break
                    room -= tokens
                kept.append((tuple(message_from_dict(m) for m in json.loads(data)), int(tokens)))
        kept.reverse()
        return kept

    def messages(self) -> list[Message]:
        """This session's whole conversation, oldest first."""
        return [m for messages, _ in self.recent_turns() for m in messages]

    def clear_history(self) -> None:
        """Forget this session's conversation (facts stay)."""
        with self._store.lock:
            self._conn.execute("DELETE FROM turns WHERE session = ?", (self.session_id,))

    # -- lifetime ------------------------------------------------------------

    def close(self) -> None:
        """Close the store (every session view of it)."""
        self._store.close()

    def __enter__(self) -> MemoryManager:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def __repr__(self) -> str:
        return f"<MemoryManager {self.path!r} session={self.session_id!r}>"

    @property
    def _conn(self) -> sqlite3.Connection:
        if self._store.closed:
            raise AgentError("this MemoryManager is closed")
        return self._store.conn


# -- rows and messages -------------------------------------------------------


def _clean_content(content: str) -> str:
    content = str(content).strip()
    if not content:
        raise InvalidArgumentError("a fact needs some content")
    return content


def _tags(tags: Sequence[str] | str | None) -> tuple[str, ...]:
    if isinstance(tags, str):
        tags = [tags]
    return tuple(dict.fromkeys(t.strip() for t in tags or () if str(t).strip()))


def _tags_text(tags: Sequence[str]) -> str:
    return "\x1f".join(_tags(tags))


def _fact(row: tuple[Any, ...]) -> Fact:
    fact_id, content, tags, created, updated = row
    return Fact(
        id=fact_id,
        content=content,
        tags=tuple(t for t in tags.split("\x1f") if t),
        created_at=created,
        updated_at=updated,
    )


def message_to_dict(message: Message) -> dict[str, object]:
    """A message as JSON-ready data (tool call arguments kept as the text the model sent)."""
    data: dict[str, Any] = {"role": message.role, "content": message.content}
    if isinstance(message, AssistantMessage) and message.tool_calls:
        data["tool_calls"] = [
            {"id": c.id, "name": c.name, "arguments": c.raw_arguments or json.dumps(c.arguments)}
            for c in message.tool_calls
        ]
    if isinstance(message, ToolResultMessage):
        data["tool_call_id"] = message.tool_call_id
        data["is_error"] = message.is_error
    return data


def message_from_dict(data: dict[str, Any]) -> Message:
    """The message :func:`message_to_dict` wrote."""
    role, content = data.get("role"), str(data.get("content") or "")
    if role == "assistant":
        calls = tuple(
            ToolCall.from_json(id=str(c.get("id", "")), name=str(c["name"]), raw_arguments=str(c.get("arguments", "")))
            for c in data.get("tool_calls") or ()
        )
        return AssistantMessage(content=content, tool_calls=calls)
    if role == "tool":
        return ToolResultMessage(
            tool_call_id=str(data.get("tool_call_id", "")), content=content, is_error=bool(data.get("is_error"))
        )
    if role == "system":
        return SystemMessage(content=content)
    return UserMessage(content=content)
