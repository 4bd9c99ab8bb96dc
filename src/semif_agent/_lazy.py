"""Lazy package namespaces: a package's public names imported from their modules on first use."""

from __future__ import annotations

import importlib
from collections.abc import Callable, Mapping


def lazy_namespace(
    package: str, exports: Mapping[str, str], namespace: dict[str, object]
) -> tuple[Callable[[str], object], Callable[[], list[str]]]:
    """``__getattr__`` and ``__dir__`` for ``package``: ``exports`` maps a name to its module (absolute or ``.relative``).

    A name is imported when first asked for and kept in ``namespace`` (the
    package's globals), so the next access is a plain lookup.
    """

    def __getattr__(name: str) -> object:
        module = exports.get(name)
        if module is None:
            raise AttributeError(f"module {package!r} has no attribute {name!r}")
        value = getattr(importlib.import_module(module, package), name)
        namespace[name] = value
        return value

    def __dir__() -> list[str]:
        return sorted(set(namespace) | set(exports))

    return __getattr__, __dir__
