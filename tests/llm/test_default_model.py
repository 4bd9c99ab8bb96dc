"""With no model named, the provider the environment (or semif.toml) sets up is used: Agent(), semif chat, semif run --engine llm."""

from __future__ import annotations

import json

import pytest
from click.testing import CliRunner
from support.wire_server import WireReply

from semif_agent import Agent
from semif_agent.cli import main
from semif_agent.llm.settings import default_model
from semif_agent.starter import create_workspace

OPENAI = "openai/gpt-4o-mini"
ANTHROPIC = "anthropic/claude-haiku-4-5-20251001"


@pytest.mark.parametrize(
    ("environ", "settings", "model", "detected", "reason"),
    [
        ({}, {}, ANTHROPIC, False, "the default: neither ANTHROPIC_API_KEY nor OPENAI_API_KEY"),
        ({"OPENAI_BASE_URL": "http://127.0.0.1:8000/v1"}, {}, OPENAI, True, "OPENAI_BASE_URL is set"),
        (
            {"OPENAI_API_KEY": "k", "OPENAI_BASE_URL": "u"},
            {},
            OPENAI,
            True,
            "OPENAI_API_KEY and OPENAI_BASE_URL are set",
        ),
        ({"ANTHROPIC_API_KEY": "k"}, {}, ANTHROPIC, True, "ANTHROPIC_API_KEY is set"),
        (
            {"ANTHROPIC_API_KEY": "k", "OPENAI_API_KEY": "k"},
            {},
            ANTHROPIC,
            False,
            "the default: both anthropic (ANTHROPIC_API_KEY is set) and openai (OPENAI_API_KEY is set) are set up",
        ),
        (
            {},
            {"provider": {"openai": {"base_url": "http://127.0.0.1:11434/v1"}}},
            OPENAI,
            True,
            "[provider.openai] in semif.toml",
        ),
        (
            {},
            {"provider": {"base_url": "http://127.0.0.1:11434/v1"}},
            OPENAI,
            True,
            "[provider] base_url in semif.toml",
        ),
        ({"OPENAI_API_KEY": "k"}, {"provider": {"api_key_env": "ANTHROPIC_API_KEY"}}, ANTHROPIC, False, "both"),
    ],
    ids=["neither", "openai-url", "openai-both-vars", "anthropic-key", "both", "openai-table", "flat-url", "mixed"],
)
def test_the_model_follows_the_one_provider_set_up(environ, settings, model, detected, reason) -> None:
    choice = default_model(settings, environ)
    assert (choice.model, choice.detected) == (model, detected)
    assert reason in choice.reason
    assert choice.describe() == f"model {model} ({choice.reason}; --model to choose another)"


@pytest.mark.parametrize(
    ("api", "variables", "sent_model"),
    [
        ("openai", ("OPENAI_BASE_URL", "OPENAI_API_KEY"), "gpt-4o-mini"),
        ("anthropic", ("ANTHROPIC_BASE_URL", "ANTHROPIC_API_KEY"), "claude-haiku-4-5-20251001"),
    ],
)
def test_agent_with_no_model_talks_to_the_provider_the_environment_sets_up(
    wire, monkeypatch, api, variables, sent_model
) -> None:
    url_variable, key_variable = variables
    monkeypatch.setenv(url_variable, wire.base_url(api))
    monkeypatch.setenv(key_variable, "test-key")
    wire.queue(WireReply(text="Hello, Alice!"))
    agent = Agent()
    assert agent.model_choice.detected and agent.model.startswith(f"{api}/")
    assert "".join(agent.chat("Please greet Alice")) == "Hello, Alice!"
    [post] = wire.posts()
    assert (post.api, post.body["model"]) == (api, sent_model)


def test_chat_with_only_openai_set_up_uses_an_openai_model_and_says_so(wire, monkeypatch, tmp_path) -> None:
    root = create_workspace(tmp_path / "ws")
    monkeypatch.setenv("OPENAI_BASE_URL", wire.base_url("openai"))
    monkeypatch.setenv("OPENAI_API_KEY", "test-key")
    wire.queue(WireReply(text="Hi there."))
    result = CliRunner().invoke(main, ["chat", "-w", str(root), "--engine", "lexical"], input="hello\n")
    assert result.exit_code == 0, result.output
    assert f"semif: model {OPENAI} (OPENAI_API_KEY and OPENAI_BASE_URL are set; --model to choose another)" in (
        result.stderr.splitlines()
    )
    assert "Hi there." in result.stdout
    assert [(p.api, p.body["model"]) for p in wire.posts()] == [("openai", "gpt-4o-mini")]


def _letter(answer: str) -> WireReply:
    top = {answer: -0.05, "B" if answer != "B" else "A": -3.2}
    return WireReply(text=answer, logprobs=({"token": answer, "logprob": -0.05, "top": top},))


def test_run_with_the_llm_engine_and_no_model_uses_the_provider_set_up(wire, monkeypatch, tmp_path) -> None:
    root = create_workspace(tmp_path / "ws")
    monkeypatch.setenv("OPENAI_BASE_URL", wire.base_url("openai"))
    monkeypatch.setenv("OPENAI_API_KEY", "test-key")
    wire.queue(*[_letter("A") for _ in range(4)])  # category, skill, recipient, verdict
    result = CliRunner().invoke(
        main, ["run", "Email Alice that the report is ready", "-w", str(root), "--engine", "llm", "--json"]
    )
    assert result.exit_code == 0, result.output
    assert result.stderr.splitlines() == [
        f"semif: model {OPENAI} (OPENAI_API_KEY and OPENAI_BASE_URL are set; --model to choose another)"
    ]
    data = json.loads(result.stdout)
    assert data["skill"] == "email.compose"
    assert {d["model"] for d in data["decisions"]} == {OPENAI}
    assert {p.body["model"] for p in wire.posts()} == {"gpt-4o-mini"}
