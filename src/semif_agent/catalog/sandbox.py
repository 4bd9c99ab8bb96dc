"""Run a skill script in its own confined process: :func:`run_subprocess`.

The script runs through :mod:`._launcher` in a new session (so a new process
group), with the working directory, environment and confinement the caller
built (see :mod:`.limits`). Nothing here blocks the event loop: the process is
an asyncio subprocess, its output is read as it comes and kept up to a bound,
and the timeout kills the whole process group. The group is killed after a
normal exit too, so background children never outlive the run.
"""

from __future__ import annotations

import asyncio
import marshal
import os
import signal
import sys
from pathlib import Path
from typing import Any

from .limits import package_parent
from .results import ScriptRunResult, outcome

LAUNCHER = str(Path(__file__).resolve().parent / "_launcher.py")
_DRAIN_SECONDS = 1.0


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
    """Run ``script`` with ``argv`` under ``spec``'s confinement; never raises for the script's faults."""
    command = [sys.executable, "-I", LAUNCHER, package_parent(), marshal.dumps(spec).hex(), str(script), *argv]
    process = await asyncio.create_subprocess_exec(
        *command,
        stdin=asyncio.subprocess.DEVNULL,
        stdout=asyncio.subprocess.PIPE,
        stderr=asyncio.subprocess.PIPE,
        cwd=str(cwd),
        env=env,
        start_new_session=True,
    )
    assert process.stdout is not None and process.stderr is not None
    readers = [
        asyncio.create_task(_read_bounded(process.stdout, max_output_bytes)),
        asyncio.create_task(_read_bounded(process.stderr, max_output_bytes)),
    ]
    timed_out = False
    try:
        await asyncio.wait_for(process.wait(), timeout_sec)
    except asyncio.TimeoutError:
        timed_out = True
    finally:
        _kill_group(process.pid)
        if process.returncode is None:
            await process.wait()
    done, pending = await asyncio.wait(readers, timeout=_DRAIN_SECONDS)
    for task in pending:  # a grandchild that left the group still holds the pipe
        task.cancel()
    stdout, stderr = (task.result() if task in done else "" for task in readers)
    return outcome(
        returncode=process.returncode if process.returncode is not None else -signal.SIGKILL,
        timed_out=timed_out,
        reported=_read_status(spec.get("status_file")),
        stdout=stdout,
        stderr=stderr,
        timeout_sec=timeout_sec,
    )


async def _read_bounded(stream: asyncio.StreamReader, limit: int) -> str:
    kept = bytearray()
    dropped = 0
    while True:
        chunk = await stream.read(1 << 16)
        if not chunk:
            break
        room = limit - len(kept)
        if room > 0:
            kept += chunk[:room]
        dropped += max(0, len(chunk) - max(room, 0))
    text = kept.decode("utf-8", errors="replace")
    return f"{text}\n[{dropped} bytes of output dropped]" if dropped else text


def _kill_group(pid: int) -> None:
    try:
        os.killpg(pid, signal.SIGKILL)
    except (ProcessLookupError, PermissionError):
        pass


def _read_status(path: str | None) -> str:
    if not path:
        return ""
    try:
        return Path(path).read_text(encoding="utf-8").strip()
    except OSError:
        return ""
