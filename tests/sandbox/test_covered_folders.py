"""A folder the host keeps inside a call's write root is covered in the call's view where it is the host's own (the
allow-listed root is exercised by the skill trace's tests): the call finds it empty, what it writes there stays in
its view, and it can neither remove nor rename the folder."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from semif_agent.sandbox import _mounts

pytestmark = pytest.mark.skipif(os.geteuid() != 0, reason="a mount namespace of its own takes root here")

ATTEMPTS = {
    "write": lambda host: open(os.path.join(host, "kept"), "w").write("FORGED"),
    "make": lambda host: open(os.path.join(host, "new"), "w").write("FORGED"),
    "rename": lambda host: os.rename(host, host + "-moved"),
    "remove": lambda host: os.rmdir(host),
}


def test_in_the_hosts_own_view_a_covered_folder_is_the_calls_alone(tmp_path: Path) -> None:
    workspace, host = tmp_path / "ws", tmp_path / "ws" / ".host"
    host.mkdir(parents=True)
    (host / "kept").write_text("the host's")
    read, write = os.pipe()
    pid = os.fork()
    if pid == 0:  # the child alone changes its mounts; it only makes system calls, then exits
        try:
            os.close(read)
            _held, how, _mapped = _mounts.narrow_view(
                writable=[str(workspace)], readable=[], system=[], cwd=str(workspace), covered=[str(host)]
            )
            seen: dict[str, object] = {"how": how, "listed": sorted(os.listdir(host))}
            for name, attempt in ATTEMPTS.items():
                try:
                    attempt(str(host))
                    seen[name] = "done"
                except OSError as exc:
                    seen[name] = exc.__class__.__name__
            (workspace / "elsewhere").write_text("the call's")  # the rest of the write root stays writable
            os.write(write, json.dumps(seen).encode())
        finally:
            os._exit(0)
    os.close(write)
    with os.fdopen(read, "rb") as pipe:
        said = pipe.read()
    os.waitpid(pid, 0)
    seen = json.loads(said)
    assert seen["how"] == "mount-namespace" and seen["listed"] == []
    assert (seen["write"], seen["make"]) == ("done", "done")  # in its own folder
    assert seen["rename"] == seen["remove"] == "OSError"  # a mount point: busy
    assert sorted(os.listdir(host)) == ["kept"] and (host / "kept").read_text() == "the host's"
    assert not (tmp_path / "ws" / ".host-moved").exists()
    assert (workspace / "elsewhere").read_text() == "the call's"
