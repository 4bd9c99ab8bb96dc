"""Run a skill script in its own confined process: :func:`run_subprocess`.

The script runs through :mod:`._launcher` in a new session, with the working
directory, environment and confinement the caller built (see :mod:`.limits`)
and a ``pids`` cgroup of its own where one can be made (:mod:`._cgroup`).
The launcher supervises it: PID namespace (or cgroup, or subreaper), timeout,
disk allowance. Nothing here blocks the event loop: the process is an asyncio
subprocess, its output is taken as it comes and kept up to a bound; should the
launcher overrun the timeout by a grace period, its process group is killed
(and the script's process dies with it).
"""

from __future__ import annotations

import asyncio
import dataclasses
import itertools
import marshal
import signal
import subprocess
import sys
from pathlib import Path
from typing import Any

from . import _cgroup
from ._process_group import kill_group
from .limits import package_parent
from .results import ScriptRunResult, outcome

LAUNCHER = str(Path(__file__).resolve().parent / "_launcher.py")
_DRAIN_SECONDS = 1.0
_GRACE_SECONDS = 2.0
_runs = itertools.count(1)


class _Capture(asyncio.SubprocessProtocol):
    """Keeps the first ``limit`` bytes of stdout and stderr; tells when the process exits."""

    def __init__(self, limit: int) -> None:
        loop = asyncio.get_running_loop()
        self.limit = limit
        self.kept = {1: bytearray(), 2: bytearray()}
        self.dropped = {1: 0, 2: 0}
        self.exited: asyncio.Future[None] = loop.create_future()
        self.closed: asyncio.Future[None] = loop.create_future()

    def pipe_data_received(self, fd: int, data: bytes) -> None:
        kept = self.kept[fd]
        room = max(self.limit - len(kept), 0)
        kept += data[:room]
        self.dropped[fd] += len(data) - min(room, len(data))

    def process_exited(self) -> None:
        if not self.exited.done():
            self.exited.set_result(None)

    def connection_lost(self, exc: Exception | None) -> None:
        if not self.closed.done():
            self.closed.set_result(None)

    def text(self, fd: int) -> str:
        """What the process wrote to ``fd``, with a note of what was dropped."""
        text = self.kept[fd].decode("utf-8", errors="replace")
        return f"{text}\n[{self.dropped[fd]} bytes of output dropped]" if self.dropped[fd] else text


async def run_subprocess(
    script: Path,
    argv: list[str],
    *,
    cwd: Path,
    env: dict[str, str],
    spec: dict[str, Any],
    timeout_sec: float,
    max_output_bytes: int,
) -> ScriptRunResult:
    """Run ``script`` with ``argv`` under ``spec``'s confinement; never raises for the script's faults.

    The run ends when the script's own process exits (or at the timeout); every
    process it started is killed then.
    """
    spec = {**spec, "timeout": timeout_sec}
    parent = _cgroup.host_parent() if spec.get("max_processes") is not None else None
    cgroup = _cgroup.create(parent, f"run-{next(_runs)}", spec["max_processes"]) if parent else None
    if cgroup:
        spec["cgroup"] = cgroup
        memory = _cgroup.memory_twin(cgroup) if spec.get("memory_bytes") else None
        if memory is not None and _cgroup.set_memory_limit(memory, int(spec["memory_bytes"])):
            spec["memory_cgroup"] = memory  # one cap for the script and all it starts
    command = [sys.executable, "-I", LAUNCHER, package_parent(), marshal.dumps(spec).hex(), str(script), *argv]
    loop = asyncio.get_running_loop()
    transport, capture = await loop.subprocess_exec(
        lambda: _Capture(max_output_bytes),
        *command,
        stdin=subprocess.DEVNULL,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        cwd=str(cwd),
        env=env,
        start_new_session=True,
    )
    pid = transport.get_pid()
    overran = False
    try:
        try:
            await asyncio.wait_for(asyncio.shield(capture.exited), timeout_sec + _GRACE_SECONDS)
        except TimeoutError:
            overran = True
        kill_group(pid)
        await capture.exited
        try:  # the group is dead; only a grandchild that left it can still hold the pipes
            await asyncio.wait_for(asyncio.shield(capture.closed), _DRAIN_SECONDS)
        except TimeoutError:
            pass
        returncode = transport.get_returncode()
    finally:
        kill_group(pid)
        transport.close()
        if cgroup:
            await asyncio.to_thread(_cgroup.remove, cgroup)
    status = _read_status(spec.get("status_file"))
    reported = status.pop("error_type", "")
    status["disk"] = "watched" if spec.get("disk_bytes") else "none"
    result = outcome(
        returncode=returncode if returncode is not None else -signal.SIGKILL,
        timed_out=overran,
        reported=reported,
        stdout=capture.text(1),
        stderr=capture.text(2),
        timeout_sec=timeout_sec,
    )
    return dataclasses.replace(result, confinement=status)


def _read_status(path: str | None) -> dict[str, str]:
    """What the launcher wrote: ``error_type=...`` and the confinement that held (``kind=how``)."""
    if not path:
        return {}
    try:
        text = Path(path).read_text(encoding="utf-8")
    except OSError:
        return {}
    lines = [line.strip() for line in text.splitlines() if line.strip()]
    if len(lines) == 1 and "=" not in lines[0]:  # the script's process reported, the launcher did not finish
        return {"error_type": lines[0]}
    return dict(line.split("=", 1) for line in lines if "=" in line)
