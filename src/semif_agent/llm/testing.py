"""Testing seams: swap the provider app code builds, and block real model calls.

::

    from semif_agent.llm import ScriptedProvider, block_model_requests, override_provider

    block_model_requests()                   # e.g. in conftest.py: no call leaves the machine
    with override_provider(ScriptedProvider(["A"])):
        app_code()                           # every create_provider(...) returns the scripted one

Blocking refuses any request from a built-in network provider to an endpoint
that is not on loopback (127.0.0.0/8, ::1, localhost), with
:class:`~semif_agent.llm.errors.ModelRequestsBlockedError`; local test
servers still work. Setting ``SEMIF_BLOCK_MODEL_REQUESTS=1`` in the
environment blocks from the start.
"""

from __future__ import annotations

import contextvars
import ipaddress
import os
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from typing import TYPE_CHECKING
from urllib.parse import urlsplit

from .errors import ModelRequestsBlockedError

if TYPE_CHECKING:
    from .protocol import LLMProvider


@dataclass
class _Switch:
    blocked: bool
    allow_loopback: bool = True


_switch = _Switch(blocked=os.environ.get("SEMIF_BLOCK_MODEL_REQUESTS", "").lower() in ("1", "true", "yes"))
_override: contextvars.ContextVar[LLMProvider | None] = contextvars.ContextVar("semif_llm_override", default=None)


class _Restore:
    """Returned by :func:`block_model_requests`; as a context manager it restores the previous state."""

    def __init__(self, previous: _Switch) -> None:
        self._previous = previous

    def __enter__(self) -> None:
        return None

    def __exit__(self, *exc: object) -> None:
        _switch.blocked = self._previous.blocked
        _switch.allow_loopback = self._previous.allow_loopback


def block_model_requests(blocked: bool = True, *, allow_loopback: bool = True) -> _Restore:
    """Block (or, with ``blocked=False``, allow) requests to real model endpoints.

    Takes effect at once, process-wide; used as a context manager it restores
    the previous state on exit.
    """
    previous = _Switch(_switch.blocked, _switch.allow_loopback)
    _switch.blocked = blocked
    _switch.allow_loopback = allow_loopback
    return _Restore(previous)


def model_requests_blocked() -> bool:
    """True while :func:`block_model_requests` is in force."""
    return _switch.blocked


def check_request_allowed(provider: str, model: str, base_url: str) -> None:
    """Raise :class:`ModelRequestsBlockedError` if a request to ``base_url`` is blocked now."""
    if not _switch.blocked:
        return
    if _switch.allow_loopback and is_loopback(base_url):
        return
    raise ModelRequestsBlockedError(
        f"model requests are blocked: refusing to call {provider}/{model} at {base_url} "
        "(use ScriptedProvider, override_provider(), or a server on 127.0.0.1)"
    )


def is_loopback(url: str) -> bool:
    """True when ``url``'s host is on this machine's loopback interface."""
    host = urlsplit(url).hostname or ""
    if host == "localhost":
        return True
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False


@contextmanager
def override_provider(provider: LLMProvider) -> Iterator[LLMProvider]:
    """Within the block, :func:`~semif_agent.llm.create_provider` returns ``provider``.

    Context-local (a ``contextvars`` variable): other threads and tasks that did
    not start inside the block are unaffected.
    """
    token = _override.set(provider)
    try:
        yield provider
    finally:
        _override.reset(token)


def current_override() -> LLMProvider | None:
    """The provider :func:`override_provider` put in force here, if any."""
    return _override.get()
