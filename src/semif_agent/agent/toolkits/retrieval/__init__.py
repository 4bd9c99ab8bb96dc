"""Retrieval for the agent: the :class:`Retriever` protocol, two built-in retrievers, and ``search_docs``.

- :class:`SQLiteRetriever`: full-text search (SQLite FTS5, BM25) over documents with ids, text and namespaces.
- :class:`EmbeddingRetriever`: semantic search on the local engine's embedded model.
- :func:`rag_tools` / :func:`rag_skill` / :func:`rag_toolset`: the ``search_docs`` tool over one retriever or a dict of mounted vaults.

Searches honour the :class:`~semif_agent.agent.RetrievalScope` published for the tool call.
"""

from __future__ import annotations

from .base import Document, Hit, Retriever, as_documents
from .embedding import EmbeddingRetriever, local_embed_texts
from .sqlite import SQLiteRetriever
from .tools import RAG_INSTRUCTIONS, UnknownVaultError, rag_skill, rag_tools, rag_toolset, render_hits

__all__ = [
    "Retriever",
    "Document",
    "Hit",
    "as_documents",
    "SQLiteRetriever",
    "EmbeddingRetriever",
    "local_embed_texts",
    "rag_tools",
    "rag_skill",
    "rag_toolset",
    "render_hits",
    "UnknownVaultError",
    "RAG_INSTRUCTIONS",
]
