"""End to end: spans exported over OTLP to a real receiver people use (Arize Phoenix), read back through its API.

Phoenix runs in a virtual environment of its own (installed from the package
registry once, then kept in pytest's cache), as the separate server a user
starts; `semif run` is a real process told where it is by ``[telemetry]`` in
semif.toml, and an Agent turn exports from this process.
"""

from __future__ import annotations

import json
import os
import socket
import subprocess
import sys
import time
import urllib.error
import urllib.request
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from support.venvs import installed_python

import semif_agent
from semif_agent import telemetry
from semif_agent.agent import Agent, TracingAgentCallback, tool
from semif_agent.catalog import read_spans as read_trace_file
from semif_agent.llm import ScriptedProvider, ScriptedReply
from semif_agent.starter import create_workspace

from ..agent._support import calls, collect
from ..loop.test_skill_md_run import write_skill
from .test_span_pipeline import turn_with_a_script_and_hooks

pytest.importorskip("opentelemetry.exporter.otlp.proto.http", reason="the otel extra is not installed")
pytestmark = pytest.mark.slow

PHOENIX = "arize-phoenix==20.26.1"
SRC = Path(semif_agent.__file__).resolve().parents[1]


@pytest.fixture(scope="session")
def phoenix_python(pytestconfig: pytest.Config, tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A Python with Phoenix installed (a cached venv), or skip without a network."""
    return installed_python(pytestconfig, tmp_path_factory, PHOENIX, "import phoenix.server.main", timeout=900)


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


@pytest.fixture(scope="module")
def phoenix(phoenix_python: Path, tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    """A Phoenix server on free ports, its data in a folder of its own: its base URL (OTLP/HTTP at /v1/traces)."""
    tmp_path = tmp_path_factory.mktemp("phoenix")
    port = _free_port()
    env = {
        **os.environ,
        "PHOENIX_HOST": "127.0.0.1",
        "PHOENIX_PORT": str(port),
        "PHOENIX_GRPC_PORT": str(_free_port()),
        "PHOENIX_WORKING_DIR": str(tmp_path / "phoenix"),
    }
    log = (tmp_path / "phoenix.log").open("w")
    server = subprocess.Popen(
        [str(phoenix_python), "-m", "phoenix.server.main", "serve"], env=env, stdout=log, stderr=subprocess.STDOUT
    )
    url = f"http://127.0.0.1:{port}"
    try:
        deadline = time.monotonic() + 240
        while True:
            try:
                with urllib.request.urlopen(f"{url}/healthz", timeout=5):
                    break
            except (urllib.error.URLError, ConnectionError, TimeoutError):
                if server.poll() is not None or time.monotonic() > deadline:
                    raise AssertionError(
                        f"Phoenix did not start: {(tmp_path / 'phoenix.log').read_text()[-2000:]}"
                    ) from None
                time.sleep(0.5)
        yield url
    finally:
        server.terminate()
        try:
            server.wait(timeout=30)
        except subprocess.TimeoutExpired:
            server.kill()
        log.close()


def _value(value: dict[str, Any]) -> Any:
    for key in ("string_value", "int_value", "double_value", "bool_value"):
        if value.get(key) is not None:
            return value[key]
    array = value.get("array_value") or {}
    return [_value(v) for v in array.get("values") or []] if array else None


def read_spans(url: str, *, until: Any, timeout: float = 60) -> list[dict[str, Any]]:
    """The spans Phoenix stored (its REST API), each with ``attributes`` as a dict, once ``until(spans)`` holds."""
    deadline = time.monotonic() + timeout
    while True:
        with urllib.request.urlopen(f"{url}/v1/projects/default/spans/otlpv1?limit=1000", timeout=10) as response:
            spans = json.load(response)["data"]
        for span in spans:
            span["attributes"] = {a["key"]: _value(a["value"]) for a in span.get("attributes") or []}
        if until(spans) or time.monotonic() > deadline:
            return spans
        time.sleep(0.5)


def under(parent: dict[str, Any], spans: list[dict[str, Any]]) -> list[dict[str, Any]]:
    found = [s for s in spans if s.get("parent_span_id") == parent["span_id"]]
    return sorted(found, key=lambda s: int(s["start_time_unix_nano"]))


def test_a_semif_run_reaches_phoenix_with_its_phases_and_decisions(phoenix: str, make_workspace, tmp_path) -> None:
    root = make_workspace(settings=f'[telemetry]\notlp_endpoint = "{phoenix}"\n')
    script = tmp_path / "answers.json"
    script.write_text(json.dumps(["email", "email.compose", "Alice", "success"]))
    env = {k: v for k, v in os.environ.items() if not k.startswith("OTEL_")}
    env["PYTHONPATH"] = os.pathsep.join([str(SRC), env.get("PYTHONPATH", "")])
    done = subprocess.run(
        [sys.executable, "-m", "semif_agent", "run", "Email Alice about lunch", "-w", str(root)]
        + ["--engine", f"scripted:{script}", "--json"],
        capture_output=True,
        text=True,
        env=env,
        timeout=180,
    )
    assert done.returncode == 0, done.stderr
    run_id = json.loads(done.stdout)["run_id"]
    spans = read_spans(phoenix, until=lambda found: sum(s["name"] == "semif.decision" for s in found) >= 4)
    (run,) = [s for s in spans if s["name"] == "semif.run"]
    assert run["attributes"]["semif.run.id"] == run_id and run["attributes"]["semif.outcome"] == "success"
    phases = under(run, spans)
    assert [p["name"] for p in phases] == ["semif.route", "semif.predict", "semif.act", "semif.assess"]
    decisions = [d for p in phases for d in under(p, spans)]
    assert [d["name"] for d in decisions] == ["semif.decision"] * 4
    assert [d["attributes"]["semif.decision.choice"] for d in decisions] == [
        "email",
        "email.compose",
        "Alice",
        "success",
    ]
    assert decisions[2]["attributes"]["semif.decision.question"] == "Which contact is the intended recipient?"
    assert "none" in decisions[2]["attributes"]["semif.decision.options"]


@tool
def lookup(city: str) -> str:
    """Today's weather in a city."""
    return f"sunny in {city}"


def test_an_agent_turn_reaches_phoenix_with_a_model_call_and_a_tool_call(phoenix: str) -> None:
    assert telemetry.configure(phoenix)
    try:
        provider = ScriptedProvider(
            [
                calls(("lookup", {"city": "Lisbon"}, "call_7"), usage={"input_tokens": 21, "output_tokens": 5}),
                ScriptedReply(text="Sunny.", usage={"input_tokens": 30, "output_tokens": 2}),
            ],
            model="tiny-model",
        )
        agent = Agent(llm=provider).with_tools([lookup]).with_callbacks([TracingAgentCallback(agent_name="weather")])
        assert collect(agent.stream("Is it sunny in Lisbon?"))[-1].text == "Sunny."
        assert telemetry.flush()
    finally:
        telemetry.shutdown()
    spans = read_spans(phoenix, until=lambda found: sum(s["name"].endswith(" tiny-model") for s in found) >= 2)
    (turn,) = [s for s in spans if s["name"] == "invoke_agent weather"]
    assert turn["attributes"]["gen_ai.operation.name"] == "invoke_agent"
    inside = under(turn, spans)
    assert [s["name"] for s in inside] == ["chat tiny-model", "execute_tool lookup", "chat tiny-model"]
    chat, tool_call = inside[0]["attributes"], inside[1]["attributes"]
    assert chat["gen_ai.operation.name"] == "chat" and chat["gen_ai.request.model"] == "tiny-model"
    assert chat["gen_ai.provider.name"] == "scripted"
    assert (chat["gen_ai.usage.input_tokens"], chat["gen_ai.usage.output_tokens"]) == (21, 5)
    assert tool_call["gen_ai.operation.name"] == "execute_tool"
    assert (tool_call["gen_ai.tool.name"], tool_call["gen_ai.tool.call.id"]) == ("lookup", "call_7")


def test_a_skill_script_and_its_hooks_reach_phoenix_under_the_agent_turn_that_ran_them(phoenix: str, tmp_path) -> None:
    assert telemetry.configure(phoenix)
    try:
        events = turn_with_a_script_and_hooks(tmp_path, agent_name="noter")
        assert events[-1].text == "noted it"
        assert telemetry.flush()
    finally:
        telemetry.shutdown()
    spans = read_spans(phoenix, until=lambda found: sum(s["name"].startswith("skill.") for s in found) >= 3)
    (turn,) = [s for s in spans if s["name"] == "invoke_agent noter"]
    inside = under(turn, spans)
    assert sorted(s["name"] for s in inside if s["name"].startswith("skill.")) == [
        "skill.hook",
        "skill.hook",
        "skill.script",
    ]
    (script,) = [s for s in inside if s["name"] == "skill.script"]
    assert script["attributes"]["skill.name"] == "noter" and script["attributes"]["script.exit_code"] == 0
    assert {s["attributes"]["hook.type"] for s in inside if s["name"] == "skill.hook"} == {"pre_step"}


def test_the_script_a_semif_run_ran_reaches_phoenix_under_the_act_of_the_run(phoenix: str, tmp_path) -> None:
    root = create_workspace(tmp_path / "ws")
    with (root / "semif.toml").open("a") as settings:
        settings.write(f'\n[telemetry]\notlp_endpoint = "{phoenix}"\nservice_name = "greeting-run"\n')
    write_skill(root, "greeter", "Greet someone by name.", script="import sys\nprint('hello', sys.argv[1])\n")
    answers = tmp_path / "answers.json"
    answers.write_text(json.dumps(["success"]))
    env = {k: v for k, v in os.environ.items() if not k.startswith("OTEL_")}
    env["PYTHONPATH"] = os.pathsep.join([str(SRC), env.get("PYTHONPATH", "")])
    done = subprocess.run(
        [sys.executable, "-m", "semif_agent", "run", "Grace", "--skill", "greeter", "--allow-scripts"]
        + ["-w", str(root), "--engine", f"scripted:{answers}", "--json"],
        capture_output=True,
        text=True,
        env=env,
        timeout=180,
    )
    assert done.returncode == 0, done.stderr
    run_id = json.loads(done.stdout)["run_id"]
    spans = read_spans(
        phoenix, until=lambda found: any(s["attributes"].get("script.stdout_excerpt") == "hello Grace\n" for s in found)
    )
    (run,) = [s for s in spans if s["name"] == "semif.run" and s["attributes"]["semif.run.id"] == run_id]
    (act,) = [s for s in under(run, spans) if s["name"] == "semif.act"]
    (script,) = [s for s in under(act, spans) if s["name"] == "skill.script"]
    assert script["attributes"]["skill.name"] == "greeter" and script["attributes"]["script.path"] == "scripts/run.py"
    assert script["attributes"]["script.exit_code"] == 0
    # the workspace's own trace file has the same span, with a parent (the act)
    (on_disk,) = [r for r in read_trace_file(root / ".semif" / "skill-trace.jsonl") if r["name"] == "skill.script"]
    assert on_disk["attributes"]["script.stdout_excerpt"] == "hello Grace\n" and on_disk["parent_span_id"]
