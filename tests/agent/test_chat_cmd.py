"""``semif chat``: the workspace's skills on demand, text streamed, tool calls shown, choices logged."""

from __future__ import annotations

import json

from click.testing import CliRunner

from semif_agent.agent.agent_skills.code_tools import skill_tool_name, skill_tools
from semif_agent.cli import main
from semif_agent.engine import create_engine
from semif_agent.llm import ScriptedProvider, ToolResultMessage, override_provider
from semif_agent.loop import SkillRunner
from semif_agent.starter import create_workspace
from semif_agent.workspace import Workspace

from ._support import calls


def test_skill_tool_names_and_schemas(tmp_path):
    ws = Workspace.load(create_workspace(tmp_path / "ws"))
    tools = skill_tools(SkillRunner(ws, engine=create_engine("lexical", {})))
    names = [t.name for t in tools]
    assert "skill__email__compose" in names and names == sorted(names)
    compose = next(t for t in tools if t.name == "skill__email__compose")
    assert compose.input_schema["required"] == ["request"] and not compose.read_only
    assert "Email someone" in compose.description and "For example:" in compose.description
    assert (
        skill_tool_name("a." + "b" * 80) != skill_tool_name("a." + "b" * 81)
        and len(skill_tool_name("a." + "b" * 80)) == 64
    )


def test_chat_offers_skills_on_demand_activates_one_runs_it_and_logs_the_choices(tmp_path):
    root = create_workspace(tmp_path / "ws")
    request = "Email Alice that the quarterly report is ready"
    provider = ScriptedProvider(
        [
            calls(("activate_skill", {"name": "email.compose"}), text="On it."),
            calls(("skill__email__compose", {"request": request})),
            "Drafted an email to Alice.",
            "You're welcome.",
        ]
    )
    with override_provider(provider):
        result = CliRunner().invoke(
            main,
            ["chat", "-w", str(root), "--engine", "lexical", "--model", "openai/any"],
            input=f"{request}\n\nthanks\n/exit\nnever read\n",
        )
    assert result.exit_code == 0, result.output
    assert (
        "On it." in result.stdout
        and "Drafted an email to Alice." in result.stdout
        and "You're welcome." in result.stdout
    )
    assert '[skill__email__compose {"request": "Email Alice' in result.stdout
    first = provider.requests[0]
    assert [t.name for t in first.tools] == ["activate_skill"]  # no skill's tool before it is activated
    assert "email.compose" in first.tools[0].input_schema["properties"]["name"]["enum"]
    assert "skill__email__compose" in [t.name for t in provider.requests[1].tools]
    drafts = list((root / "data" / "drafts").iterdir())
    assert len(drafts) == 1 and drafts[0].read_text().startswith("To: Alice")
    [returned] = [m for m in provider.requests[2].messages if isinstance(m, ToolResultMessage)][-1:]
    outcome = json.loads(returned.content)
    assert outcome["skill"] == "email.compose" and outcome["assessment"]["label"] in ("success", "unclear")
    assert "decisions" not in outcome
    assert len(provider.requests) == 4  # the blank line was skipped, /exit ended the session
    assert "skills on demand" in result.stderr
    rows = [json.loads(line) for line in (root / "data" / "decisions.jsonl").read_text().splitlines()]
    agent_rows = [r for r in rows if r.get("source") == "agent"]
    activations = [r for r in agent_rows if r["kind"] == "activate"]
    assert [r["selected"] for r in activations] == ["email.compose", "none"]  # the second turn activated nothing
    assert activations[0]["engine"] == "agent" and activations[0]["model"] == provider.model_id
    assert "email.compose" in [o["id"] for o in activations[0]["options"]] and len(activations[0]["options"]) <= 16
    assert activations[0]["state"] == request
    outcomes = [r for r in agent_rows if r["kind"] == "outcome"]
    assert len(outcomes) == 2 and outcomes[0]["run_id"] == activations[0]["run_id"]


def test_chat_reports_a_missing_key_as_one_line(tmp_path):
    root = create_workspace(tmp_path / "ws")
    result = CliRunner().invoke(
        main, ["chat", "-w", str(root), "--engine", "lexical", "--model", "openai/gpt-4o-mini"], input="hi\n"
    )
    assert result.exit_code == 1
    assert "no API key for openai/gpt-4o-mini: set OPENAI_API_KEY" in result.output
    assert "Traceback" not in result.output


def test_chat_shows_a_failed_turn_goes_on_and_exits_1(tmp_path):
    from semif_agent.llm import ServerError

    root = create_workspace(tmp_path / "ws")
    provider = ScriptedProvider(
        [ServerError("the server is down", provider="scripted", model="x", status=503), "Back."]
    )
    with override_provider(provider):
        result = CliRunner().invoke(
            main,
            ["chat", "-w", str(root), "--engine", "lexical", "--model", "openai/any"],
            input="hello\nhello again\n",
        )
    assert result.exit_code == 1  # the session went on, but a script must see that a turn failed
    assert "error: scripted/x (HTTP 503): the server is down" in result.stderr and "Back." in result.stdout
    assert result.stderr.splitlines()[-1] == "Error: 1 turn failed (see the error lines above)"
