"""The act-when-sure set: everyday requests, each run on a fresh starter workspace, checked on what changed.

Each row of ``tests/fixtures/act_when_sure.jsonl`` holds a request (``text``),
the skill that serves it (``skill``, ``null`` when none does) and whether it
asks for a change a skill serves (``changes``). The hard rule: after a run, no
file changed unless ``changes`` is true. The rows are kept apart from the
starter's examples and ``none`` examples, and from what the act gate was tuned on.
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from semif_agent.loop import RunResult

from ._first_hour import FirstHour, load_requests

REQUESTS = Path(__file__).resolve().parents[1] / "fixtures" / "act_when_sure.jsonl"


@dataclass
class Run:
    row: dict[str, Any]
    result: RunResult

    @property
    def changed(self) -> list[str]:
        changes = self.result.changes
        return changes.created + changes.modified + changes.deleted

    @property
    def acted(self) -> bool:
        """A skill ran (the route ended at one, and the gate let it act)."""
        return self.result.skill is not None and not self.result.handed_back

    @property
    def wrote(self) -> bool:
        """Acted with a skill that declares it writes (the runs the act threshold gates)."""
        gate = self.result.gate
        return self.acted and gate is not None and gate.effects == "write"

    @property
    def right(self) -> bool:
        """Acted with the skill the row names, or handed back a request no skill serves."""
        if self.row["skill"] is None:
            return not self.acted or not self.changed
        return self.acted and self.result.skill == self.row["skill"]

    @property
    def breaks_the_rule(self) -> bool:
        """A file changed for a request that asked for no change a skill serves."""
        return bool(self.changed) and not self.row["changes"]


DEVELOPMENT = REQUESTS.with_name("gate_dev.jsonl")  # the set the gate's rules were tuned on, of the same form


def load_rows(path: Path | None = None) -> list[dict[str, Any]]:
    return load_requests(path or REQUESTS)


def run_all(first_hour: FirstHour, rows: list[dict[str, Any]]) -> list[Run]:
    """Each row run alone, from empty write dirs."""
    runs = []
    for row in rows:
        first_hour.clear()
        runs.append(Run(row, first_hour.runner.run(first_hour.request(row["text"]))))
    return runs


def counts(runs: list[Run]) -> dict[str, Any]:
    """acted / right / handed back, the gate's share acted, the accuracy of acted runs and of those that wrote."""
    acted = [r for r in runs if r.acted]
    wrote = [r for r in acted if r.wrote]
    rules = Counter(r.result.gate.rule if r.result.gate else "none" for r in runs)
    return {
        "requests": len(runs),
        "acted": len(acted),
        "right": sum(r.right for r in runs),
        "handed_back": sum(not r.acted for r in runs),
        "share_acted": round(len(acted) / len(runs), 3) if runs else None,
        "accuracy_of_acted": round(sum(r.right for r in acted) / len(acted), 3) if acted else None,
        "acted_writing": len(wrote),
        "accuracy_of_acted_writing": round(sum(r.right for r in wrote) / len(wrote), 3) if wrote else None,
        "broke_the_rule": [r.row["text"] for r in runs if r.breaks_the_rule],
        "rules": dict(rules),
    }
