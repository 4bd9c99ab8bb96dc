"""The behavioural gate: run a body, in a separate limited process, on sample requests.

The body runs exactly as a real run runs it (:mod:`semif_agent.loop.confined`:
a confined child of the sandbox's warm workers, the engine answered by the
host), against a throw-away copy of the workspace, with the scripted engine
answering each decision twice (the first real option, then ``none``). It must return the
right types, write only under the write dirs (the write guard names the
offending path) and stay within its ``cost_budget``; a crash, a hang or a
memory blow-up is a failure too. The host's data is never touched.

What the body can read matches a real run: the copy is a folder named like
the workspace (no trace of the gate in any path), with its settings, its
manifests and skill bodies (the candidate at its own body path), a copy of
the write dirs (files, folders and the links that stay below their folder,
from directory descriptors: never a FIFO, socket or device node, which would
hang the copy or copy without end, never a link out), and its read-only inputs (``[paths]`` entries outside the
write dirs) linked at their usual places; ``ctx.config`` has the same keys,
``ctx.run_id`` is a run id like any other, the engine bears the workspace
engine's name and model, and ``ctx`` is the same class with the same
attributes. Sample runs still differ in what no body should look at (the
time, the process, the folder above the workspace).
"""

from __future__ import annotations

import shutil
import tempfile
from collections.abc import Callable
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import TYPE_CHECKING

from .._beneath import TreeTooLarge
from .._files import copy_tree
from ..contract import Violation
from ..tree.manifests import SkillManifest, body_path_for
from ..workspace import Workspace

if TYPE_CHECKING:
    from .._json import JsonObject
    from ..engine.base import Engine
    from ..engine.decisions import DecisionRequest, DecisionResult
    from ..loop.confined import BodyOutcome
    from ..loop.context import BudgetedEngine

GATE_TIMEOUT = 15.0  # seconds each sample run may take


@dataclass
class GateReport:
    """Whether the body passed, with a row per sample run (``request``, ``answers``, ``ok``, ``problem``,
    ``engine_calls``, and the ``kind`` of a failure), or the ``error`` that kept the gate from running it."""

    ok: bool
    results: list[JsonObject] = field(default_factory=list)
    error: str = ""

    def violations(self) -> list[Violation]:
        if self.error:
            return [Violation("gate", 1, self.error)]
        kinds = {
            "write": "writes outside the data dirs",
            "budget": "exceeds its cost_budget",
            "types": "returns the wrong types",
            "error": "raises",
        }
        out = []
        for result in self.results:
            if not result["ok"]:
                kind = result.get("kind")
                what = kinds.get(kind, "fails") if isinstance(kind, str) else "fails"
                out.append(
                    Violation(
                        "gate",
                        1,
                        f"{what} on {result['request']!r} (engine answering {result['answers']}): {result['problem']}",
                    )
                )
        return out

    def to_dict(self) -> JsonObject:
        return {"ok": self.ok, "results": self.results, "error": self.error}


async def run_gate(
    source: str,
    *,
    name: str,
    category: str,
    budget: int,
    samples: list[str],
    workspace: Workspace,
    timeout: float = GATE_TIMEOUT,
    engine_name: str | None = None,
    engine_model: str | None = None,
) -> GateReport:
    """Run ``source`` on ``samples`` confined, against a copy of ``workspace``, as a real run would run it.

    ``engine_name``/``engine_model`` are what the body's engine says it is
    (default: the workspace's engine); ``timeout`` is each sample run's.
    """
    from ..engine.scripted import ScriptedEngine
    from ..loop.confined import run_confined
    from ..loop.context import BudgetedEngine
    from ..skills import Request

    with tempfile.TemporaryDirectory() as tmp:
        copy = Path(tmp) / workspace.root.name
        try:
            moved, _ = _copy_workspace(workspace, copy)
        except TreeTooLarge as exc:
            return GateReport(False, error=f"the workspace's write dirs cannot be copied for the gate: {exc}")
        body = Path(moved(str(body_path_for(workspace.bodies_dir, category, name))))
        body.parent.mkdir(parents=True, exist_ok=True)
        body.write_text(source, encoding="utf-8")
        sandbox = Workspace.load(copy)
        warm = workspace.settings.skills.warm_processes
        config = {k: moved(v) if isinstance(v, str) else v for k, v in workspace.skill_config().items()}
        skill = SkillManifest(name=name, category=category, description="", cost_budget=budget, body_path=body)
        results: list[JsonObject] = []
        for sample in samples:
            for answers in ("first", "none"):
                posing = _Posing(
                    ScriptedEngine(fn=_answer(answers)), engine_name or _engine_name(workspace), engine_model
                )
                engine = BudgetedEngine(posing, budget, name)
                request = Request(sample)
                outcome = await run_confined(
                    skill,
                    source,
                    request,
                    workspace=sandbox,
                    engine=engine,
                    run_id=request.id,
                    timeout=timeout,
                    config=config,
                    warm=warm,  # as real runs: the samples one after another in one process (its own copy's)
                )
                if outcome.kind == "timeout":
                    return GateReport(False, error=f"the body did not finish a sample run within {timeout:g} s")
                results.append(_result(sample, answers, outcome, engine))
    return GateReport(all(r["ok"] for r in results), results)


class _Posing:
    """An engine that answers as ``engine`` does but bears the workspace engine's name and model."""

    def __init__(self, engine: Engine, name: str, model: str | None) -> None:
        self._engine, self.name, self.model = engine, name, model

    def call(self, request: DecisionRequest) -> DecisionResult:
        return replace(self._engine.call(request), engine=self.name, model=self.model)


def _answer(mode: str) -> Callable[[DecisionRequest], str]:
    """The first real option, or ``none`` when offered."""

    def pick(request: DecisionRequest) -> str:
        ids = request.option_ids
        if mode == "none" and "none" in ids:
            return "none"
        return next((i for i in ids if i != "none"), ids[0])

    return pick


_KINDS = {"write": "write", "budget": "budget", "contract": "types", "load": "error", "exception": "error"}


def _result(sample: str, answers: str, outcome: BodyOutcome, engine: BudgetedEngine) -> JsonObject:
    result: JsonObject = {
        "request": sample,
        "answers": answers,
        "ok": True,
        "problem": "",
        "engine_calls": engine.calls,
    }
    if engine.overrun:
        result.update(ok=False, kind="budget", problem=f"made more than {engine.budget} engine calls")
    elif outcome.error is not None:
        result.update(ok=False, kind=_KINDS.get(outcome.kind, "error"), problem=outcome.message)
    return result


def _copy_workspace(workspace: Workspace, dest: Path) -> tuple[Callable[[str], str], list[str]]:
    """Copy ``workspace`` to ``dest``: settings, manifests, bodies and write dirs copied, read-only inputs linked.

    Returns a function mapping an original path to its place in the copy
    (a data dir or write dir outside the workspace goes under ``dest/.outside``;
    other paths are kept), and the originals the links point to.
    """
    places = {workspace.root: dest}
    if not _inside(workspace.data_dir, workspace.root):
        places[workspace.data_dir] = dest / ".outside" / "data"
    for root in workspace.write_roots:
        if not _inside(root, workspace.root):
            places[root] = dest / ".outside" / root.name

    def moved(value: str) -> str:
        path = Path(value)
        for original, place in sorted(places.items(), key=lambda item: -len(item[0].parts)):
            if path == original or original in path.parents:
                return str(place / path.relative_to(original))
        return value

    dest.mkdir(parents=True)
    shutil.copy2(workspace.settings_file, dest / workspace.settings_file.name)
    data = Path(moved(str(workspace.data_dir)))
    data.mkdir(parents=True, exist_ok=True)
    if workspace.categories_path.is_file():
        shutil.copy2(workspace.categories_path, data / workspace.categories_path.name)
    if workspace.bodies_dir.is_dir():
        copy_tree(workspace.bodies_dir, data / workspace.bodies_dir.name, skip=("__pycache__", "*.pyc", ".*"))
    for root in workspace.write_roots:
        target = Path(moved(str(root)))
        if root.is_dir():
            copy_tree(root, target, skip=(".*",))
        else:
            target.mkdir(parents=True, exist_ok=True)
    linked = []
    for key, value in workspace.skill_config().items():
        if key == "workspace" or not isinstance(value, str):
            continue
        original, copied = Path(value), Path(moved(value))
        if copied == original or copied.exists() or copied.is_symlink() or not original.exists():
            continue
        copied.parent.mkdir(parents=True, exist_ok=True)
        copied.symlink_to(original, target_is_directory=original.is_dir())
        linked.append(value)
    return moved, linked


def _inside(path: Path, root: Path) -> bool:
    return path == root or root in path.parents


def _engine_name(workspace: Workspace) -> str:
    from ..engine.registry import default_engine_name

    return workspace.settings.engine.name or default_engine_name()
