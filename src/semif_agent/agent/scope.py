"""The retrieval scope of a run: the public name of :mod:`semif_agent.agent.toolkits.scope` (the same objects)."""

from ._run_context import current_scope, effective_scope
from .toolkits.scope import ROOT, RetrievalScope, covers, normalize_namespace

__all__ = ["ROOT", "RetrievalScope", "covers", "current_scope", "effective_scope", "normalize_namespace"]
