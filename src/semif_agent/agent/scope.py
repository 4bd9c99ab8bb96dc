"""Retrieval scope: which namespaces of a vault a turn's tools may read.

::

    from semif_agent.agent import Agent, RetrievalScope, current_scope

    scope = RetrievalScope(include=("/campaign-1",), exclude=("/campaign-1/secret",))
    scope.matches("/campaign-1/sessions")   # True
    scope.matches("/campaign-10")           # False: prefixes stop at a "/" boundary
    agent = Agent(...).with_scope(scope)

Namespaces are ``/``-separated paths (``/campaign-1/sessions``). A prefix
covers itself and everything below it, never a sibling that merely starts
with the same letters. ``exclude`` always wins over ``include``; an empty
``include`` is the whole vault. :meth:`RetrievalScope.intersect` gives a
child's effective scope, which can only be narrower than its parent's.

The agent publishes its scope for the duration of each tool call, in the
call's run context (and a subagent's turn runs with the intersection of its
parent's and its own); :func:`~semif_agent.agent.current_scope` reads it. The vault itself is a store mount bound when
the tools are built (see :func:`~semif_agent.agent.toolkits.retrieval.rag_tools`),
never part of a scope.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any

from pydantic import ConfigDict, field_validator

from ..errors import InvalidArgumentError
from ._validated import ValidatedModel

ROOT = "/"


def normalize_namespace(namespace: str) -> str:
    """``namespace`` as a canonical path: a leading ``/``, no empty segments, no trailing ``/``.

    A ``.`` or ``..`` segment is an :class:`~semif_agent.errors.InvalidArgumentError` (a ``ValueError``): namespaces are names, and
    one that looks like it climbs out of its parent would read as inside it.
    """
    parts = [part for part in str(namespace).strip().split("/") if part]
    if any(part in (".", "..") for part in parts):
        raise InvalidArgumentError(f"namespace {namespace!r} has a '.' or '..' segment")
    return ROOT + "/".join(parts)


def covers(prefix: str, namespace: str) -> bool:
    """True when ``prefix`` is ``namespace`` or one of its ancestors (both canonical)."""
    return prefix == ROOT or namespace == prefix or namespace.startswith(prefix + "/")


class RetrievalScope(ValidatedModel):
    """Navigation scope over hierarchical namespaces (frozen).

    ``include``: namespace prefixes that may be read (empty: the whole vault).
    ``exclude``: prefixes that may never be read; exclude always wins.
    Prefixes are normalized (``"a/b/"`` is ``"/a/b"``).
    """

    model_config = ConfigDict(frozen=True)

    include: tuple[str, ...] = ()
    exclude: tuple[str, ...] = ()

    @field_validator("include", "exclude", mode="before")
    @classmethod
    def _normalize(cls, value: object) -> tuple[str, ...]:
        if isinstance(value, str):
            value = (value,)
        if not isinstance(value, Iterable):
            raise InvalidArgumentError("must be a list of namespace prefixes")
        return _unique(normalize_namespace(item) for item in value)

    @classmethod
    def coerce(cls, scope: RetrievalScope | Mapping[str, Any] | None) -> RetrievalScope | None:
        """``scope`` as a :class:`RetrievalScope` (a mapping gives its fields; ``None`` stays ``None``)."""
        return scope if scope is None or isinstance(scope, RetrievalScope) else cls(**dict(scope))

    @classmethod
    def nothing(cls) -> RetrievalScope:
        """The scope that matches no namespace (excluding the root excludes everything)."""
        return cls(exclude=(ROOT,))

    @property
    def is_unrestricted(self) -> bool:
        """True when every namespace matches."""
        return not self.include and not self.exclude

    @property
    def matches_nothing(self) -> bool:
        """True when no namespace can match (the root is excluded)."""
        return ROOT in self.exclude

    def matches(self, namespace: str) -> bool:
        """True when ``namespace`` is inside an include (or includes are empty) and inside no exclude."""
        namespace = normalize_namespace(namespace)
        if any(covers(prefix, namespace) for prefix in self.exclude):
            return False
        return not self.include or any(covers(prefix, namespace) for prefix in self.include)

    def intersect(self, child: RetrievalScope | None) -> RetrievalScope:
        """The effective scope of a child that asks for ``child`` under this one.

        Excludes are united. Includes are intersected pair by pair, each pair
        keeping the deeper prefix when one covers the other; disjoint
        non-empty includes give a scope that matches nothing. An empty
        include on either side leaves the other side's.
        """
        if child is None:
            return self
        exclude = _unique([*self.exclude, *child.exclude])
        if not self.include or not child.include:
            return RetrievalScope(include=self.include or child.include, exclude=exclude)
        include: list[str] = []
        for mine in self.include:
            for theirs in child.include:
                if covers(mine, theirs):
                    include.append(theirs)
                elif covers(theirs, mine):
                    include.append(mine)
        if not include:
            return RetrievalScope(exclude=_unique([*exclude, ROOT]))
        return RetrievalScope(include=_unique(include), exclude=exclude)

    def __str__(self) -> str:
        if self.matches_nothing:
            return "nothing"
        shown = ", ".join(self.include) if self.include else "everything"
        return f"{shown} except {', '.join(self.exclude)}" if self.exclude else shown


def _unique(items: Iterable[str]) -> tuple[str, ...]:
    return tuple(dict.fromkeys(items))
