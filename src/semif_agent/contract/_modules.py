"""Criterion 3's import rule: the standard library and semif_agent's kernel, less what costs a body its quality.

A body imports any module of the standard library (``sys.stdlib_module_names``)
and, of semif_agent, its kernel: ``semif_agent.skills`` (with its submodules)
and the engine's request types (``semif_agent.engine.decisions``; from
``semif_agent.engine``: DecisionRequest, Option, DecisionResult, NONE_ID).
What a body can do when it runs is bounded by the sandbox, not by this list;
the refusals kept are the ones that protect what a body is worth, each with
its reason (:data:`THIRD_PARTY`, :data:`NO_NETWORK`, :data:`HIDES_CODE`,
:data:`STARTS_PROGRAMS`, :data:`HOSTS_OWN`...): what cannot run where a body
runs, and what hides what a body does from whoever reads it.
"""

from __future__ import annotations

import importlib
import importlib.util
import re
import sys
import types

THIRD_PARTY = (
    "a body may import only the standard library and semif_agent's kernel: "
    "third-party packages are not installed where it runs"
)
NO_NETWORK = "a body acts on the workspace's data; it has no network"
HIDES_CODE = "it runs code named in a string or in data, which hides what a body does: write the code out"
REACHES_INTERNALS = "it reaches native code, frames or live objects past what the body says"
IMPORT_SYSTEM = "the import system decides what code runs: changing or reaching it hides what a body runs"
BUILDS_CODE = "building functions and code objects by hand hides what a body runs"
STARTS_PROGRAMS = "starting programs hides what runs: do the work in Python"
STOPS_PROCESS = "a body may not stop the process; return an ActionResult instead"
PRIVATE_MODULE = "private modules are the standard library's internals: import the public module"
REQUEST_TYPES = ("DecisionRequest", "Option", "DecisionResult", "NONE_ID")
HOSTS_OWN = (
    "it is the host's, not a body's: of semif_agent a body imports only semif_agent.skills "
    f"and the engine's request types ({', '.join(REQUEST_TYPES)})"
)

KERNEL_MODULES = frozenset({"semif_agent.skills", "semif_agent.engine.decisions"})
"""The modules of semif_agent a body may import (with their submodules)."""
_GATEWAYS: dict[str, frozenset[str]] = {
    "semif_agent": frozenset({"skills", "engine"}),
    "semif_agent.engine": frozenset({"decisions", *REQUEST_TYPES}),
}
"""Packages on the way to the kernel, not allowed whole: the names a body may take from each."""

NETWORK_MODULES = frozenset(
    {
        "asynchat",
        "asyncio",
        "asyncore",
        "ftplib",
        "http.client",
        "http.server",
        "imaplib",
        "nntplib",
        "poplib",
        "smtpd",
        "smtplib",
        "socket",
        "socketserver",
        "ssl",
        "telnetlib",
        "urllib.request",
        "xmlrpc",
    }
)
"""Refused: a body has no network (``NO_NETWORK``)."""

_REFUSED_MODULES: dict[str, str] = {
    **dict.fromkeys(NETWORK_MODULES, NO_NETWORK),
    **dict.fromkeys(
        (
            "bdb",
            "builtins",
            "code",
            "codeop",
            "cProfile",
            "doctest",
            "imp",
            "importlib",
            "logging.config",
            "marshal",
            "pdb",
            "pickle",
            "pkgutil",
            "profile",
            "pydoc",
            "runpy",
            "shelve",
            "site",
            "timeit",
            "tkinter",
            "trace",
            "unittest.mock",
            "zipimport",
        ),
        HIDES_CODE,
    ),
    **dict.fromkeys(("ctypes", "gc", "inspect"), REACHES_INTERNALS),
    **dict.fromkeys(
        (
            "antigravity",
            "ensurepip",
            "idlelib",
            "multiprocessing",
            "pty",
            "subprocess",
            "this",
            "turtledemo",
            "venv",
            "webbrowser",
        ),
        STARTS_PROGRAMS,
    ),
}
"""Standard-library modules (with their submodules) a body may not import, each with its reason."""

_STARTS = re.compile(r"system|popen|fork|forkpty|exec\w*|spawn\w*|posix_spawnp?|startfile")
_TRACES = re.compile(r"settrace\w*|setprofile\w*")
_REFUSED_MEMBERS: dict[str, tuple[tuple[re.Pattern[str], str], ...]] = {
    **dict.fromkeys(("os", "posix", "nt"), ((_STARTS, STARTS_PROGRAMS),)),
    "sys": (
        (re.compile(r"modules|meta_path|path|path_hooks|path_importer_cache"), IMPORT_SYSTEM),
        (_TRACES, REACHES_INTERNALS),
        (re.compile(r"exit"), STOPS_PROCESS),
    ),
    "threading": ((_TRACES, REACHES_INTERNALS),),
    "types": ((re.compile(r"CodeType|FunctionType|LambdaType"), BUILDS_CODE),),
}
"""Names of allowed modules a body may not use, each with its reason."""


def module_refusal(name: str) -> str | None:
    """Why a body may not import the module ``name``; None when it may."""
    parts = name.split(".")
    if parts[0] == "semif_agent":
        return None if any(name == m or name.startswith(m + ".") for m in KERNEL_MODULES) else HOSTS_OWN
    if parts[0] not in sys.stdlib_module_names:
        return THIRD_PARTY
    if name != "__future__" and any(part.startswith("_") for part in parts):
        return PRIVATE_MODULE
    for end in range(1, len(parts) + 1):
        reason = _REFUSED_MODULES.get(".".join(parts[:end]))
        if reason:
            return reason
    return None


def allowed_module(name: str) -> bool:
    """True when a body may import ``name``."""
    return module_refusal(name) is None


def gateway(name: str) -> bool:
    """True for a package on the way to the kernel but not allowed whole (``semif_agent``, ``semif_agent.engine``)."""
    return name in _GATEWAYS


def member_refusal(module: str, name: str) -> str | None:
    """Why a body may not use ``module.name`` (an attribute or an imported name); None when it may."""
    if module in _GATEWAYS:
        return None if name in _GATEWAYS[module] else HOSTS_OWN
    for pattern, reason in _REFUSED_MEMBERS.get(module, ()):
        if pattern.fullmatch(name):
            return reason
    return None


def member_module(module: str, name: str) -> str | None:
    """The module ``module.name`` is, if it is one: a submodule, or a module the first holds (None otherwise).

    A package's submodule is found whether or not it was imported yet; the
    module itself is imported to read what it holds (only allowed ones are).
    """
    dotted = f"{module}.{name}"
    if gateway(module):
        return dotted if allowed_module(dotted) or gateway(dotted) else None
    try:
        loaded = importlib.import_module(module)
        if hasattr(loaded, "__path__") and importlib.util.find_spec(dotted) is not None:
            return dotted
        value = getattr(loaded, name, None)
    except Exception:  # noqa: BLE001  # a module that fails to load here holds nothing to follow
        return None
    return value.__name__ if isinstance(value, types.ModuleType) else None
