"""The scripted engine: answers decisions from a script, a function, or a logged run.

A public testing utility. Use it to drive skills and the tree without a model::

    engine = ScriptedEngine(["email", "email.compose", "Alice", "success"])
    engine = ScriptedEngine(fn=lambda req: req.options[0].id)
    engine = ScriptedEngine.replay("data/decisions.jsonl", run_id="r-1234")  # or a log's rows

Every request it was sent is kept in ``engine.calls``.
"""

from __future__ import annotations

import contextlib
import json
from collections import deque
from collections.abc import Callable, Iterable, Iterator, Mapping
from pathlib import Path
from typing import Any, Protocol

from ..errors import ArgumentTypeError, DecisionError, EngineConfigError, check_type
from .base import BaseEngine
from .decisions import DecisionRequest, DecisionResult


class LoggedRow(Protocol):
    """A typed row of a decision log (``semif_agent.records``): its JSON object is what a replay reads."""

    def to_dict(self) -> dict[str, Any]: ...


Reply = str | dict[str, Any] | DecisionResult | BaseException


class ScriptedEngine(BaseEngine):
    """Plays back ``replies`` in order, or asks ``fn`` for each decision.

    A reply is an option id, a dict with ``selected`` (and optionally
    ``scores``, ``probabilities``, ``expect_question``), a
    :class:`DecisionResult`, or an exception to raise. When the replies run out
    the engine answers ``default`` if given (``"none"``, ``"first"`` or an id),
    else raises :class:`DecisionError`.
    """

    name = "scripted"

    def __init__(
        self,
        replies: Iterable[Reply] = (),
        *,
        fn: Callable[[DecisionRequest], Reply] | None = None,
        default: str | None = None,
        model: str | None = None,
    ) -> None:
        if isinstance(replies, (str, bytes)):
            raise ArgumentTypeError(f"replies must be a list, not one {type(replies).__name__}: wrap it in a list")
        check_type("replies", replies, Iterable)
        if fn is not None and not callable(fn):
            raise ArgumentTypeError(f"fn must be a function of the DecisionRequest, not {type(fn).__name__}")
        check_type("default", default, str, optional=True)
        self._replies: deque[Reply] = deque(replies)
        self._fn = fn
        self.default = default
        self.model = model
        self.calls: list[DecisionRequest] = []

    @property
    def remaining(self) -> int:
        return len(self._replies)

    def push(self, *replies: Reply) -> None:
        self._replies.extend(replies)

    @classmethod
    def replay(
        cls, log: str | Path | Iterable[Mapping[str, Any] | LoggedRow], run_id: str | None = None
    ) -> ScriptedEngine:
        """Answer as a logged run did: its rows' ``selected``, checked against the question.

        ``log`` is a decision log's path, or its rows (e.g. a ``DecisionLog``'s
        ``read()``, or their JSON objects); the decision rows are those with a
        question and a choice. ``run_id`` defaults to the last run that made a decision.
        """
        where = log if isinstance(log, (str, Path)) else "the rows given"
        given = _rows_of(Path(log)) if isinstance(log, (str, Path)) else (_json_of(r) for r in log)
        rows = [r for r in given if _is_decision(r)]
        if run_id is None:
            if not rows:
                raise EngineConfigError(f"{where}: no decisions to replay")
            run_id = str(rows[-1]["run_id"])
        rows = [r for r in rows if r.get("run_id") == run_id]
        if not rows:
            raise EngineConfigError(f"{where}: no decisions logged for run {run_id!r}")
        replies = [
            {"selected": r["selected"], "scores": r.get("scores") or {}, "expect_question": r["question"]}
            for r in sorted(rows, key=lambda r: r.get("step", 0))
        ]
        return cls(replies, model=f"replay:{run_id}")

    @classmethod
    def from_file(cls, path: str | Path) -> ScriptedEngine:
        """A JSON list of replies, or a decision log (``.jsonl``) to replay."""
        path = Path(path)
        if path.suffix == ".jsonl":
            return cls.replay(path)
        try:
            replies = json.loads(path.read_text(encoding="utf-8"))
        except (OSError, json.JSONDecodeError) as exc:
            raise EngineConfigError(f"{path}: cannot read the engine script ({exc})") from exc
        if not isinstance(replies, list):
            raise EngineConfigError(f"{path}: an engine script is a JSON list of replies")
        return cls(replies)

    def _decide(self, request: DecisionRequest) -> DecisionResult:
        self.calls.append(request)
        if self._fn is not None:
            reply: Reply = self._fn(request)
        elif self._replies:
            reply = self._replies.popleft()
        elif self.default is not None:
            reply = request.options[0].id if self.default == "first" else self.default
        else:
            raise DecisionError(f"scripted engine has no reply left for {request.question!r}")
        return _to_result(reply, request)


def _json_of(row: Mapping[str, Any] | LoggedRow) -> Any:
    """A logged row as its JSON object: a typed row's ``to_dict()``, a mapping as it is."""
    return row if isinstance(row, Mapping) else row.to_dict()


def _is_decision(logged: Any) -> bool:
    """Whether a logged JSON object is a decision: a question and the option chosen (not an outcome, label or call).
    The kernel reads the log's JSON as it is: the typed rows live above it (:mod:`semif_agent.records`)."""
    return (
        isinstance(logged, Mapping)
        and isinstance(logged.get("question"), str)
        and isinstance(logged.get("selected"), str)
    )


def _rows_of(path: Path) -> Iterator[Any]:
    """The JSON values of a JSON-lines file, a line that is not JSON (a torn last line) left out."""
    try:
        with path.open("rb") as handle:
            lines = list(handle)
    except FileNotFoundError:
        return
    except OSError as exc:
        raise EngineConfigError(f"{path}: cannot read the log to replay ({exc.strerror})") from exc
    for line in lines:
        with contextlib.suppress(ValueError):
            yield json.loads(line)


def _to_result(reply: Reply, request: DecisionRequest) -> DecisionResult:
    if isinstance(reply, BaseException):
        raise reply
    if isinstance(reply, DecisionResult):
        return reply
    if isinstance(reply, str):
        return DecisionResult(selected=reply, scores={reply: 1.0})
    if isinstance(reply, dict) and "selected" in reply:
        expected = reply.get("expect_question")
        if expected is not None and expected != request.question:
            raise DecisionError(
                f"replay diverged: the logged run asked {expected!r} here, this run asks {request.question!r}"
            )
        return DecisionResult(
            selected=str(reply["selected"]),
            scores={k: float(v) for k, v in (reply.get("scores") or {}).items() if v is not None},
            probabilities=reply.get("probabilities"),
        )
    raise DecisionError(f"scripted engine: cannot use reply {reply!r}")


def create(settings: Mapping[str, Any]) -> ScriptedEngine:
    """The registry's factory: ``--engine scripted:FILE`` replays a script or a logged run."""
    source = settings.get("arg") or settings.get("script")
    if source:
        return ScriptedEngine.from_file(source)
    replies = settings.get("replies")
    if replies is None:
        raise EngineConfigError(
            "the scripted engine needs a script: --engine scripted:FILE "
            "(a JSON list of answers, or a decision log to replay)"
        )
    return ScriptedEngine(replies, default=settings.get("default"))
