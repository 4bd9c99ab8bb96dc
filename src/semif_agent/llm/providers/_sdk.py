"""What the providers built on an official SDK share.

Key and endpoint resolution (argument, then environment variable, then the
SDK's default endpoint), lazy SDK import with a one-line install hint, one SDK
client per event loop (with the SDK's own retries off), the request block
switch, and the translation of SDK and transport errors into our
:mod:`~semif_agent.llm.errors`, done here in one place.
"""

from __future__ import annotations

import asyncio
import importlib
import os
import sys
import weakref
from collections.abc import AsyncIterator, Mapping
from types import ModuleType
from typing import Any, TypedDict

from ..._sync import close_with_loop
from .._assembler import StreamAssembler
from ..errors import (
    MissingCredentialsError,
    MissingExtraError,
    ProviderConnectionError,
    ProviderError,
    ProviderOverloadedError,
    ProviderTimeoutError,
    RateLimitError,
    ServerError,
    StreamInterruptedError,
    error_for_status,
    parse_retry_after,
)
from ..pricing import ModelPrice
from ..protocol import BaseProvider, ModelRequest
from ..responses import Response, StreamChunk
from ..secrets import read_secret, secrets_file
from ..testing import check_request_allowed

DEFAULT_TIMEOUT = 60.0

# event loop -> {client key -> SDK client}: connection pools, one per endpoint and key per loop.
_clients: weakref.WeakKeyDictionary[asyncio.AbstractEventLoop, dict[tuple[Any, ...], Any]] = weakref.WeakKeyDictionary()


def import_sdk(module: str, extra: str, provider: str) -> ModuleType:
    """Import an optional SDK, or fail with one line saying what to install."""
    try:
        return importlib.import_module(module)
    except ImportError as exc:
        raise MissingExtraError(
            f"the {provider} provider needs the {module!r} package: pip install 'semif-agent[{extra}]'"
        ) from exc


class SDKProvider(BaseProvider):
    """A provider that talks through an official (Stainless-generated) SDK.

    Subclasses set the class attributes below and implement ``_make_client``,
    ``_params`` (a request as the SDK call's keyword arguments, its provider
    options checked), ``_fill`` (a whole answer into the assembler) and
    ``_feed`` (stream events into the assembler, yielding the chunks it
    returns).
    """

    sdk_module = ""
    extra = ""
    key_env = ""
    base_url_env = ""
    default_base_url = ""
    key_required = True  # False: servers that take no key (a placeholder is sent)

    def __init__(
        self,
        model_id: str,
        *,
        api_key: str | None = None,
        base_url: str | None = None,
        timeout: float | None = None,
        pricing: Mapping[str, ModelPrice | Mapping[str, object]] | None = None,
        default_headers: Mapping[str, str] | None = None,
    ) -> None:
        super().__init__(model_id, pricing=pricing)
        self._sdk = import_sdk(self.sdk_module, self.extra, self.provider_name)
        env_base = os.environ.get(self.base_url_env) if self.base_url_env else None
        self.base_url = (base_url or env_base or self.default_base_url).rstrip("/")
        key = api_key or (read_secret(self.key_env) if self.key_env else None)
        if not key:
            if self._needs_key():
                raise MissingCredentialsError(
                    f"no API key for {self.provider_name}/{model_id}: set {self.key_env} "
                    f"(in the environment or the secrets file {secrets_file()})"
                )
            key = "none"
        self.api_key = key
        self.timeout = float(timeout) if timeout is not None else DEFAULT_TIMEOUT
        self.default_headers = dict(default_headers or {})

    def _needs_key(self) -> bool:
        """A key is required by providers that need one, at their official endpoint."""
        return self.key_required and self.base_url == self.default_base_url.rstrip("/")

    # -- the client ---------------------------------------------------------

    def _client(self) -> Any:
        """The SDK client for the running loop, shared by providers with the same endpoint and key.

        Clients (and their connection pools) live as long as their event loop
        and are closed when it shuts down.
        """
        clients = _clients.setdefault(asyncio.get_running_loop(), {})
        key = self._client_key()
        client = clients.get(key)
        if client is None:
            client = clients[key] = self._make_client()

            async def close_client() -> None:
                clients.pop(key, None)
                await client.close()

            close_with_loop(close_client)
        return client

    def _client_key(self) -> tuple[Any, ...]:
        return (type(self), self.base_url, self.api_key, self.timeout, tuple(sorted(self.default_headers.items())))

    def _make_client(self) -> Any:  # pragma: no cover
        raise NotImplementedError

    async def aclose(self) -> None:
        """Close the running loop's client for this endpoint and key (the next call opens a new one)."""
        client = _clients.get(asyncio.get_running_loop(), {}).pop(self._client_key(), None)
        if client is not None:
            await client.close()

    # -- the calls ----------------------------------------------------------

    def _assembler(self) -> StreamAssembler:
        return StreamAssembler(provider=self.provider_name, model=self.model_id, pricing=self.pricing)

    async def request(self, request: ModelRequest) -> Response:
        params = self._params(request)
        check_request_allowed(self.provider_name, self.model_id, self.base_url)
        assembler = self._assembler()
        try:
            await self._fill(self._client(), params, assembler)
        except ProviderError:
            raise
        except Exception as exc:
            error = self._translate(exc, started=False)
            if error is None:
                raise
            raise error from exc
        return assembler.response()

    async def request_stream(self, request: ModelRequest) -> AsyncIterator[StreamChunk]:
        params = self._params(request)
        check_request_allowed(self.provider_name, self.model_id, self.base_url)
        assembler = self._assembler()
        try:
            async for chunk in self._feed(self._client(), params, assembler):
                yield chunk
        except ProviderError:
            raise
        except Exception as exc:
            error = self._translate(exc, started=assembler.started)
            if error is None:
                raise
            raise error from exc
        for chunk in assembler.finish():
            yield chunk

    def _params(self, request: ModelRequest) -> dict[str, object]:  # pragma: no cover
        raise NotImplementedError

    async def _fill(self, client: Any, params: dict[str, Any], assembler: StreamAssembler) -> None:  # pragma: no cover
        raise NotImplementedError

    def _feed(
        self, client: Any, params: dict[str, Any], assembler: StreamAssembler
    ) -> AsyncIterator[StreamChunk]:  # pragma: no cover
        raise NotImplementedError

    # -- errors -------------------------------------------------------------

    def _translate(self, exc: BaseException, *, started: bool) -> ProviderError | None:
        """Our error for an SDK or transport error (``None``: not one of theirs)."""
        where = _Where(provider=self.provider_name, model=self.model_id)
        sdk = self._sdk
        status = getattr(exc, "status_code", None)
        body = getattr(exc, "body", None)
        message = _api_message(body) or str(exc) or type(exc).__name__
        cause = exc.__cause__ or exc.__context__
        detail = f" ({type(cause).__name__}: {cause})" if cause and str(cause) not in message else ""
        if started:
            shown = status if status is not None and status >= 400 else None
            return StreamInterruptedError(f"the stream broke off: {message}{detail}", status=shown, body=body, **where)
        if isinstance(exc, sdk.APITimeoutError):
            return ProviderTimeoutError(f"no answer within {self.timeout:g}s from {self.base_url}", **where)
        if isinstance(exc, sdk.APIConnectionError):
            return ProviderConnectionError(f"cannot reach {self.base_url}{detail}", **where)
        if isinstance(exc, sdk.APIStatusError):
            response = getattr(exc, "response", None)
            retry_after = parse_retry_after(getattr(response, "headers", None))
            kind = _kind_from_body(body) if status is None or status < 400 else error_for_status(status)
            shown = status if status is not None and status >= 400 else None
            return kind(message, status=shown, body=body, retry_after=retry_after, **where)
        if isinstance(exc, sdk.APIError):  # an error event inside a stream, before any content
            return _kind_from_body(body)(message, body=body, **where)
        transport = _transport_kind(exc)
        if transport is not None:
            return transport(f"{type(exc).__name__}: {exc}", **where)
        return None


def _api_message(body: object) -> str | None:
    if isinstance(body, Mapping):
        error = body.get("error", body)
        message = error.get("message") if isinstance(error, Mapping) else None
        if isinstance(message, str):
            return message
        message = body.get("message")
        if isinstance(message, str):
            return message
    if isinstance(body, str) and body:
        return body[:500]
    return None


class _Where(TypedDict):
    """The ``provider`` and ``model`` keywords every translated error gets."""

    provider: str
    model: str


_BODY_KINDS: dict[str, type[ProviderError]] = {
    "overloaded_error": ProviderOverloadedError,
    "rate_limit_error": RateLimitError,
    "rate_limit_exceeded": RateLimitError,
    "api_error": ServerError,
    "server_error": ServerError,
    "timeout_error": ProviderTimeoutError,
}


def _kind_from_body(body: object) -> type[ProviderError]:
    """The error kind named by an error body (``{"error": {"type": ...}}``), for in-stream errors."""
    error = body.get("error", body) if isinstance(body, Mapping) else None
    kind = error.get("type") or error.get("code") if isinstance(error, Mapping) else None
    return _BODY_KINDS.get(str(kind), ServerError)


def _transport_kind(exc: BaseException) -> type[ProviderError] | None:
    """Errors from the HTTP library itself (raised while a stream is read)."""
    for name in ("httpx2", "httpx"):
        module = sys.modules.get(name)
        if module is None:
            continue
        if isinstance(exc, module.TimeoutException):
            return ProviderTimeoutError
        if isinstance(exc, module.TransportError):
            return ProviderConnectionError
    return None
