"""What retrievers hold and return, and the protocol every retriever implements."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any, Protocol, runtime_checkable

from pydantic import ConfigDict, Field, field_validator

from ....errors import InvalidArgumentError
from ..._validated import ValidatedModel
from ...scope import RetrievalScope, normalize_namespace


class Document(ValidatedModel):
    """A document to search (frozen): an id unique in its store, its text, its namespace and free metadata."""

    model_config = ConfigDict(frozen=True)

    id: str
    text: str
    namespace: str = "/"
    metadata: dict[str, Any] = Field(default_factory=dict)

    @field_validator("namespace")
    @classmethod
    def _namespace(cls, value: str) -> str:
        return normalize_namespace(value)

    @field_validator("id")
    @classmethod
    def _id(cls, value: str) -> str:
        if not str(value).strip():
            raise InvalidArgumentError("a document needs an id")
        return str(value)


class Hit(ValidatedModel):
    """One search result (frozen): the document and its score (higher is better; scales differ by retriever)."""

    model_config = ConfigDict(frozen=True)

    document: Document
    score: float = 0.0

    @property
    def id(self) -> str:
        return self.document.id

    @property
    def namespace(self) -> str:
        return self.document.namespace

    @property
    def text(self) -> str:
        return self.document.text


@runtime_checkable
class Retriever(Protocol):
    """Anything that searches documents: ``search(query, limit=, scope=, embedding=) -> list[Hit]``.

    ``scope`` is a pre-filter: a retriever returns only documents whose
    namespace it matches. ``embedding`` is the query's vector when the tool
    was given an ``embed_fn``; retrievers that do not use vectors ignore it.
    A retriever may also offer ``async asearch(...)`` with the same
    arguments, which the tools prefer.
    """

    def search(
        self,
        query: str,
        *,
        limit: int = 5,
        scope: RetrievalScope | None = None,
        embedding: Sequence[float] | None = None,
    ) -> list[Hit]: ...


def as_documents(items: Sequence[Document | Mapping[str, Any]] | Mapping[str, str]) -> list[Document]:
    """Documents from documents, ``{"id", "text", "namespace"?, "metadata"?}`` dicts, or an ``{id: text}`` mapping."""
    if isinstance(items, Mapping):
        return [Document(id=str(key), text=str(value)) for key, value in items.items()]
    return [item if isinstance(item, Document) else Document(**dict(item)) for item in items]


def scope_sql(scope: RetrievalScope | None, column: str = "namespace") -> tuple[str, list[str]]:
    """A SQL condition (and its parameters) true for the rows whose ``column`` ``scope`` matches.

    ``column`` holds canonical namespaces; a prefix covers a row when the
    row is the prefix or starts with the prefix and a ``/``.
    """
    if scope is None or scope.is_unrestricted:
        return "1", []
    if scope.matches_nothing:
        return "0", []
    params: list[str] = []
    parts = []
    if scope.include and "/" not in scope.include:
        parts.append("(" + " OR ".join(_under(column, prefix, params) for prefix in scope.include) + ")")
    parts.extend("NOT " + _under(column, prefix, params) for prefix in scope.exclude)
    return " AND ".join(parts) or "1", params


def _under(column: str, prefix: str, params: list[str]) -> str:
    params.extend([prefix, prefix + "/", prefix + "/"])
    return f"({column} = ? OR substr({column}, 1, length(?)) = ?)"
