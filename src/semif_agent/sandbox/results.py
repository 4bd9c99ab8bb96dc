"""The outcome of a confined run: :class:`ScriptRunResult` (a script or hook), :class:`CallResult`
(a :meth:`~.pool.WorkerPool.call`), and their error types."""

from __future__ import annotations

import signal
from dataclasses import dataclass, field
from enum import StrEnum


class ErrorType(StrEnum):
    """What went wrong, in :attr:`ScriptRunResult.error_type` (a plain string)."""

    NONE = "none"
    """It ran and exited 0."""
    VALIDATION = "validation"
    """The request was refused before running: unknown or invisible skill, no such script or hook."""
    PATH = "path"
    """The script path leaves the skill."""
    EXIT = "exit"
    """The script exited with a non-zero status (``sys.exit(n)``, an uncaught exception)."""
    EXCEPTION = "exception"
    """An ``entrypoint`` raised."""
    TIMEOUT = "timeout"
    """It ran past its timeout and its process group was killed."""
    MEMORY = "memory"
    """It ran out of its memory allowance."""
    CPU = "cpu"
    """It used up its CPU-seconds allowance."""
    SIGNAL = "signal"
    """It was killed by a signal it did not ask for (a crash, an outside kill)."""
    WORKER = "worker"
    """The warm worker running it died or could not start."""
    DISK = "disk"
    """It wrote more than its allowance (``SandboxLimits.max_disk_mb``) and was killed."""
    CHANNEL = "channel"
    """It sent a malformed message (a line too large or too deep, not JSON, forged, out of place) and was killed."""


@dataclass(frozen=True)
class ScriptRunResult:
    """What a skill script or hook run produced.

    ``ok`` is true only for exit status 0; ``error_type`` is one of
    :class:`ErrorType`'s values; a failure's explanation is in ``stderr``.
    ``confinement`` says what held, by kind: ``processes`` (``pid-namespace``,
    ``cgroup``, ``subreaper``, ``process-group``), ``process_limit``
    (``cgroup``, ``rlimit``, ``none``), ``filesystem`` (``landlock``,
    ``none``), ``network`` (``namespace``, ``open``, ``allowed``), ``tcp``
    (``landlock``, ``none``, when the network is denied), ``disk``
    (``watched``, ``none``), ``view`` (``mount-namespace``, ``none``), ``root``
    (``allow-list``, ``host``), ``user`` (``unprivileged``, ``root``, ``host``),
    ``keyring`` (``fresh``, ``none``), ``ipc`` (``namespace``, ``seccomp``,
    ``none``), ``set_id`` (``seccomp``, ``none``), ``devices`` and
    ``local_sockets``; empty for a run refused before it started.
    """

    ok: bool
    exit_code: int
    stdout: str
    stderr: str
    error_type: str
    confinement: dict[str, str] = field(default_factory=dict, compare=False)

    def as_dict(self) -> dict[str, object]:
        """A JSON-ready view."""
        return {
            "ok": self.ok,
            "exit_code": self.exit_code,
            "stdout": self.stdout,
            "stderr": self.stderr,
            "error_type": self.error_type,
            "confinement": dict(self.confinement),
        }


@dataclass(frozen=True)
class CallResult(ScriptRunResult):
    """What a :meth:`~.pool.WorkerPool.call` produced: a :class:`ScriptRunResult` plus ``value``.

    ``value`` is what the called function returned (JSON data), None when it
    returned None or did not return (it exited, raised, crashed, was killed).
    """

    value: object = None

    def as_dict(self) -> dict[str, object]:
        """A JSON-ready view."""
        return {**super().as_dict(), "value": self.value}


def refused(error_type: ErrorType, message: str) -> ScriptRunResult:
    """A result for a run refused before it started."""
    return ScriptRunResult(ok=False, exit_code=-1, stdout="", stderr=message, error_type=str(error_type))


def outcome(
    *,
    returncode: int,
    timed_out: bool,
    reported: str,
    stdout: str,
    stderr: str,
    timeout_sec: float,
) -> ScriptRunResult:
    """Classify a finished run from its wait status and what the script's process reported.

    ``returncode`` follows :mod:`subprocess` (negative: killed by that signal);
    ``reported`` is the error type the launcher or worker wrote (``memory``,
    ``exception``, ``cpu``, ``disk``, ``channel``, ``timeout``, ``worker``), or empty.
    """
    if timed_out or reported == ErrorType.TIMEOUT:
        note = f"killed: ran past its {timeout_sec:g}s timeout"
        return ScriptRunResult(False, returncode, stdout, _append(stderr, note), str(ErrorType.TIMEOUT))
    if reported in (ErrorType.DISK, ErrorType.CHANNEL, ErrorType.WORKER, ErrorType.MEMORY):
        return ScriptRunResult(False, returncode, stdout, stderr, reported)
    if returncode < 0:
        if -returncode == getattr(signal, "SIGXCPU", -1) or reported == ErrorType.CPU:
            return ScriptRunResult(
                False, returncode, stdout, _append(stderr, "killed: used up its CPU time"), str(ErrorType.CPU)
            )
        note = f"killed by signal {_signal_name(-returncode)}"
        return ScriptRunResult(False, returncode, stdout, _append(stderr, note), str(ErrorType.SIGNAL))
    if returncode == 0:
        return ScriptRunResult(True, 0, stdout, stderr, str(ErrorType.NONE))
    if reported == ErrorType.EXCEPTION:
        return ScriptRunResult(False, returncode, stdout, stderr, reported)
    return ScriptRunResult(False, returncode, stdout, stderr, str(ErrorType.EXIT))


def _append(text: str, note: str) -> str:
    return f"{text.rstrip()}\n[{note}]" if text.strip() else f"[{note}]"


def _signal_name(number: int) -> str:
    try:
        return signal.Signals(number).name
    except ValueError:
        return str(number)
