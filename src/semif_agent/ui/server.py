"""Serving the web view: a socket bound where asked (loopback unless ``public``), uvicorn on it."""

from __future__ import annotations

import ipaddress
import socket
import threading
import time
import webbrowser
from collections.abc import Callable, Sequence

from ..errors import UserError
from ..workspace import Workspace
from .hosts import LOOPBACK_HOSTS

LOOPBACK_NAMES = ("localhost",)


def is_loopback(host: str) -> bool:
    """Whether ``host`` is a loopback address (127.0.0.0/8, ::1) or ``localhost``."""
    if host in LOOPBACK_NAMES:
        return True
    try:
        return ipaddress.ip_address(host.strip("[]")).is_loopback
    except ValueError:
        return False


def allowed_hosts(host: str, named: Sequence[str] = ()) -> list[str]:
    """The Host names the server answers to: ``named`` (``--allow-host``), the address it is bound to, and the
    loopback names when it is bound to loopback or to every address (``0.0.0.0``, ``::``). A malformed
    ``named`` one is a one-line error."""
    bare = host.strip("[]")
    names = [*checked_host_names(named), bare, f"[{bare}]" if ":" in bare else bare]
    if is_loopback(host) or bare in ("0.0.0.0", "::", ""):
        names += LOOPBACK_HOSTS
    return list(dict.fromkeys(name.lower() for name in names if name))


def checked_host_names(names: Sequence[str]) -> list[str]:
    """``--allow-host`` names as given, each a host name or ``*.domain``; a malformed one is a one-line error."""
    for name in names:
        wild = name.startswith("*.") and "*" not in name[2:]
        bare = name[1:-1] if name.startswith("[") and name.endswith("]") else name  # an IPv6 address in brackets
        if not bare or any(c in bare for c in "/ \t[]") or (":" in bare and bare == name) or ("*" in name and not wild):
            raise UserError(f"--allow-host takes a host name or *.domain (no scheme, port or path), not {name!r}")
    return list(names)


def bind(host: str, port: int) -> socket.socket:
    """A listening socket on ``host``:``port`` (0: any free port); a clear error when it cannot be had."""
    family = socket.AF_INET6 if ":" in host else socket.AF_INET
    sock = socket.socket(family, socket.SOCK_STREAM)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)  # inherited by connections: no 40 ms Nagle stalls
    try:
        sock.bind((host.strip("[]"), port))
    except OSError as exc:
        sock.close()
        raise UserError(
            f"cannot listen on {host}:{port}: {exc.strerror or exc} (another port, or port 0 for any free one, "
            "avoids it)"
        ) from None
    sock.listen(128)
    sock.set_inheritable(True)
    return sock


def url_of(sock: socket.socket) -> str:
    host, port = sock.getsockname()[:2]
    return f"http://{'[' + host + ']' if ':' in host else host}:{port}/"


def serve(
    workspace: Workspace,
    *,
    host: str = "127.0.0.1",
    port: int = 8765,
    public: bool = False,
    allow_hosts: Sequence[str] = (),
    open_browser: bool = False,
    say: Callable[[str], None] = print,
    progress: Callable[[int, int], None] | None = None,
) -> None:
    """Index the log, then serve the web view until interrupted.

    ``say`` reports the address and timings; ``progress(done, total)`` the
    bytes of the log indexed so far. Requests are answered only when their
    Host is one of :func:`allowed_hosts` (``allow_hosts`` and the bound address).
    """
    import uvicorn

    from .app import create_app
    from .index import LogIndex

    if not is_loopback(host) and not public:
        raise UserError(
            f"{host} is not a loopback address: anyone who can reach it could read the log and write "
            "labels; pass --public to serve there anyway"
        )
    started = time.perf_counter()
    index = LogIndex(workspace.log_path)
    index.refresh(progress)
    answers_to = allowed_hosts(host, allow_hosts)
    app = create_app(workspace, allowed_hosts=answers_to, index=index)
    say(f"indexed {len(index.runs)} runs ({index.rows} rows) of {index.path} in {time.perf_counter() - started:.2f} s")
    sock = bind(host, port)
    url = url_of(sock)
    say(f"serving {workspace.root} at {url} (Ctrl-C stops)")
    if not is_loopback(host):
        say(f"answering only requests for the host names {', '.join(answers_to)} (--allow-host NAME adds one)")
    if open_browser:
        threading.Timer(0.3, webbrowser.open, args=(url,)).start()
    config = uvicorn.Config(app, log_level="warning", timeout_graceful_shutdown=1, lifespan="off")
    uvicorn.Server(config).run(sockets=[sock])
