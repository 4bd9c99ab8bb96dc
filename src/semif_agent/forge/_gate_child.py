"""The behavioural gate's child process: run one body on sample requests and report as JSON.

Run as a script inside the skill sandbox: ``_gate_child.py JOB_FILE``; writes
one JSON line on stdout. Never imported by the host.
"""

from __future__ import annotations

import json
import sys
import traceback


def main() -> None:
    with open(sys.argv[1], encoding="utf-8") as handle:
        job = json.load(handle)
    from pathlib import Path

    from semif_agent.engine import ScriptedEngine
    from semif_agent.errors import BudgetExceeded, WriteRefused
    from semif_agent.loop.context import BudgetedEngine
    from semif_agent.loop.guard import guarded
    from semif_agent.skills import ActionContext, ActionResult, Prediction, Request
    from semif_agent.tree.bodies import load_body
    from semif_agent.tree.manifests import SkillManifest

    manifest = SkillManifest(name=job["name"], category=job["category"], description="", body_path=Path(job["body"]),
                             cost_budget=job["budget"])
    roots = tuple(Path(r) for r in job["write_roots"])
    results = []
    try:
        body = load_body(manifest)
    except Exception as exc:  # noqa: BLE001 - reported, not raised
        print(json.dumps({"loaded": False, "error": f"{type(exc).__name__}: {exc}"}))
        return
    for sample in job["samples"]:
        for answer in ("first", "none"):
            scripted = ScriptedEngine(fn=_answer(answer), model=job.get("model"))
            scripted.name = job.get("engine") or scripted.name  # the workspace engine's name, as in a real run
            engine = BudgetedEngine(scripted, job["budget"], job["name"])
            request = Request(sample)
            ctx = ActionContext(engine=engine, config=dict(job["config"]), write_roots=roots, skill=job["name"],
                                run_id=request.id)
            outcome = {"request": sample, "answers": answer, "ok": True, "problem": ""}
            try:
                with guarded(roots, job["name"]):
                    prediction = body.predict(ctx, request)
                    if not isinstance(prediction, Prediction):
                        raise TypeError(f"predict returned {type(prediction).__name__}, not Prediction")
                    action = body.act(ctx, request, prediction)
                    if not isinstance(action, ActionResult):
                        raise TypeError(f"act returned {type(action).__name__}, not ActionResult")
                if engine.overrun:
                    raise BudgetExceeded(f"made more than {job['budget']} engine calls")
            except WriteRefused as exc:
                outcome.update(ok=False, kind="write", problem=str(exc))
            except BudgetExceeded as exc:
                outcome.update(ok=False, kind="budget", problem=str(exc))
            except TypeError as exc:
                outcome.update(ok=False, kind="types", problem=str(exc))
            except Exception as exc:  # noqa: BLE001
                frame = traceback.extract_tb(exc.__traceback__)[-1]
                outcome.update(ok=False, kind="error", problem=f"{type(exc).__name__} at line {frame.lineno}: {exc}")
            outcome["engine_calls"] = engine.calls
            results.append(outcome)
    print(json.dumps({"loaded": True, "results": results}))


def _answer(mode: str):
    """The first real option (or ``none``), with a score and probability for every option, as engines give."""

    def pick(request):
        ids = request.option_ids
        chosen = "none" if mode == "none" and "none" in ids else next((i for i in ids if i != "none"), ids[0])
        rest = (1.0 - 0.7) / max(len(ids) - 1, 1)
        return {"selected": chosen, "scores": {i: 0.62 if i == chosen else 0.21 for i in ids},
                "probabilities": {i: 0.7 if i == chosen else rest for i in ids}}

    return pick


if __name__ == "__main__":
    main()
