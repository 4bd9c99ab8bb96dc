"""The first-hour request set: everyday requests over a fresh starter workspace, run end to end and checked on the data.

Each row of ``tests/fixtures/first_hour.jsonl`` holds a request (``text``), the
skill that should handle it (``skill``, ``null`` when none fits), what must be
true of the workspace's data after it ran (``expect``), and optionally
requests run first, straight to their skill, to set the data up (``given``).
Every row starts from empty write dirs. An ``expect`` entry looks in one place:

- ``"drafts"`` / ``"calendar"``: the files the run created in that folder (an
  event's lines unfolded); ``contains`` and ``absent`` list text that must or
  must not be in them (case-insensitive);
- ``"notes"``: every saved note (``notebook: body``, one a line);
- ``"todos"``: ``open`` and ``done`` name to-dos that must be open or done,
  ``absent`` text that must not be in any to-do;
- ``"answer"``: what the run answered (its new state), with no file changed;
  ``handed_back``: the request came back untouched.

The clock is pinned to :data:`NOW`, a Monday morning, through the workspace's
``[config] now`` setting (and the request's ``meta["now"]``, which older skill
bodies read). The request ids (which name the files the skills write) are
numbered from that time, and the workspace lives at one fixed path
(:func:`pinned_workspace`): the judge reads action logs that name both, so
with them pinned every run of the set gets the same verdicts.
"""

from __future__ import annotations

import fcntl
import json
import shutil
import sqlite3
import tempfile
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from semif_agent.loop import RunResult, SkillRunner
from semif_agent.skills import Request
from semif_agent.starter import create_workspace
from semif_agent.workspace import Workspace

REQUESTS = Path(__file__).resolve().parents[1] / "fixtures" / "first_hour.jsonl"
NOW = "2025-03-10T09:00:00"  # Monday 10 March 2025
PINNED_PLACE = Path(tempfile.gettempdir()) / "semif-first-hour"


def load_requests(path: Path = REQUESTS) -> list[dict[str, Any]]:
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines() if line.strip()]


@dataclass
class Outcome:
    """One request's run, and what its checks found wrong (nothing: done right)."""

    row: dict[str, Any]
    result: RunResult
    problems: list[str] = field(default_factory=list)

    @property
    def skill(self) -> str | None:
        return self.result.skill

    @property
    def label(self) -> str:
        return self.result.assessment.label

    @property
    def routed_right(self) -> bool:
        """Routed to the skill the row names, and let act (a route the act gate held back did nothing)."""
        return self.skill == self.row["skill"] and not (self.result.handed_back and self.skill is not None)

    @property
    def done_right(self) -> bool:
        return not self.problems

    @property
    def hands_back(self) -> bool:
        """The right thing to do is to hand the request back (no skill fits, or the skill cannot act on it)."""
        return any(e.get("handed_back") for e in self.row["expect"])

    @property
    def judged_right(self) -> bool:
        """The assessment says success exactly when the right thing was done (a right hand-back is no success)."""
        if self.done_right and self.hands_back:
            return self.label != "success"
        return (self.label == "success") == self.done_right


def make_workspace(dest: Path) -> Workspace:
    """A fresh starter workspace at ``dest`` with its clock pinned to :data:`NOW`."""
    root = create_workspace(dest)
    settings = root / "semif.toml"
    settings.write_text(settings.read_text(encoding="utf-8") + f'\n[config]\nnow = "{NOW}"\n', encoding="utf-8")
    return Workspace.load(root)


@contextmanager
def pinned_workspace() -> Iterator[Workspace]:
    """A fresh starter workspace (see :func:`make_workspace`) at :data:`PINNED_PLACE`, removed afterwards.

    The action logs the judge reads name files by their absolute path, and the
    path moves the judge's probabilities: the set's judged-right count went
    from 28 to 44 of 48 with the workspace's folder alone. One fixed folder
    keeps the count the same from run to run; a lock beside it makes runs at
    the same time on one machine wait for each other.
    """
    with open(f"{PINNED_PLACE}.lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        shutil.rmtree(PINNED_PLACE, ignore_errors=True)  # left by a run that was killed
        try:
            yield make_workspace(PINNED_PLACE / "ws")
        finally:
            shutil.rmtree(PINNED_PLACE, ignore_errors=True)


class FirstHour:
    """Runs the rows of the set on one workspace, each from empty write dirs."""

    def __init__(self, workspace: Workspace, engine: Any) -> None:
        self.ws = workspace
        self.runner = SkillRunner(workspace, engine=engine)
        self.requests = 0

    def request(self, text: str) -> Request:
        """A request at :data:`NOW`, its id numbered in order (``20250310-090000-000001``, ...), as the clock would."""
        self.requests += 1
        stamp = NOW.replace("-", "").replace(":", "").replace("T", "-")
        return Request(text, id=f"{stamp}-{self.requests:06d}", meta={"now": NOW})

    def clear(self) -> None:
        for folder in self.ws.write_roots:
            for entry in Path(folder).iterdir():
                shutil.rmtree(entry) if entry.is_dir() else entry.unlink()

    def run(self, row: dict[str, Any]) -> Outcome:
        self.clear()
        for skill, text in row.get("given", []):
            self.runner.run(self.request(text), skill=skill)
        result = self.runner.run(self.request(row["text"]))
        outcome = Outcome(row, result)
        if result.error:
            outcome.problems.append(f"error: {result.error}")
        for expect in row["expect"]:
            outcome.problems += self.check(expect, result)
        return outcome

    def check(self, expect: dict[str, Any], result: RunResult) -> list[str]:
        where = expect["in"]
        problems = []
        if where == "answer":
            text = result.action.new_state
            changed = result.changes.created + result.changes.modified + result.changes.deleted
            if changed:
                problems.append(f"changed {', '.join(changed)}")
            if expect.get("handed_back") and text.strip() != result.request.text.strip():
                problems.append(f"did not hand the request back: {text[:80]!r}")
            if not expect.get("handed_back") and text.strip() == result.request.text.strip():
                problems.append("handed the request back")
        elif where in ("drafts", "calendar"):
            created = [p for p in result.changes.created if p.startswith(f"data/{where}/")]
            if not created:
                return [f"wrote nothing to data/{where}"]
            text = "\n".join((self.ws.root / p).read_text(encoding="utf-8").replace("\r\n ", "") for p in created)
        elif where == "notes":
            text = self.notes()
        elif where == "todos":
            path = self.ws.data_dir / "todos" / "todos.json"
            todos = json.loads(path.read_text(encoding="utf-8")) if path.is_file() else []
            text = "\n".join(t["text"] for t in todos)
            for status, done in (("open", False), ("done", True)):
                for wanted in expect.get(status, []):
                    if not any(wanted.lower() in t["text"].lower() and t["done"] is done for t in todos):
                        problems.append(f"no {status} to-do {wanted!r} in {[(t['text'], t['done']) for t in todos]}")
        else:
            raise ValueError(f"unknown place to check: {where!r}")
        problems += [f"{where}: missing {w!r}" for w in expect.get("contains", []) if w.lower() not in text.lower()]
        problems += [f"{where}: has {w!r}" for w in expect.get("absent", []) if w.lower() in text.lower()]
        return problems

    def notes(self) -> str:
        path = self.ws.data_dir / "notes" / "notes.sqlite3"
        if not path.is_file():
            return ""
        db = sqlite3.connect(path)
        try:
            return "\n".join(
                f"{book}: {body}" for book, body in db.execute("SELECT notebook, body FROM notes ORDER BY id")
            )
        finally:
            db.close()
