"""A body speaking for the host, or asking too much of it: each run is a logged failure or a refusal it can handle.

The body holds its channel's write end (found here as an attacker would, among
the process's objects), so it can write forged results, control lines, lines
too deep or too long. Each run must end with its outcome row, change nothing
outside, and leave the warm worker serving the next run. Its engine requests
are bounded: too many options or too long a text is refused with an error
naming the cap, before the engine works; past its timeout the host answers no more.
"""

from __future__ import annotations

import asyncio
import json
import subprocess
import sys
import time

import pytest

from semif_agent._sync import run_sync
from semif_agent.engine import ScriptedEngine
from semif_agent.loop.confined import BodyRun, pool_for_this_loop
from semif_agent.loop.context import BudgetedEngine
from semif_agent.records import OUTCOME_KIND, DecisionLog, OutcomeRow

from ._hostile import body

CHANNEL = 'import gc\nch = next(o for o in gc.get_objects() if type(o).__name__ == "Channel")'

FORGED = {
    "a control line": "ch._write(b'E\"disk\"\\n')\ntime.sleep(2)",
    "a late confinement report": 'ch._write(b\'C{"filesystem": "none"}\\n\')\ntime.sleep(2)',
    "a result of the wrong shape": "ch.send_value({'ok': True})\nos._exit(0)",
    "a result without its action": "ch.send_value({'ok': True, 'prediction': 'x'})\nos._exit(0)",
    "a failure without its phase": "ch.send_value({'ok': False})\nos._exit(0)",
    "a second result": "ch.send_value({'ok': True, 'prediction': 'x', 'action': {'action_log': 'forged', 'new_state': 'x'}})",
    "a result for another call": 'ch._write(b\'V{"call": 987654, "value": {"ok": true}}\\n\')\ntime.sleep(2)',
    "a line 100,000 deep": "ch._write(b'A' + b'[' * 100000 + b']' * 100000 + b'\\n')\ntime.sleep(2)",
    "a 50 MB line": "ch._write(b'A\"' + b'x' * (50 << 20) + b'\"\\n')\ntime.sleep(2)",
    "garbage bytes": "ch._write(bytes(range(256)) + b'\\n')\ntime.sleep(2)",
}

CALM = 'return ActionResult(action_log="calm", new_state="calm")'


def worker_pids() -> list[int]:
    """The process ids of this thread's warm body workers (its event loop's pool)."""

    async def pids() -> list[int]:
        return pool_for_this_loop().pids

    return run_sync(pids())


@pytest.mark.parametrize("forgery", list(FORGED))
def test_a_body_cannot_speak_for_the_host(attack, forgery: str) -> None:
    result, ws, changed = attack(CHANNEL + "\n" + FORGED[forgery])
    assert result.assessment.label == "failure" and changed == set()
    assert "the skill's process sent a malformed message" in (result.error or ""), result.error
    assert "forged" not in result.action.action_log
    rows = [r for r in DecisionLog(ws.log_path).read() if r.run_id == result.run_id]
    assert isinstance(rows[-1], OutcomeRow) and rows[-1].error == result.error
    workers = worker_pids()
    calm, _, _ = attack(CALM)
    assert calm.error is None and calm.action.action_log == "calm"
    assert worker_pids() == workers  # the same warm worker served the next run


def test_a_forged_result_does_not_crash_semif_run(make_workspace) -> None:
    forged = body(CHANNEL + "\nch.send_value({'ok': True, 'prediction': 'x'})\nos._exit(0)")
    root = make_workspace({"evil.act": forged}, admitted=True, settings='\n[config]\noutside = "/x"\n')
    command = ["run", "do it", "--skill", "evil.act", "-w", str(root), "--engine", "lexical", "--json"]
    out = subprocess.run([sys.executable, "-m", "semif_agent", *command], capture_output=True, text=True, timeout=120)
    assert out.returncode == 0 and "Traceback" not in out.stderr, out.stderr
    data = json.loads(out.stdout)
    assert data["assessment"]["label"] == "failure" and "malformed message" in data["error"]
    rows = [json.loads(line) for line in (root / "data" / "decisions.jsonl").read_text().splitlines()]
    assert rows[-1]["kind"] == "outcome" and rows[-1]["run_id"] == data["run_id"]


class CountingEngine(ScriptedEngine):
    """Picks the first option, and counts the bodies' decisions it was asked to make (their question is ``q``)."""

    def __init__(self) -> None:
        super().__init__(fn=lambda request: request.option_ids[0])
        self.asked = 0

    def call(self, request):
        self.asked += request.question == "q"
        return super().call(request)


ASK = """
from semif_agent.skills import DecisionRequest, Option
def attempt(make):
    try:
        return f"answered: {make()}"
    except Exception as exc:
        return f"{type(exc).__name__}: {exc}"
"""

TOO_MUCH = {
    "60,000 options": (
        'attempt(lambda: ctx.engine.call(DecisionRequest("s", "q", [Option(f"o{n}") for n in range(60000)])))',
        "DecisionTooLarge: a decision offers at most 256 options (MAX_OPTIONS), not 60000",
    ),
    "60,000 options sent past the body's check": (
        "attempt(lambda: ch.ask({'kind': 'engine', 'request': "
        "{'state': 's', 'question': 'q', 'options': [{'id': 'x'}] * 60000}}))",
        "answered: {'error': {'type': 'size', 'message': 'a decision offers at most 256 options (MAX_OPTIONS)",
    ),
    "60,000 options all alike": (
        'attempt(lambda: DecisionRequest("s", "q", [Option("same")] * 60000))',
        "InvalidArgumentError: duplicate option ids: same",
    ),
    "a state of 70,000 characters": (
        'attempt(lambda: ctx.engine.call(DecisionRequest("s" * 70000, "q", [Option("a")])))',
        "at most 65536 characters (MAX_STATE_CHARS), not 70000",
    ),
    "a long description sent past the body's check": (
        "attempt(lambda: ch.ask({'kind': 'engine', 'request': "
        "{'state': 's', 'question': 'q', 'options': [{'id': 'a', 'description': 'd' * 5000}]}}))",
        "(MAX_DESCRIPTION_CHARS), not 5000",
    ),
    "options that are not options": (
        "attempt(lambda: ch.ask({'kind': 'engine', 'request': {'state': 's', 'question': 'q', 'options': [[1], 2]}}))",
        "not a decision request: each option is {id, description}, both text",
    ),
}


@pytest.mark.parametrize("request_kind", list(TOO_MUCH))
def test_an_engine_request_over_a_cap_is_refused_naming_it(attack, request_kind: str) -> None:
    line, said = TOO_MUCH[request_kind]
    engine = CountingEngine()
    lines = CHANNEL + ASK + f"said = {line}\nreturn ActionResult(action_log=said[:300], new_state='x')"
    result, _, changed = attack(lines, engine=engine)
    assert result.error is None and said in result.action.action_log, result.action.action_log
    assert engine.asked == 0 and changed == set()


def test_a_body_looping_on_the_engine_is_stopped_at_its_timeout(attack) -> None:
    engine = CountingEngine()
    lines = ASK + (
        'asked = DecisionRequest("s", "q", [Option("a"), Option("b")])\n'
        "while True:\n    attempt(lambda: ctx.engine.call(asked))"
    )
    result, ws, _ = attack(lines, timeout=2, engine=engine)
    assert result.assessment.label == "failure" and "did not finish in time" in result.error
    asked = engine.asked
    assert asked <= 3  # the budget: every later request was refused without the engine
    time.sleep(0.5)
    assert engine.asked == asked  # nothing answered for it once it ended
    rows = [r for r in DecisionLog(ws.log_path).read() if r.run_id == result.run_id]
    assert rows[-1].kind == OUTCOME_KIND


def host_side(timeout: float = 60.0) -> tuple[BodyRun, CountingEngine]:
    engine = CountingEngine()
    return BodyRun(BudgetedEngine(engine, budget=5), timeout), engine


def test_the_host_refuses_a_request_over_a_cap_before_the_engine_sees_it() -> None:
    run, engine = host_side()
    many = {"state": "s", "question": "q", "options": [{"id": "x"}] * 60_000}
    reply = asyncio.run(run.on_message({"kind": "engine", "request": many}))
    assert reply["error"]["type"] == "size" and "(MAX_OPTIONS)" in reply["error"]["message"]
    fine = {"state": "s", "question": "q", "options": [{"id": "a"}, {"id": "b", "description": "bee"}]}
    assert asyncio.run(run.on_message({"kind": "engine", "request": fine}))["result"]["selected"] == "a"
    assert engine.asked == 1 and run.engine.calls == 1


@pytest.mark.parametrize("request_data", [None, "text", [], {"state": 1, "question": "q", "options": []}])
def test_the_host_refuses_what_is_not_a_decision_request(request_data) -> None:
    run, engine = host_side()
    reply = asyncio.run(run.on_message({"kind": "engine", "request": request_data}))
    assert reply["error"]["type"] == "decision" and "not a decision request" in reply["error"]["message"]
    assert engine.asked == 0


def test_the_host_answers_no_request_past_the_runs_timeout() -> None:
    run, engine = host_side(timeout=0)
    fine = {"state": "s", "question": "q", "options": [{"id": "a"}]}
    reply = asyncio.run(run.on_message({"kind": "engine", "request": fine}))
    assert reply["error"] == {"type": "timeout", "message": "the run is out of time: no more engine calls"}
    assert engine.asked == 0
