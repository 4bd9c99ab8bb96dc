"""The errors the model-provider layer raises; the whole tree is drawn in :mod:`semif_agent.errors`.

Every :class:`ProviderError` carries ``provider``, ``model``, ``status`` (the
HTTP status, or ``None``), ``body`` (the decoded error body, if any) and
``retry_after`` (seconds the server asked us to wait, if it said). The SDK
error it was translated from is its ``__cause__``. :class:`SyncInAsyncError`
is re-exported from there.
"""

from __future__ import annotations

from typing import Any, Protocol

from ..errors import (
    DecisionError,
    EngineConfigError,
    InvalidArgumentError,
    SemifError,
    UserError,
)
from ..errors import SyncInAsyncError as SyncInAsyncError  # re-exported


class ProviderConfigError(EngineConfigError):
    """A provider cannot be built: unknown name, missing key or extra, bad options."""


class UnknownProviderError(ProviderConfigError):
    """No provider is registered under that name."""


class MissingCredentialsError(ProviderConfigError):
    """No API key was given; the message names the variable or setting to set."""


class MissingExtraError(ProviderConfigError):
    """The provider's SDK is not installed; the message names the extra to install."""


class InvalidModelRequestError(InvalidArgumentError):
    """A model call's arguments are invalid: no messages, an unknown role or tool choice, ..."""


class UnsupportedOptionError(InvalidModelRequestError):
    """A request carries a provider option its provider does not take; the message names those it does."""


class ModelRequestsBlockedError(UserError):
    """A request to a real model endpoint while model requests are blocked.

    See :func:`semif_agent.llm.block_model_requests`.
    """


class TooManyOptionsError(DecisionError):
    """A decision offered more options than a model is shown at once."""


class ProviderError(SemifError):
    """A model call failed. Carries where it failed and what the server said."""

    retryable = False

    def __init__(
        self,
        message: str,
        *,
        provider: str = "",
        model: str = "",
        status: int | None = None,
        body: object = None,
        retry_after: float | None = None,
    ) -> None:
        self.message = message
        self.provider = provider
        self.model = model
        self.status = status
        self.body = body
        self.retry_after = retry_after
        super().__init__(self._render())

    def _render(self) -> str:
        where = f"{self.provider}/{self.model}" if self.provider else self.model
        status = f" (HTTP {self.status})" if self.status is not None else ""
        prefix = f"{where}{status}: " if where or status else ""
        return f"{prefix}{self.message}"

    def __reduce__(self) -> tuple[object, ...]:
        kwargs = {k: getattr(self, k) for k in ("provider", "model", "status", "body", "retry_after")}
        return (_rebuild, (type(self), self.message, kwargs))


def _rebuild(cls: type[ProviderError], message: str, kwargs: dict[str, Any]) -> ProviderError:
    return cls(message, **kwargs)


class AuthenticationError(ProviderError):
    """The server refused the credentials (HTTP 401 or 403)."""


class RateLimitError(ProviderError):
    """Too many requests (HTTP 429). ``retry_after`` says how long the server asked to wait."""

    retryable = True


class ServerError(ProviderError):
    """The server failed (HTTP 5xx)."""

    retryable = True


class ProviderOverloadedError(ServerError):
    """The server is overloaded (HTTP 529, or 503)."""


class ProviderConnectionError(ProviderError):
    """No connection could be made, or it dropped before an answer came."""

    retryable = True


class ProviderTimeoutError(ProviderError):
    """No answer came within the timeout."""

    retryable = True


class BadRequestError(ProviderError):
    """The server refused the request itself (HTTP 400, 404, 422, ...): retrying will not help."""


class StreamInterruptedError(ProviderError):
    """A streamed answer broke off after it had started: what arrived is incomplete."""


class ResponseError(ProviderError):
    """The server answered, but not in a shape we can read."""


def error_for_status(status: int) -> type[ProviderError]:
    """The :class:`ProviderError` kind for an HTTP error status."""
    if status in (401, 403):
        return AuthenticationError
    if status == 429:
        return RateLimitError
    if status in (503, 529):
        return ProviderOverloadedError
    if status == 408:
        return ProviderTimeoutError
    if status >= 500:
        return ServerError
    return BadRequestError


class Headers(Protocol):
    """Response headers, looked up by name (an ``httpx.Headers``, a dict)."""

    def get(self, key: str, /) -> str | None: ...


def parse_retry_after(headers: Headers | None) -> float | None:
    """Seconds to wait from ``retry-after-ms`` or ``retry-after`` (seconds or an HTTP date)."""
    if headers is None:
        return None
    try:
        value_ms = headers.get("retry-after-ms")
        if value_ms is not None:
            return max(0.0, float(value_ms) / 1000.0)
        value = headers.get("retry-after")
    except Exception:  # noqa: BLE001 - a header mapping we cannot read has no hint
        return None
    if value is None:
        return None
    try:
        return max(0.0, float(value))
    except ValueError:
        pass
    import email.utils
    import time

    try:
        when = email.utils.parsedate_to_datetime(value)
    except (TypeError, ValueError):
        return None
    return max(0.0, when.timestamp() - time.time())
