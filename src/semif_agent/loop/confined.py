"""Code-skill bodies run confined: a child of the sandbox's warm worker pool, the engine kept in the host.

A run's ``predict`` and ``act`` execute in one forked, confined child (the
mechanism SKILL.md scripts run in, :mod:`semif_agent.sandbox.pool`): its
own PID namespace and network namespace where the kernel allows them,
a view of the host holding only the system folders, the write dirs and the
configured data (none of the workspace's records: not its settings, log,
manifests or bodies), Landlock write access to the skill's write dirs only, limits on memory, CPU,
file size, bytes written, open files and processes, a reduced environment
with no credentials, standard output and error captured apart from the
host's. The body's source is read (and its hash checked) in the host and
sent over; the child never opens the body file.

Every ``ctx.engine.call`` is a question to the host (:class:`BodyRun`
answers it): the host's :class:`~.context.BudgetedEngine` enforces the
skill's ``cost_budget`` and keeps the decision for the log, so nothing in the
child can change the budget, the log or the guard; ``ctx.config`` is a copy.
However the child ends (an exception, ``SystemExit``, ``os._exit``, a crash,
running out of memory or time), the host gets an outcome that says so.
"""

from __future__ import annotations

import asyncio
import hashlib
import os
import time
import weakref
from collections.abc import Callable, Mapping
from dataclasses import dataclass, replace
from pathlib import Path
from typing import TYPE_CHECKING

from ..engine.base import decide
from ..engine.decisions import DecisionRequest, Option, check_bounds, check_option_count
from ..errors import BudgetExceeded, DecisionError, DecisionTooLarge, InvalidArgumentError
from ..skills import Request
from ..tree.manifests import SkillManifest
from ..workspace import Workspace
from ..workspace.records import HOST_DIR
from .context import BudgetedEngine

if TYPE_CHECKING:
    from .._json import JsonObject
    from ..sandbox.pool import WorkerPool
    from ..sandbox.results import CallResult, ScriptRunResult

MEMORY_MB = 1024


@dataclass
class BodyOutcome:
    """What a confined run of ``predict`` and ``act`` came to.

    ``prediction`` and ``action`` are set when the body returned them;
    otherwise ``error`` says what went wrong and ``phase`` where. ``stdout``
    and ``stderr`` are what the body printed (never shown in the host's
    output). ``predicted`` is the number of engine calls made during ``predict``,
    ``predicted_ns`` when ``predict`` returned (nanoseconds since the epoch).
    """

    prediction: str | None = None
    action: tuple[str, str] | None = None
    error: str | None = None
    message: str = ""  # the error without its phase: what the body raised or refused
    kind: str = ""
    phase: str = "predict"
    predicted: int = 0
    predicted_ns: int | None = None
    stdout: str = ""
    stderr: str = ""


class BodyRun:
    """One confined run: the host side of the channel (engine calls, the phase), and the result.

    Every message is untrusted data from the child: a decision request is
    checked for its shape and its caps (:func:`~semif_agent.engine.decisions.check_bounds`)
    before the engine sees it, the engine works in a thread (the event loop
    goes on), and ``timeout`` seconds after the child's first message no
    request is answered (the sandbox kills the child at its own timeout,
    which began earlier, and then drops what the host was still working on).
    """

    def __init__(self, engine: BudgetedEngine, timeout: float = float("inf")) -> None:
        self.engine = engine
        self.timeout = timeout
        self.predicted: int | None = None
        self.predicted_ns: int | None = None
        self.deadline: float | None = None

    async def on_message(self, message: JsonObject) -> JsonObject:
        if self.deadline is None:
            self.deadline = time.monotonic() + self.timeout
        kind = message.get("kind")
        if kind == "engine":
            return await self._decide(message.get("request"))
        if kind == "predicted":
            self.predicted, self.predicted_ns = self.engine.calls, time.time_ns()
            return {"ok": True}
        return _refusal("protocol", f"unknown message {str(kind)[:40]!r}")

    async def _decide(self, data: object) -> JsonObject:
        remaining = (self.deadline or 0.0) - time.monotonic()
        if remaining <= 0:
            return _refusal("timeout", "the run is out of time: no more engine calls")
        try:
            asked = decision_request(data)
        except DecisionTooLarge as exc:
            return _refusal("size", str(exc))
        except InvalidArgumentError as exc:
            return _refusal("decision", f"not a decision request: {exc}")
        try:
            answer = await asyncio.wait_for(decide(self.engine, asked), remaining)
        except TimeoutError:
            return _refusal("timeout", "the run ran out of time waiting for the engine")
        except BudgetExceeded as exc:
            return _refusal("budget", str(exc))
        except DecisionError as exc:
            return _refusal("decision", str(exc))
        return {"result": answer.to_dict() | {"scores": dict(answer.scores)}}


def _refusal(kind: str, message: str) -> JsonObject:
    return {"error": {"type": kind, "message": message}}


def decision_request(data: object) -> DecisionRequest:
    """The :class:`DecisionRequest` a body sent (its ``to_dict``), checked: shape first, then the caps.

    Raises :class:`~semif_agent.errors.DecisionTooLarge` (naming the cap) or
    :class:`~semif_agent.errors.InvalidArgumentError`; linear in the request's size.
    """
    if not isinstance(data, dict):
        raise InvalidArgumentError("a decision request is a JSON object")
    state, question, options = data.get("state"), data.get("question"), data.get("options")
    if not (isinstance(state, str) and isinstance(question, str) and isinstance(options, list)):
        raise InvalidArgumentError("its state and question are text, its options a list")
    check_option_count(len(options))
    offered = []
    for option in options:
        ident, description = (option.get("id"), option.get("description", "")) if isinstance(option, dict) else (0, 0)
        if not (isinstance(ident, str) and isinstance(description, str)):
            raise InvalidArgumentError("each option is {id, description}, both text")
        offered.append(Option(ident, description))
    check_bounds(state, question, offered)
    return DecisionRequest(state, question, offered)


def confinement(workspace: Workspace, timeout: float, config: Mapping[str, object] | None = None) -> dict[str, object]:
    """The child's confinement: write only the skill's write dirs, read the data it may read (the paths of
    ``config``, the ``ctx.config`` it gets, or else the workspace's), no network."""
    from ..sandbox.limits import SandboxLimits, confinement_spec

    roots = [str(r) for r in workspace.write_roots]
    readable = tuple(str(p) for p in readable_data(workspace, config))
    limits = SandboxLimits(memory_mb=MEMORY_MB, readable_paths=readable)
    anchor = Path(roots[0]) if roots else workspace.root
    spec = confinement_spec(limits, timeout_sec=timeout, workspace_root=anchor, skill_dir=anchor)
    spec["writable"] = [*roots, "/dev/null"]
    return spec


def readable_data(workspace: Workspace, config: Mapping[str, object] | None = None) -> list[Path]:
    """What a body may read besides its write dirs: the configured data paths (contacts, files), never the
    records: no path that is or holds the settings, the log, the manifests, the bodies, the host's own folder
    (the skill trace, the MCP client tokens) or the data dir (a ``[paths]`` entry naming the workspace itself, or
    ``data``, is left out whole), nor one inside the bodies or the host's folder."""
    roots = set(workspace.write_roots)
    sealed = [workspace.bodies_dir, workspace.root / HOST_DIR]  # nothing inside them either
    records = [workspace.settings_file, workspace.log_path, workspace.categories_path, *sealed]
    records += [workspace.admitted_path, workspace.data_dir]
    paths = []
    for key, value in (workspace.skill_config() if config is None else config).items():
        path = Path(str(value))
        if key in ("workspace", "data") or not path.is_absolute() or path in roots or not path.exists():
            continue
        if any(path == record or path in record.parents for record in records) or any(
            folder in path.parents for folder in sealed
        ):
            continue
        paths.append(path)
    return paths


_pools: weakref.WeakKeyDictionary[asyncio.AbstractEventLoop, WorkerPool] = weakref.WeakKeyDictionary()


def pool_for_this_loop() -> WorkerPool:
    """A warm worker pool for the running event loop (a pool serves one loop; runs on other threads get their own)."""
    from ..sandbox.pool import WorkerPool
    from . import _body_child

    loop = asyncio.get_running_loop()
    pool = _pools.get(loop)
    if pool is None:
        pool = _pools[loop] = WorkerPool(preload=(_body_child.run,))
    return pool


def start_body_workers() -> None:
    """Launch this thread's body worker now, so it loads while the caller loads the tree (what ``semif run`` does).

    Sync: for the thread's own loop (:func:`~semif_agent._sync.run_sync`); a
    worker that cannot start is left to the first run to report.
    """
    from .._sync import run_sync

    async def start() -> None:
        try:
            await pool_for_this_loop().start()
        except OSError:
            pass

    run_sync(start())


async def run_confined(
    skill: SkillManifest,
    source: str,
    request: Request,
    *,
    workspace: Workspace,
    engine: BudgetedEngine,
    run_id: str,
    timeout: float,
    pool: WorkerPool | None = None,
    config: Mapping[str, object] | None = None,
    warm: bool = False,
) -> BodyOutcome:
    """Run ``skill``'s body (``source``) on ``request`` in a confined child; the engine answers from here.

    ``config`` is what the body sees as ``ctx.config`` (default: the workspace's). ``warm``: the run may
    take the process an earlier run of the same body text in the same workspace left warm, and leave its
    own for the next (put back between runs, :mod:`semif_agent.sandbox.pool`); else a fresh process.
    """
    pool = pool or pool_for_this_loop()
    workspace.make_write_dirs()
    run = BodyRun(engine, timeout)
    payload = {
        "skill": skill.name,
        "body_path": str(skill.body_path),
        "source": source,
        "run_id": run_id,
        "request": {"text": request.text, "id": request.id, "meta": dict(request.meta)},
        "config": config if config is not None else workspace.skill_config(),
        "write_roots": [str(r) for r in workspace.write_roots],
        "engine": engine.name,
        "model": engine.model,
    }
    from ..sandbox.limits import DEFAULT_ENV_ALLOW  # the variables SKILL.md scripts get: no keys, no tokens
    from . import _body_child  # the child's side, run in the worker; imported here only to name it

    env = {
        "HOME": str(workspace.root),
        "PYTHONDONTWRITEBYTECODE": "1",
        "PYTHONIOENCODING": "utf-8",
        **{k: v for k, v in os.environ.items() if k in DEFAULT_ENV_ALLOW},
    }
    result = await pool.call(
        _body_child.run,
        payload,
        cwd=str(workspace.root),
        env=env,
        confine_spec=confinement(workspace, timeout, config),
        timeout_sec=timeout,
        on_message=run.on_message,
        reuse=f"{skill.name}\0{workspace.root}\0{hashlib.sha256(source.encode()).hexdigest()}" if warm else None,
    )
    return outcome_of(result, run)


def outcome_of(result: CallResult, run: BodyRun) -> BodyOutcome:
    """The body's outcome from the sandbox's result: its own report (checked), or how the child ended."""
    predicted = run.predicted if run.predicted is not None else run.engine.calls
    phase = "act" if run.predicted is not None else "predict"
    base = BodyOutcome(predicted=predicted, predicted_ns=run.predicted_ns, stdout=result.stdout, stderr=result.stderr)
    value = result.value
    if value is None:
        ended = _ended(result)
        return replace(base, error=f"{phase} {ended}", message=ended, kind=result.error_type, phase=phase)
    report = _report(value)
    if isinstance(report, str):
        message = f"{MALFORMED}: {report}"
        return replace(base, error=f"{phase} failed: {message}", message=message, kind="channel", phase=phase)
    if isinstance(report, _Acted):
        return replace(base, prediction=report.prediction, action=report.action, phase="act")
    raised = report.kind == "exception"
    return replace(
        base,
        error=f"{report.phase} {'raised' if raised else 'failed:'} {report.message}",
        message=report.message,
        kind=report.kind,
        phase=report.phase,
    )


MALFORMED = "the skill's process sent a malformed message"
_PHASES = ("load", "predict", "act")


@dataclass(frozen=True)
class _Acted:
    """A body's report of a run that went through: its prediction, and its action (action log, new state)."""

    prediction: str
    action: tuple[str, str]


@dataclass(frozen=True)
class _Failed:
    """A body's report of a run that failed: in which phase, the kind of failure, and its message."""

    phase: str
    kind: str
    message: str


def _report(value: object) -> _Acted | _Failed | str:
    """The child's report (what :func:`._body_child.run` returns) when it has its shape; else what is wrong."""
    if not isinstance(value, dict) or not isinstance(value.get("ok"), bool):
        return "a result that is not a report"
    if value["ok"]:
        action = value.get("action")
        prediction = value.get("prediction")
        log, state = (action.get("action_log"), action.get("new_state")) if isinstance(action, dict) else (None, None)
        if isinstance(prediction, str) and isinstance(log, str) and isinstance(state, str):
            return _Acted(prediction, (log, state))
        return "a result without its prediction and action"
    phase, kind, message = value.get("phase"), value.get("kind"), value.get("message")
    if not (isinstance(phase, str) and phase in _PHASES and isinstance(kind, str) and isinstance(message, str)):
        return "a failure without its phase, kind and message"
    return _Failed(phase, kind, message)


_ENDINGS: dict[str, Callable[[ScriptRunResult], str]] = {
    "timeout": lambda r: "did not finish in time; the body and every process it started were killed",
    "memory": lambda r: "ran out of its memory allowance and was stopped",
    "cpu": lambda r: "used up its CPU time and was stopped",
    "disk": lambda r: "wrote more than it may and was stopped",
    "signal": lambda r: f"crashed (killed by signal {-r.exit_code})",
    "worker": lambda r: f"could not run: {r.stderr.strip()[:200]}",
    "channel": lambda r: _worker_note(r.stderr) or f"was stopped: {MALFORMED}",
}


def _worker_note(stderr: str) -> str:
    """The sandbox's note at the end of ``stderr`` (``[killed: ...]``), without its brackets; empty without one."""
    last = (stderr.strip().splitlines() or [""])[-1]
    return f"was {last[1:-1]}" if last.startswith("[killed: ") and last.endswith("]") else ""


def _ended(result: ScriptRunResult) -> str:
    ending = _ENDINGS.get(result.error_type)
    if ending is not None:
        return ending(result)
    last = (result.stderr.strip().splitlines() or [""])[-1][:200]
    return f"exited without an outcome (exit status {result.exit_code}){': ' + last if last else ''}"
