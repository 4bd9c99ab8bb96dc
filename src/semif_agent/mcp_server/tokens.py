"""Client tokens for ``semif mcp --http``: one bearer token per client, each naming the client it was made for.

``semif mcp token add NAME`` makes a random token, shows it once, and keeps
only its SHA-256 in the workspace's :data:`~semif_agent.workspace.records.HOST_DIR`
folder (:data:`TOKENS_FILE`), with the name, when it was made and the
client's own rate (calls a second; None: the workspace's). That folder is a
record of the workspace: no ``[skills] write_dirs`` may reach it, and no
skill's script or body sees it.

The file is written whole (a temporary file renamed over it, under a lock,
readable by its owner only) and read and written from the workspace's folder
descriptor, never through a link. A file that is not the store's shape (a
link, a folder, too large, bad JSON, a bad name or hash) is a one-line
:class:`TokenStoreError` naming it: the server then accepts no client token
until it is fixed, and goes on serving.

The HTTP server looks at the file on every request (one ``stat``; it is read
again only when that changes), so a token revoked is refused on its very
next request. It puts the client of a request that came with a client token
in the request's ASGI scope; :func:`token_of` reads it back from the request
a tool's context holds, and the client is named by its token, never by the
name it gives itself in the MCP handshake.
"""

from __future__ import annotations

import contextlib
import errno
import hashlib
import json
import math
import os
import secrets
import stat
from collections.abc import Iterable, Iterator, Mapping
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path

from .._beneath import open_folder_beneath, open_regular_at, open_root, replace_at
from ..errors import UserError
from ..workspace.records import HOST_DIR

try:  # POSIX advisory locks: two `semif mcp token add` at once each keep their token
    import fcntl
except ImportError:  # pragma: no cover
    fcntl = None  # type: ignore[assignment]  # no fcntl on this platform: writes are not locked

TOKENS_FILE = "mcp-tokens.json"
"""The store's file, in the workspace's host folder."""
SCOPE_KEY = "semif_client"
"""Where the server keeps a request's :class:`ClientToken`, in its ASGI scope's ``state``."""
TAKEN_KEY = "semif_taken_names"
"""Where the server keeps, for a request that came with the shared token, the names client tokens hold."""
MAX_NAME = 64
MAX_BYTES = 1 << 20  # a store larger than this is not one semif wrote
_VERSION = 1


class TokenStoreError(UserError):
    """The token store cannot be read or written, or a name given to it is refused."""


@dataclass(frozen=True)
class ClientToken:
    """The client a token was made for: its ``name`` (its rows' and labels' client) and its ``rate`` (calls a
    second; None: the workspace's)."""

    name: str
    rate: float | None = None


@dataclass(frozen=True)
class StoredToken:
    """A client token as the store keeps it: the client, when it was made (ISO 8601, UTC) and its token's hash."""

    client: ClientToken
    made: str
    sha256: str

    def to_dict(self) -> dict[str, object]:
        """What ``semif mcp token list`` shows: never the hash."""
        return {"name": self.client.name, "made": self.made, "rate": self.client.rate}


def check_name(name: str) -> str:
    """``name`` when it may name a client: 1 to :data:`MAX_NAME` printable characters, none of them a space."""
    if not 0 < len(name) <= MAX_NAME or not name.isprintable() or any(c.isspace() for c in name):
        raise TokenStoreError(
            f"a client's name is 1 to {MAX_NAME} printable characters without spaces, not {json.dumps(name)[:80]}"
        )
    return name


def check_rate(rate: float | None) -> float | None:
    """``rate`` when it is None or a positive, finite number of calls a second."""
    if rate is None:
        return None
    if isinstance(rate, bool) or not isinstance(rate, int | float) or not math.isfinite(rate) or rate <= 0:
        raise TokenStoreError(f"a client's rate is a positive number of calls a second, not {repr(rate)[:40]}")
    return float(rate)


def digest(token: str) -> str:
    """The SHA-256 of ``token``, as the store keeps it (tokens are random: no salt or slow hash is needed)."""
    return hashlib.sha256(token.encode("utf-8", "surrogateescape")).hexdigest()


class TokenStore:
    """The client tokens of the workspace at ``root`` (its resolved folder)."""

    def __init__(self, root: str | os.PathLike[str]) -> None:
        self.root = Path(root)
        self.path = self.root / HOST_DIR / TOKENS_FILE
        self._seen: tuple[int, ...] | None = None  # the file's stat when it was last read (None: not read yet)
        self._held: tuple[StoredToken, ...] | TokenStoreError = ()

    # -- reading -----------------------------------------------------------

    def tokens(self) -> tuple[StoredToken, ...]:
        """Every stored token, read again only when the file's ``stat`` changed; a :class:`TokenStoreError` when
        the file is not the store's."""
        seen = self._stat()
        if seen != self._seen:
            try:
                self._held = self._read()
            except TokenStoreError as exc:
                self._held = exc
            self._seen = seen
        if isinstance(self._held, TokenStoreError):
            raise self._held
        return self._held

    def lookup(self, presented: str) -> ClientToken | None:
        """The client of the token ``presented``, or None (a :class:`TokenStoreError` when the store is broken)."""
        return matching(self.tokens(), presented)

    def _stat(self) -> tuple[int, ...]:
        try:
            info = os.stat(self.path, follow_symlinks=False)
        except FileNotFoundError:
            return ()
        except OSError as exc:
            return (-1, exc.errno or 0)
        return (info.st_dev, info.st_ino, info.st_size, info.st_mtime_ns, info.st_ctime_ns, info.st_mode)

    def _read(self) -> tuple[StoredToken, ...]:
        try:
            with self._folder(make=False) as folder:
                return self._read_at(folder)
        except FileNotFoundError:
            return ()
        except OSError as exc:
            raise self._broken(_why(exc)) from None

    def _read_at(self, folder: int) -> tuple[StoredToken, ...]:
        try:
            info = os.stat(TOKENS_FILE, dir_fd=folder, follow_symlinks=False)
        except FileNotFoundError:
            return ()
        fd = open_regular_at(folder, TOKENS_FILE) if stat.S_ISREG(info.st_mode) else None
        if fd is None:
            raise self._broken("it is not a regular file (a link or anything else there is never followed)")
        with os.fdopen(fd, "rb") as handle:
            data = handle.read(MAX_BYTES + 1)
        if len(data) > MAX_BYTES:
            raise self._broken(f"it is larger than {MAX_BYTES // 1024} KiB")
        try:
            value = json.loads(data.decode("utf-8"))
        except (ValueError, RecursionError) as exc:
            raise self._broken(f"it is not JSON ({' '.join(str(exc).split())[:120]})") from None
        return self._parse(value)

    def _parse(self, value: object) -> tuple[StoredToken, ...]:
        if (
            not isinstance(value, dict)
            or value.get("version") != _VERSION
            or not isinstance(value.get("clients"), list)
        ):
            raise self._broken(f'it is not {{"version": {_VERSION}, "clients": [...]}}')
        found: list[StoredToken] = []
        for number, entry in enumerate(value["clients"], 1):
            try:
                found.append(_entry(entry))
            except (TokenStoreError, TypeError) as exc:
                raise self._broken(f"client {number}: {exc}") from None
        names = [stored.client.name for stored in found]
        hashes = [stored.sha256 for stored in found]
        if len(set(names)) != len(names) or len(set(hashes)) != len(hashes):
            raise self._broken("two clients share a name or a token")
        return tuple(found)

    def _broken(self, why: str) -> TokenStoreError:
        return TokenStoreError(
            f"the client tokens {self.path}: {why}; no client token is accepted until it is fixed or removed"
        )

    # -- writing -----------------------------------------------------------

    def add(self, name: str, rate: float | None = None) -> tuple[str, StoredToken]:
        """Make a token for the client ``name`` (a name no other client has): the token, shown to nobody else,
        and what the store keeps of it."""
        client = ClientToken(check_name(name), check_rate(rate))
        token = secrets.token_urlsafe(32)
        made = datetime.now(UTC).isoformat(timespec="seconds").replace("+00:00", "Z")
        stored = StoredToken(client, made, digest(token))
        with self._folder(make=True) as folder, _locked(folder):
            held = self._read_at(folder)
            if any(other.client.name == name for other in held):
                raise TokenStoreError(
                    f"a client named {name!r} has a token already: `semif mcp token revoke {name}` first, "
                    "or choose another name"
                )
            self._write_at(folder, (*held, stored))
        return token, stored

    def revoke(self, name: str) -> StoredToken:
        """Remove the token of the client ``name``: refused from its next request on."""
        unknown = TokenStoreError(f"no client token named {name!r} (semif mcp token list lists them)")
        try:
            with self._folder(make=False) as folder, _locked(folder):
                held = self._read_at(folder)
                kept = tuple(stored for stored in held if stored.client.name != name)
                if len(kept) == len(held):
                    raise unknown
                self._write_at(folder, kept)
        except FileNotFoundError:  # no host folder: no token at all
            raise unknown from None
        return next(stored for stored in held if stored.client.name == name)

    def _write_at(self, folder: int, tokens: tuple[StoredToken, ...]) -> None:
        clients = [{"name": s.client.name, "made": s.made, "rate": s.client.rate, "sha256": s.sha256} for s in tokens]
        data = json.dumps({"version": _VERSION, "clients": clients}, ensure_ascii=False, indent=1) + "\n"
        try:
            replace_at(folder, TOKENS_FILE, data.encode("utf-8"), 0o600)
        except OSError as exc:
            raise TokenStoreError(f"cannot write the client tokens {self.path}: {_why(exc)}") from None

    @contextlib.contextmanager
    def _folder(self, *, make: bool) -> Iterator[int]:
        """The host folder's descriptor, opened from the workspace's without following a link (made if asked; else
        ``FileNotFoundError`` when it is missing)."""
        try:
            root = open_root(self.root)
            try:
                folder = open_folder_beneath(root, HOST_DIR, make=make)
            finally:
                os.close(root)
        except FileNotFoundError:
            if make:
                raise TokenStoreError(f"cannot write the client tokens {self.path}: the workspace is gone") from None
            raise
        except OSError as exc:
            raise self._broken(f"its folder cannot be opened ({_why(exc)})") from None
        try:
            yield folder
        finally:
            os.close(folder)


def matching(tokens: Iterable[StoredToken], presented: str) -> ClientToken | None:
    """The client among ``tokens`` whose token is ``presented``, or None."""
    wanted = digest(presented)
    found = None
    for stored in tokens:  # every one compared, in constant time each
        if secrets.compare_digest(stored.sha256, wanted):
            found = stored.client
    return found


def _entry(entry: object) -> StoredToken:
    if not isinstance(entry, dict):
        raise TokenStoreError("not an object")
    name, made, sha, rate = entry.get("name"), entry.get("made"), entry.get("sha256"), entry.get("rate")
    if not isinstance(name, str):
        raise TokenStoreError("its name is not a string")
    if not isinstance(made, str) or len(made) > 40:
        raise TokenStoreError("its date is not a string")
    if not isinstance(sha, str) or len(sha) != 64 or any(c not in "0123456789abcdef" for c in sha):
        raise TokenStoreError("its sha256 is not 64 hexadecimal digits")
    return StoredToken(ClientToken(check_name(name), check_rate(rate)), made, sha)


@contextlib.contextmanager
def _locked(folder: int) -> Iterator[None]:
    if fcntl is not None:
        fcntl.flock(folder, fcntl.LOCK_EX)
    try:
        yield
    finally:
        if fcntl is not None:
            fcntl.flock(folder, fcntl.LOCK_UN)


def _why(exc: OSError) -> str:
    if exc.errno in (errno.ELOOP, errno.ENOTDIR):
        return "a link or a file stands where a folder should be (it is never followed)"
    return exc.strerror or str(exc)


def token_of(request: object) -> ClientToken | None:
    """The client whose token the HTTP request ``request`` (the Starlette request a tool's context holds) came
    with; None when it came with none of the store's (the shared token, or not over HTTP at all)."""
    scope = getattr(request, "scope", None)
    state = scope.get("state") if isinstance(scope, Mapping) else None
    client = state.get(SCOPE_KEY) if isinstance(state, Mapping) else None
    return client if isinstance(client, ClientToken) else None


def taken_names(request: object) -> frozenset[str]:
    """The names client tokens hold, for a request that came with the shared token (empty otherwise): a client of
    the shared token naming itself one of them in its handshake is not taken for that client."""
    scope = getattr(request, "scope", None)
    state = scope.get("state") if isinstance(scope, Mapping) else None
    names = state.get(TAKEN_KEY) if isinstance(state, Mapping) else None
    return names if isinstance(names, frozenset) else frozenset()
