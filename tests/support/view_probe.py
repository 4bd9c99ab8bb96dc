"""What a confined call must not reach of the host: secrets planted for the test, and a probe that tries them.

:func:`planted_secrets` (root only) makes, for the time of a test, a root-only key file under ``/etc`` (as
WireGuard keeps one), a root-only file in ``/root`` and one in a folder of ``/home``, and a key in the
test's own session keyring. :data:`PROBE` is Python text defining ``probe(targets)``, run inside the
call (a script, an entrypoint, a body): it tries each way in and returns, by label, ``allowed ...``
or ``refused ...``, and its user id.
"""

from __future__ import annotations

import ctypes
import os
import secrets
import shutil
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

_NUMBERS = {  # the system calls the probe makes, by machine (apart from the code under test)
    "x86_64": {"keyctl": 250, "add_key": 248, "userfaultfd": 323, "unshare": 272},
    "aarch64": {"keyctl": 219, "add_key": 217, "userfaultfd": 282, "unshare": 97},
}
_KEY_SPEC_SESSION_KEYRING = -3
_KEYCTL_REVOKE = 3

PROBE = """
import ctypes, os

def probe(targets):
    libc = ctypes.CDLL(None, use_errno=True)
    numbers = targets["numbers"]

    def call(name, *args):
        result = libc.syscall(numbers[name], *args)
        if result < 0:
            raise OSError(ctypes.get_errno(), name + " refused")
        return result

    buffer = ctypes.create_string_buffer(256)
    attempts = {
        "etc-key": lambda: open(targets["etc_key"]).read(),
        "etc-key-stat": lambda: os.stat(targets["etc_key"]).st_size,
        "etc-key-folder": lambda: os.listdir(os.path.dirname(targets["etc_key"])),
        "root-list": lambda: os.listdir("/root"),
        "root-file-stat": lambda: os.stat(targets["root_file"]).st_size,
        "root-file": lambda: open(targets["root_file"]).read(),
        "home-list": lambda: os.listdir("/home"),
        "home-file-stat": lambda: os.stat(targets["home_file"]).st_size,
        "settings": lambda: open(targets["settings"]).read(),
        "settings-stat": lambda: os.stat(targets["settings"]).st_size,
        "log": lambda: open(targets["log"]).read(),
        "log-stat": lambda: os.stat(targets["log"]).st_size,
        "key-read": lambda: (call("keyctl", 11, ctypes.c_long(targets["key"]), buffer, 256), buffer.raw[:64]),
        "key-add": lambda: call("add_key", b"user", b"semif-left-behind", b"x", 1, ctypes.c_int(-3)),
        "userfaultfd": lambda: call("userfaultfd", 0),
        "user-namespace": lambda: call("unshare", 0x10000000),
    }
    seen = {}
    for label, action in attempts.items():
        try:
            seen[label] = "allowed " + repr(action())[:200]
        except Exception as exc:
            seen[label] = "refused " + type(exc).__name__
    seen["uid"] = os.getuid()
    return seen
"""


def _machine_numbers() -> dict[str, int]:
    return _NUMBERS[os.uname().machine.lower()]


def _key(libc: ctypes.CDLL, name: str, payload: bytes) -> int:
    number = _machine_numbers()["add_key"]
    return int(
        libc.syscall(number, b"user", name.encode(), payload, len(payload), ctypes.c_int(_KEY_SPEC_SESSION_KEYRING))
    )


@contextmanager
def planted_secrets(workspace: Path | None = None) -> Iterator[dict]:
    """Plant the secrets of the module's docstring; yield the probe's ``targets`` (plus ``secrets``, the texts
    none of which may come back). ``workspace``: a semif workspace whose settings and log the probe tries too."""
    token = secrets.token_hex(6)
    etc_folder = Path(f"/etc/wireguard-test-{token}")
    home_folder = Path(f"/home/semif-test-{token}")
    root_file = Path("/root") / f"semif-test-{token}.txt"  # the superuser's home folder
    libc = ctypes.CDLL(None, use_errno=True)
    texts = {name: f"{name}-secret-{token}" for name in ("etc", "root", "home", "key")}
    key = -1
    try:
        etc_folder.mkdir(mode=0o700)
        (etc_folder / "wg0.conf").write_text(f"[Interface]\nPrivateKey = {texts['etc']}\n")
        (etc_folder / "wg0.conf").chmod(0o600)
        root_file.write_text(texts["root"])
        root_file.chmod(0o600)
        home_folder.mkdir(mode=0o700)
        (home_folder / "secret.txt").write_text(texts["home"])
        key = _key(libc, f"semif-test-{token}", texts["key"].encode())
        yield {
            "numbers": _machine_numbers(),
            "etc_key": str(etc_folder / "wg0.conf"),
            "root_file": str(root_file),
            "home_file": str(home_folder / "secret.txt"),
            "settings": str(workspace / "semif.toml") if workspace else "/nonexistent/semif.toml",
            "log": str(workspace / "data" / "decisions.jsonl") if workspace else "/nonexistent/decisions.jsonl",
            "key": key,
            "secrets": list(texts.values()),
        }
    finally:
        shutil.rmtree(etc_folder, ignore_errors=True)
        shutil.rmtree(home_folder, ignore_errors=True)
        root_file.unlink(missing_ok=True)
        if key > 0:
            libc.syscall(_machine_numbers()["keyctl"], _KEYCTL_REVOKE, ctypes.c_long(key))


def reached(seen: dict) -> dict:
    """The attempts of a probe's answer that were not refused."""
    return {label: said for label, said in seen.items() if label != "uid" and not str(said).startswith("refused")}
