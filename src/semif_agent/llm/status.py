"""What models are configured, where their keys come from, and whether their endpoints answer.

Backs ``semif models``. Nothing here builds a provider or imports an SDK:
endpoints are checked with one ``GET <base>/models`` (standard library), and
any HTTP answer, even a refusal of the key, counts as reachable.
"""

from __future__ import annotations

import os
import urllib.error
import urllib.request
from collections.abc import Mapping
from concurrent.futures import ThreadPoolExecutor
from dataclasses import asdict, dataclass, field, replace

from .errors import ProviderConfigError
from .registry import parse_model_ref, provider_factory, provider_names
from .secrets import secret_source
from .settings import provider_table, raw_connection_options
from .testing import is_loopback, model_requests_blocked


@dataclass(frozen=True, kw_only=True)
class ConfiguredModel:
    """One configured model (or, for ``role="environment"``, a provider the environment sets up).

    ``key`` says where the key comes from (``"$VAR"``, the secrets file's path, ``"given"`` when the
    settings passed one in code, ``"not needed"``) or ``"missing: set VAR"``. ``reachable`` is ``None``
    until checked; ``status`` then says what the endpoint answered.
    """

    role: str
    model: str
    provider: str
    base_url: str
    key: str
    problem: str = ""
    reachable: bool | None = None
    status: str = "not checked"
    api_key: str | None = field(default=None, repr=False)  # used by the check; never shown

    def to_dict(self) -> dict[str, object]:
        shown = asdict(self)
        del shown["api_key"]
        return shown


@dataclass(frozen=True)
class _Endpoint:
    default_base_url: str = ""
    base_url_env: str = ""
    key_env: str = ""
    key_required: bool = False


def _endpoint(name: str) -> _Endpoint:
    factory = provider_factory(name)
    return _Endpoint(
        default_base_url=getattr(factory, "default_base_url", ""),
        base_url_env=getattr(factory, "base_url_env", ""),
        key_env=getattr(factory, "key_env", ""),
        key_required=bool(getattr(factory, "key_required", False)),
    )


def configured_models(
    settings: Mapping[str, object], environ: Mapping[str, str] | None = None
) -> list[ConfiguredModel]:
    """The models engine settings name (engine, provider default, fallbacks, judge), then the environment's."""
    environ = os.environ if environ is None else environ
    table = provider_table(settings)
    wanted: list[tuple[str, object, bool]] = []
    if settings.get("model"):
        wanted.append(("engine", settings["model"], True))
    if table.get("model") and table.get("model") != settings.get("model"):
        wanted.append(("provider default", table["model"], not settings.get("model")))
    fallbacks = settings["fallbacks"] if "fallbacks" in settings else table.get("fallbacks")
    for spec in fallbacks if isinstance(fallbacks, (list, tuple)) else ():
        wanted.append(("fallback", spec, False))
    judge = settings.get("judge")
    if isinstance(judge, Mapping) and judge.get("model"):
        wanted.append(("judge", judge["model"], False))

    entries = [_describe(role, spec, settings, primary, environ) for role, spec, primary in wanted]
    listed = {e.provider for e in entries}
    for name in provider_names():
        if name in listed or name == "scripted":
            continue
        try:
            endpoint = _endpoint(name)
        except Exception:  # noqa: BLE001 - a broken third-party registration is not ours to list
            continue
        try:
            has_key = bool(endpoint.key_env and secret_source(endpoint.key_env, environ))
        except ProviderConfigError as exc:  # an unreadable secrets file: said once
            if not any(entry.problem == str(exc) for entry in entries):
                entries.append(
                    ConfiguredModel(role="environment", model="", provider="", base_url="", key="", problem=str(exc))
                )
            has_key = False
        has_url = bool(endpoint.base_url_env and environ.get(endpoint.base_url_env))
        if has_key or has_url:
            entries.append(_describe("environment", f"{name}/*", {}, False, environ))
    return entries


def _describe(
    role: str, spec: object, settings: Mapping[str, object], primary: bool, environ: Mapping[str, str]
) -> ConfiguredModel:
    ref = spec.get("model", "") if isinstance(spec, Mapping) else str(spec)
    try:
        name, _ = parse_model_ref(ref)
        endpoint = _endpoint(name)
        options = dict(raw_connection_options(name, settings, primary=primary))
        if isinstance(spec, Mapping):
            options.update({k: v for k, v in spec.items() if k != "model"})
    except ProviderConfigError as exc:
        return ConfiguredModel(role=role, model=ref, provider="", base_url="", key="", problem=str(exc))
    if name == "scripted":
        return ConfiguredModel(
            role=role, model=ref, provider=name, base_url="", key="not needed", status="scripted: no endpoint"
        )
    base_url = (
        options.get("base_url")
        or (environ.get(endpoint.base_url_env) if endpoint.base_url_env else None)
        or endpoint.default_base_url
    )
    base_url = str(base_url).rstrip("/")
    at_default = base_url == endpoint.default_base_url.rstrip("/")
    value: str | None = None
    try:
        found = secret_source(str(options.get("api_key_env") or endpoint.key_env or ""), environ)
    except ProviderConfigError as exc:
        return ConfiguredModel(role=role, model=ref, provider=name, base_url=base_url, key="", problem=str(exc))
    if options.get("api_key"):
        key, value = "given", str(options["api_key"])
    elif options.get("api_key_env") and not found:
        key = f"missing: set {options['api_key_env']}"
    elif found:
        value, key = found
    elif endpoint.key_required and at_default:
        key = f"missing: set {endpoint.key_env}"
    else:
        key = "not needed"
    return ConfiguredModel(role=role, model=ref, provider=name, base_url=base_url, key=key, api_key=value)


def check_endpoints(entries: list[ConfiguredModel], *, timeout: float = 3.0) -> list[ConfiguredModel]:
    """``entries`` with ``reachable``/``status`` filled in (each endpoint asked once, in parallel)."""
    targets = {(e.base_url, e.api_key): e for e in entries if e.base_url and not e.problem}
    if not targets:
        return entries
    with ThreadPoolExecutor(max_workers=min(8, len(targets))) as pool:
        answers = dict(zip(targets, pool.map(lambda e: probe(e, timeout), targets.values())))
    checked = []
    for entry in entries:
        answer = answers.get((entry.base_url, entry.api_key))
        checked.append(replace(entry, reachable=answer[0], status=answer[1]) if answer else entry)
    return checked


def probe(entry: ConfiguredModel, timeout: float = 3.0) -> tuple[bool | None, str]:
    """Ask ``entry``'s endpoint for its model list: ``(reachable, what it answered)``."""
    if model_requests_blocked() and not is_loopback(entry.base_url):
        return None, "not checked: model requests are blocked"
    base = entry.base_url
    url = f"{base}/v1/models" if entry.provider == "anthropic" and not base.endswith("/v1") else f"{base}/models"
    headers = {"anthropic-version": "2023-06-01", "user-agent": "semif-models"}
    if entry.api_key:
        headers["authorization"] = f"Bearer {entry.api_key}"
        headers["x-api-key"] = entry.api_key
    request = urllib.request.Request(url, headers=headers, method="GET")
    try:
        with urllib.request.urlopen(request, timeout=timeout) as response:  # a configured endpoint
            return True, f"HTTP {response.status}"
    except urllib.error.HTTPError as exc:
        meaning = {401: " (key refused)", 403: " (key refused)", 404: " (no model list here)"}.get(exc.code, "")
        return True, f"HTTP {exc.code}{meaning}"
    except urllib.error.URLError as exc:
        return False, str(getattr(exc, "reason", exc))
    except (TimeoutError, OSError) as exc:
        return False, str(exc) or type(exc).__name__
