"""Helpers for the starter tests: load a workspace's skill bodies and run them, checking the contract."""

from __future__ import annotations

import importlib.util
import json
from dataclasses import dataclass
from pathlib import Path
from types import ModuleType

from semif_agent.engine import ScriptedEngine
from semif_agent.skills import ActionContext, ActionResult, DecisionRequest, DecisionResult, Prediction, Request
from semif_agent.workspace import Workspace

# A Wednesday morning: calendar skills read the clock from request.meta["now"].
NOW = "2025-03-12T10:00:00"


@dataclass
class Run:
    request: Request
    prediction: Prediction
    result: ActionResult
    engine: ScriptedEngine


def manifests(ws: Workspace) -> dict[str, dict]:
    doc = json.loads(ws.categories_path.read_text(encoding="utf-8"))
    return {s["name"]: s for s in doc["skills"]}


def body_path(ws: Workspace, name: str) -> Path:
    category, leaf = name.split(".", 1)
    return ws.bodies_dir / category / f"{leaf}.py"


def load_body(ws: Workspace, name: str) -> ModuleType:
    spec = importlib.util.spec_from_file_location(name, body_path(ws, name))
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


class SkillRunner:
    """Runs a skill of a workspace: predict, then act, checking the contract on the way."""

    def __init__(self, ws: Workspace) -> None:
        self.ws = ws

    def context(self, name: str, engine: ScriptedEngine) -> ActionContext:
        return ActionContext(engine=engine, config=self.ws.skill_config(), write_roots=self.ws.write_roots, skill=name)

    def __call__(self, name: str, text: str, replies=(), *, fn=None, meta=None) -> Run:
        body = load_body(self.ws, name)
        engine = ScriptedEngine(replies, fn=fn)
        ctx = self.context(name, engine)
        request = Request(text, meta={"now": NOW, **(meta or {})})
        prediction = body.predict(ctx, request)
        assert isinstance(prediction, Prediction)
        assert len(prediction.decisions) == len(engine.calls), "every engine call is returned in decisions"
        for decision, answer in prediction.decisions:
            assert isinstance(decision, DecisionRequest) and isinstance(answer, DecisionResult)
            assert decision.has_none, "every decision offers 'none'"
        result = body.act(ctx, request, prediction)
        assert isinstance(result, ActionResult)
        assert result.action_log.startswith(f"{name}: "), result.action_log
        assert isinstance(result.new_state, str) and result.new_state
        assert len(engine.calls) <= manifests(self.ws)[name]["cost_budget"]
        if replies:
            assert engine.remaining == 0, "the skill asked fewer decisions than scripted"
        return Run(request, prediction, result, engine)
