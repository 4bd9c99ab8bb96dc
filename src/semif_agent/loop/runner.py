"""The skill loop: route -> observe -> predict -> act -> observe -> assess, every decision logged."""

from __future__ import annotations

import contextlib
import warnings
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from .._sync import run_sync
from ..contract.admitted import verify_body
from ..engine.base import Engine, check_engine, decide
from ..engine.decisions import DecisionRequest, DecisionResult
from ..engine.registry import create_engine, default_engine_name
from ..errors import SemifError, SkillError, check_type
from ..records import DecisionLog, DecisionRow, OutcomeRow
from ..routing.create import create_strategy, strategy_spec
from ..routing.scoring import can_score
from ..routing.tune import routing_settings
from ..skills import ActionResult, Prediction, Request
from ..tree.manifests import SkillManifest
from ..tree.router import Route
from ..tree.tree import SkillTree
from ..workspace import Workspace
from .assess import Assessment, assessment_request, needs_judge, settled, weigh
from .confined import run_confined
from .context import BudgetedEngine
from .evidence import gather_evidence
from .observe import Changes, Observation, diff, observe
from .skill_md_run import SkillMdExecutor, SkillMdOutcome, SkillMdRun, show_instructions

DEFAULT_BODY_TIMEOUT = 120.0
OUTPUT_KEPT = 2000  # characters of a body's printed output kept in its outcome row


@dataclass
class RunResult:
    """Everything one run did. ``rows`` are the decision rows it logged, in order."""

    run_id: str
    request: Request
    route: Route
    action: ActionResult
    assessment: Assessment
    prediction: Prediction | None = None
    changes: Changes = field(default_factory=Changes)
    rows: list[dict[str, Any]] = field(default_factory=list)
    log_path: Path | None = None
    error: str | None = None
    instructions: str | None = None  # a SKILL.md skill's instructions, when they were handed back rather than followed

    @property
    def skill(self) -> str | None:
        return self.route.skill.name if self.route.skill else None

    def to_dict(self) -> dict[str, Any]:
        return {
            "run_id": self.run_id,
            "request": {"id": self.request.id, "text": self.request.text},
            "skill": self.skill,
            "route_reason": self.route.reason,
            "prediction": self.prediction.text if self.prediction else None,
            "action_log": self.action.action_log,
            "new_state": self.action.new_state,
            "changes": self.changes.to_dict(),
            "assessment": self.assessment.to_dict(),
            "error": self.error,
            "instructions": self.instructions,
            "decisions": [r for r in self.rows if r.get("kind") != "outcome"],
            "log": str(self.log_path) if self.log_path else None,
        }


def default_judge(engine: Engine, settings: dict[str, Any]) -> Engine:
    """The LLM judge when decisions come from a model (its ``[engine.judge]`` table applies), else the engine."""
    if getattr(engine, "name", "") != "llm":
        return engine
    from ..llm.judge import create_judge

    return create_judge(settings)


def default_strategy(engine: Engine) -> str:
    """``examples`` for engines that can score many options at once (local, lexical), else the chain."""
    return "examples" if can_score(engine) else "chain"


class SkillRunner:
    """Runs requests against a workspace's skill tree.

    ``engine`` answers routing and the skills' sub-decisions; ``judge`` answers
    the assessment (default: the same engine, or the LLM judge for an LLM engine). Both default to the workspace's
    settings. ``strategy`` and ``threshold`` choose how the tree is walked
    (default: ``[routing]`` in semif.toml, else what ``semif eval --tune``
    stored, else :func:`default_strategy`). Decision rows are appended to the log as they are
    made, so a crash mid-run keeps everything decided so far.

    The tree holds the workspace's code skills and SKILL.md skills. A route
    that ends at a SKILL.md skill is followed by ``skill_md_executor`` (see
    :mod:`.skill_md_run`; default: show its instructions, or run its script
    when ``allow_scripts``, default ``[skills] allow_scripts``).

    ``act_lock`` (an async context manager) is held while a routed request is
    run and assessed: runners in several processes sharing one workspace hold
    one lock, so the changes each run observes in the data dirs are its own.
    """

    def __init__(
        self,
        workspace: Workspace,
        *,
        engine: Engine | None = None,
        judge: Engine | None = None,
        tree: SkillTree | None = None,
        log: DecisionLog | None = None,
        body_timeout: float | None = None,
        on_row: Callable[[dict[str, Any]], None] | None = None,
        strategy: str | None = None,
        threshold: float | None = None,
        skill_md_executor: SkillMdExecutor | None = None,
        allow_scripts: bool | None = None,
        act_lock: contextlib.AbstractAsyncContextManager[Any] | None = None,
    ) -> None:
        check_type("workspace", workspace, Workspace)
        for engine_given in (engine, judge):
            if engine_given is not None:
                check_engine(engine_given)
        self.workspace = workspace
        self.act_lock = act_lock
        settings = workspace.engine_settings
        engine_name = engine.name if engine is not None else (settings.get("name") or default_engine_name())
        routing = routing_settings(workspace, engine_name)
        strategy = strategy or routing.get("strategy")
        threshold = threshold if threshold is not None else routing.get("threshold")
        temperature = routing.get("temperature")
        if engine is None:
            if strategy in ("chain", "shortlist") and temperature is not None:
                settings.setdefault("temperature", temperature)  # there, the engine's own probabilities
            if strategy == "chain" and threshold is not None:
                settings.setdefault("threshold", threshold)  # the chain's cut is the engine's own
            engine = create_engine(engine_name, settings)
        self.engine = engine
        strategy = strategy or default_strategy(engine)
        self.judge = judge or default_judge(engine, settings)
        self.tree = tree or SkillTree.for_workspace(
            workspace, embed=getattr(getattr(engine, "embedder", None), "embed", None)
        )
        self.skill_md_executor = skill_md_executor or show_instructions
        self.allow_scripts = bool(
            workspace.settings["skills"].get("allow_scripts", False) if allow_scripts is None else allow_scripts
        )
        settings = workspace.settings["log"]
        self.log = log or DecisionLog(
            workspace.log_path, fsync=bool(settings.get("fsync")), enabled=bool(settings.get("enabled", True))
        )
        timeout = workspace.settings["skills"].get("timeout", DEFAULT_BODY_TIMEOUT)
        self.body_timeout = float(body_timeout if body_timeout is not None else timeout)
        self.on_row = on_row
        self.strategy = self._strategy(strategy, threshold, temperature)

    def _strategy(self, name: str, threshold: float | None, temperature: float | None) -> Any:
        """The routing strategy; ``learned`` with the workspace's trained router, or (said once) the default without one."""
        router = None
        if "router" in strategy_spec(name).needs:
            from ..routing.learned import RouterMismatch, stored_router

            try:
                router = stored_router(self.workspace)
                if router is None:
                    raise RouterMismatch("the workspace has no learned router (semif train makes one)")
                router.check(self.tree, self.engine if self.engine.name == "local" else create_engine("local"))
            except RouterMismatch as exc:
                warnings.warn(f"{exc}; routing the untrained way meanwhile", RuntimeWarning, stacklevel=3)
                name, router = default_strategy(self.engine), None
        return create_strategy(
            name, self.tree, self.engine, threshold=threshold, temperature=temperature, router=router
        )

    def run(self, text: str | Request, *, skill: str | None = None) -> RunResult:
        return run_sync(self.arun(text, skill=skill))

    async def arun(self, text: str | Request, *, skill: str | None = None) -> RunResult:
        """Route ``text`` (or go straight to ``skill``), run the leaf, assess it."""
        request = text if isinstance(text, Request) else Request(text)
        run = _Run(self, request)
        if skill is not None:
            route = Route(skill=self.tree.get(skill), reason="chosen by the caller")
        else:
            route = await self.strategy.aroute(request.text)
            for step in route.decisions:
                run.log(step.request, step.result, kind="route", level=step.level)
        async with self.act_lock or contextlib.nullcontext():
            return await run.execute(route)


class _Run:
    """The state of one run: its id, step counter and logged rows."""

    def __init__(self, runner: SkillRunner, request: Request) -> None:
        self.runner = runner
        self.request = request
        self.run_id = request.id
        self.rows: list[dict[str, Any]] = []
        self.skill: str | None = None
        self.output: dict[str, str] = {}  # what a confined body printed, kept apart from the host's output

    def log(self, asked: DecisionRequest, answer: DecisionResult, *, kind: str, **extra: Any) -> None:
        row = DecisionRow.of(
            run_id=self.run_id,
            step=len(self.rows) + 1,
            kind=kind,
            skill=self.skill,
            request=asked,
            result=answer,
            request_id=self.request.id,
            **extra,
        ).to_row()
        self._append(row)

    def _append(self, row: dict[str, Any]) -> None:
        self.runner.log.append(row)
        self.rows.append(row)
        if self.runner.on_row is not None:
            self.runner.on_row(row)

    async def execute(self, route: Route) -> RunResult:
        text = self.request.text
        if route.skill is None:
            action = ActionResult(action_log=f"No skill handled the request: {route.reason}.", new_state=text)
            reason = route.reason or "no skill fits the request"
            return self.finish(
                route, action, settled("unclear", reason, gather_evidence(text, action, Changes()), "no skill")
            )
        skill = route.skill
        self.skill = skill.name
        if skill.is_skill_md:
            return await self.run_skill_md(route, skill)
        if skill.is_stub:
            action = ActionResult(
                action_log=f"{skill.name}: this skill is a stub (no body at {skill.body_path}); nothing was done.",
                new_state=text,
            )
            evidence = gather_evidence(text, action, Changes(), skill=skill)
            return self.finish(route, action, settled("failure", "the skill is a stub", evidence, "stub"))
        try:
            source = verify_body(self.runner.workspace, skill)  # a body changed since it passed is checked again
        except SkillError as exc:
            action = ActionResult(action_log=f"{skill.name}: cannot load the skill: {exc}", new_state=text)
            assessment = await self.assess(action, Changes(), error=str(exc), skill=skill)
            return self.finish(route, action, assessment, error=str(exc))
        return await self.run_body(route, skill, source)

    async def run_body(self, route: Route, skill: SkillManifest, source: str) -> RunResult:
        """Run the body (``source``, as verified) in a confined child; its engine calls are answered, counted and logged here."""
        engine = BudgetedEngine(self.runner.engine, skill.cost_budget, skill.name)
        before = self._observe()
        outcome = await run_confined(
            skill,
            source,
            self.request,
            workspace=self.runner.workspace,
            engine=engine,
            run_id=self.run_id,
            timeout=self.runner.body_timeout,
        )
        prediction = Prediction(outcome.prediction) if outcome.prediction is not None else None
        error = outcome.error
        if outcome.action is not None:
            action = ActionResult(action_log=outcome.action[0], new_state=outcome.action[1])
        else:
            action = ActionResult(action_log=f"{skill.name}: {error}", new_state=self.request.text)
        self.output = {k: v for k, v in (("stdout", outcome.stdout), ("stderr", outcome.stderr)) if v}
        for index, (asked, answer) in enumerate(engine.decisions):
            self.log(asked, answer, kind="predict" if index < outcome.predicted else "act")
        if engine.overrun and error is None:
            error = f"exceeded its cost_budget of {skill.cost_budget} engine calls"
            action = ActionResult(action_log=f"{skill.name}: {error} ({action.action_log})", new_state=action.new_state)
        changes = diff(before, self._observe(since=before))
        assessment = await self.assess(action, changes, error=error, skill=skill, decisions=engine.decisions)
        return self.finish(route, action, assessment, prediction=prediction, changes=changes, error=error)

    async def run_skill_md(self, route: Route, skill: SkillManifest) -> RunResult:
        """Follow a SKILL.md skill with the runner's executor, then observe and assess like any run."""
        before = self._observe()
        run = SkillMdRun(
            self.request,
            skill,
            self.runner.workspace,
            self.run_id,
            allow_scripts=self.runner.allow_scripts,
            log_decision=lambda asked, answer, kind: self.log(asked, answer, kind=kind),
        )
        error: str | None = None
        try:
            outcome = await self.runner.skill_md_executor(run)
        except Exception as exc:  # noqa: BLE001 - a failure to follow the skill becomes a logged result, never a crash
            error = f"following the skill failed: {type(exc).__name__}: {exc}"
            outcome = SkillMdOutcome(ActionResult(f"{skill.name}: {error}", self.request.text))
        changes = diff(before, self._observe(since=before))
        if (
            outcome.instructions is not None and not error
        ):  # handed to the user: nobody acted, so there is nothing to judge yet
            evidence = gather_evidence(self.request.text, outcome.action, changes, skill=skill)
            assessment = settled(
                "unclear", "its instructions were handed back; nobody followed them yet", evidence, "instructions"
            )
        else:
            assessment = await self.assess(outcome.action, changes, error=error, skill=skill, judge=outcome.judge)
        return self.finish(
            route, outcome.action, assessment, changes=changes, error=error, instructions=outcome.instructions
        )

    def _observe(self, since: Observation | None = None) -> Observation:
        """The data dirs now, less the workspace's own records (the decision and model-call logs)."""
        ws = self.runner.workspace
        return observe(
            ws.write_roots, ignore=(self.runner.log.path, ws.model_calls_path), base=ws.root, texts=True, since=since
        )

    async def assess(
        self,
        action: ActionResult,
        changes: Changes,
        *,
        error: str | None = None,
        skill: SkillManifest | None = None,
        decisions: Iterable[tuple[DecisionRequest, DecisionResult]] = (),
        judge: Engine | None = None,
    ) -> Assessment:
        """The run's label: the judge's verdict (``judge``, else the runner's) weighed against what the run did."""
        evidence = gather_evidence(self.request.text, action, changes, error=error, skill=skill, decisions=decisions)
        if not needs_judge(evidence):
            return weigh(evidence)
        asked = assessment_request(self.request.text, action.action_log, changes)
        try:
            answer = await decide(judge or self.runner.judge, asked)
        except SemifError as exc:
            return weigh(evidence, judge_error=str(exc))
        self.log(asked, answer, kind="assess")
        return weigh(evidence, (asked, answer))

    def finish(
        self,
        route: Route,
        action: ActionResult,
        assessment: Assessment,
        *,
        prediction: Prediction | None = None,
        changes: Changes | None = None,
        error: str | None = None,
        instructions: str | None = None,
    ) -> RunResult:
        changes = changes or Changes()
        self._append(
            OutcomeRow(
                self.run_id,
                skill=self.skill,
                request_id=self.request.id,
                request=self.request.text,
                outcome=assessment.label,
                reason=assessment.reason,
                prediction=prediction.text if prediction is not None else None,
                action_log=action.action_log,
                new_state=action.new_state,
                changes=changes.to_dict(),
                diffs=changes.diffs or None,
                error=error,
                evidence=assessment.evidence,
                output={k: v[:OUTPUT_KEPT] for k, v in self.output.items()} or None,
            ).to_row()
        )
        return RunResult(
            run_id=self.run_id,
            request=self.request,
            route=route,
            action=action,
            assessment=assessment,
            prediction=prediction,
            changes=changes,
            rows=self.rows,
            log_path=self.runner.log.path,
            error=error,
            instructions=instructions,
        )
