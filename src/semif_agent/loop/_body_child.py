"""The confined child's side of a code-skill run: ``predict`` then ``act``, engine calls asked of the host.

Run in the sandbox's warm worker (:func:`run`, the call's target); the host
imports it only to name the target. The host sends the body's source (read and checked there,
so the child never reads the body file), the request, a copy of the config
and the write roots. Every ``ctx.engine.call`` becomes a question to the
host over the sandbox's channel; the host keeps the engine, enforces the
budget and logs the decision, and answers with the result or the refusal.
The child reports when ``predict`` is done, then returns ``act``'s result,
or what went wrong and where.
"""

from __future__ import annotations

import datetime  # noqa: F401 - with json, re and sqlite3: what most bodies import, loaded once in the warm worker
import json  # noqa: F401 - loaded once in the warm worker for the bodies
import re  # noqa: F401 - loaded once in the warm worker for the bodies
import sqlite3  # noqa: F401 - loaded once in the warm worker for the bodies
import types
from pathlib import Path
from typing import Any

from ..engine.decisions import DecisionRequest, DecisionResult, check_bounds
from ..errors import BudgetExceeded, DecisionError, DecisionTooLarge, WriteRefused
from ..skills import ActionContext, ActionResult, Prediction, Request, body_line, missing_functions
from .guard import guarded

_REFUSALS: dict[object, type[Exception]] = {
    "budget": BudgetExceeded,
    "decision": DecisionError,
    "timeout": DecisionError,
    "size": DecisionTooLarge,
}
"""The exception a body gets for each kind of refusal from the host."""


class HostEngine:
    """The engine a confined body sees: each call is answered by the host (which counts it against the budget)."""

    def __init__(self, channel: Any, name: str, model: str | None) -> None:
        self._channel = channel
        self.name = name
        self.model = model

    def call(self, request: DecisionRequest) -> DecisionResult:
        """The host's answer to ``request``; :class:`~semif_agent.errors.DecisionTooLarge` (naming the cap) for
        one over a cap of :mod:`semif_agent.engine.decisions`, before anything is sent."""
        if not isinstance(request, DecisionRequest):
            raise TypeError(f"ctx.engine.call takes a DecisionRequest, not {type(request).__name__}")
        check_bounds(request.state, request.question, request.options)
        reply = self._channel.ask({"kind": "engine", "request": request.to_dict()})
        error = reply.get("error")
        if error:
            raised = _REFUSALS.get(error.get("type"), RuntimeError)
            raise raised(str(error.get("message", "the engine refused the decision")))
        result = reply["result"]
        return DecisionResult(
            selected=result["selected"],
            scores=dict(result.get("scores") or {}),
            probabilities=result.get("probabilities"),
            engine=result.get("engine", self.name),
            model=result.get("model", self.model),
            latency_ms=float(result.get("latency_ms") or 0.0),
            usage=result.get("usage"),
            note=result.get("note", ""),
        )


_COMPILED_MAX = 64
_compiled: dict[tuple[str, str], types.CodeType] = {}  # bodies this process compiled, by path and source


def body_code(path: str, source: str) -> types.CodeType:
    """The code of the body ``source`` (at ``path``), compiled once per process: a warm process that runs the
    same body again skips the compile (about half a millisecond)."""
    key = (path, source)
    code = _compiled.get(key)
    if code is None:
        if len(_compiled) >= _COMPILED_MAX:
            _compiled.clear()
        code = _compiled[key] = compile(source, path, "exec")
    return code


def run(payload: dict[str, Any], channel: Any) -> dict[str, Any]:
    """Load the body from its source, run ``predict`` and ``act``; the outcome as JSON-ready data."""
    name, path = payload["skill"], payload["body_path"]
    phase = "load"
    try:
        module = types.ModuleType(name)
        module.__file__ = path
        exec(body_code(path, payload["source"]), module.__dict__)  # the body, checked by the host
        missing = missing_functions(module)
        if missing:
            return _failure("load", "contract", f"the body of {name!r} does not define {' and '.join(missing)}")
        engine = HostEngine(channel, payload["engine"], payload.get("model"))
        ctx = ActionContext(
            engine=engine,
            config=payload["config"],
            write_roots=tuple(Path(r) for r in payload["write_roots"]),
            skill=name,
            run_id=payload["run_id"],
        )
        request = Request(
            payload["request"]["text"], payload["request"]["id"], dict(payload["request"].get("meta") or {})
        )
        phase = "predict"
        with guarded(ctx.write_roots, name):  # a second fence: the sandbox is the first
            prediction = module.predict(ctx, request)
        if not isinstance(prediction, Prediction):
            return _failure(phase, "contract", f"predict returned {type(prediction).__name__}, not Prediction")
        channel.ask({"kind": "predicted", "text": str(prediction.text)})
        phase = "act"
        with guarded(ctx.write_roots, name):
            action = module.act(ctx, request, prediction)
        if not isinstance(action, ActionResult):
            return _failure(phase, "contract", f"act returned {type(action).__name__}, not ActionResult")
        return {
            "ok": True,
            "prediction": str(prediction.text),
            "action": {"action_log": str(action.action_log), "new_state": str(action.new_state)},
        }
    except BudgetExceeded as exc:
        return _failure(phase, "budget", str(exc))
    except WriteRefused as exc:
        return _failure(phase, "write", str(exc))
    except SyntaxError as exc:
        return _failure(phase, "load", f"syntax error at line {exc.lineno}: {exc.msg}")
    except Exception as exc:  # noqa: BLE001 - every failure of the body is its outcome
        line = body_line(exc, path)
        where = f" at line {line}" if line is not None else ""
        kind = "write" if isinstance(exc, PermissionError) else "exception"
        return _failure(phase, kind, f"{type(exc).__name__}{where}: {exc}")


def _failure(phase: str, kind: str, message: str) -> dict[str, Any]:
    return {"ok": False, "phase": phase, "kind": kind, "message": message}
