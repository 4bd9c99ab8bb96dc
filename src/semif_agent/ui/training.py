""" "Train now": the training ``semif train`` runs, on the workspace's examples and decision log, in the background.

One job at a time; its progress (stage, done, total) and, at the end, the
report (held-out accuracy before and after) are read by the page as JSON.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from typing import TYPE_CHECKING

from ..errors import SemifError
from ..workspace import Workspace

if TYPE_CHECKING:
    from ..records import RunRecord


@dataclass
class TrainingStatus:
    state: str = "idle"  # idle | running | done | failed
    stage: str = ""
    done: int = 0
    total: int = 0
    started: float | None = None
    report: dict[str, object] | None = None
    error: str | None = None
    saved_to: str | None = None

    def to_dict(self) -> dict[str, object]:
        return {
            "state": self.state,
            "stage": self.stage,
            "done": self.done,
            "total": self.total,
            "report": self.report,
            "error": self.error,
            "saved_to": self.saved_to,
        }


class TrainingJob:
    """Fits the workspace's router in a thread, as ``semif train`` does (examples and the log, no datasets)."""

    def __init__(self, workspace: Workspace, runs: Callable[[], Iterable[RunRecord]]) -> None:
        self.workspace = workspace
        self.runs = runs  # a callable giving the log's RunRecords (the index's)
        self.status = TrainingStatus()
        self._lock = threading.Lock()

    def start(self) -> bool:
        """Start a training; False when one is already running."""
        with self._lock:
            if self.status.state == "running":
                return False
            self.status = TrainingStatus(state="running", stage="loading", started=time.time())
        threading.Thread(target=self._train, name="semif-ui-train", daemon=True).start()
        return True

    def _progress(self, stage: str, done: int, total: int) -> None:
        self.status.stage, self.status.done, self.status.total = stage, done, total

    def _train(self) -> None:
        from ..loop.settings import RunSettings
        from ..routing.training import examples_from_log, examples_from_tree, train_workspace

        status = self.status
        try:
            ws = self.workspace
            settings = RunSettings.resolve(ws, engine="local")
            engine = settings.build_engine()
            tree = settings.build_tree(engine)
            current = settings.build_strategy(tree, engine)
            rows = examples_from_tree(tree) + examples_from_log(self.runs(), tree)
            _router, report, path = train_workspace(ws, tree, rows, engine, current=current, progress=self._progress)
            status.report, status.state = report.to_dict(), "done"
            status.saved_to = None if path is None else str(path)
        except Exception as exc:  # noqa: BLE001 - whatever fails is shown on the page, not lost in a thread
            status.error = str(exc) if isinstance(exc, SemifError) else f"{type(exc).__name__}: {exc}"
            status.state = "failed"
