"""``semif models``: what is configured, where keys come from, which endpoints answer."""

from __future__ import annotations

import json
import socket

from click.testing import CliRunner

from semif_agent.cli import main
from semif_agent.cli.models_cmd import COMMANDS, models


def _closed_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def _workspace(tmp_path, text):
    (tmp_path / "semif.toml").write_text(text, encoding="utf-8")
    return str(tmp_path)


def test_lists_settings_and_environment_and_checks_endpoints(tmp_path, wire, monkeypatch):
    dead = f"http://127.0.0.1:{_closed_port()}"
    ws = _workspace(
        tmp_path,
        f"""
[engine]
name = "llm"
model = "openai/test-model"
fallbacks = ["anthropic/backup-model"]

[engine.judge]
model = "openrouter/vendor/judge-model"

[provider]
model = "scripted/default"
base_url = "{wire.base_url("openai")}"
api_key_env = "MY_KEY"

[provider.anthropic]
base_url = "{dead}"
""",
    )
    monkeypatch.setenv("MY_KEY", "secret-value")
    monkeypatch.setenv("OLLAMA_BASE_URL", wire.base_url("openai"))
    result = CliRunner().invoke(models, ["-w", ws, "--json", "--timeout", "2"])
    assert result.exit_code == 0, result.output
    entries = {e["role"]: e for e in json.loads(result.output)}
    assert set(entries) == {"engine", "provider default", "fallback", "judge", "environment"}

    engine = entries["engine"]
    assert (engine["model"], engine["base_url"], engine["key"]) == (
        "openai/test-model",
        wire.base_url("openai"),
        "$MY_KEY",
    )
    assert engine["reachable"] is True and engine["status"] == "HTTP 200"
    assert "secret-value" not in result.output

    fallback = entries["fallback"]
    assert fallback["base_url"] == dead and fallback["key"] == "not needed"  # a custom endpoint may take none
    assert fallback["reachable"] is False

    judge = entries["judge"]
    assert judge["base_url"] == "https://openrouter.ai/api/v1" and judge["key"] == "missing: set OPENROUTER_API_KEY"
    assert judge["reachable"] is None and "blocked" in judge["status"]  # tests never leave the machine

    assert entries["provider default"]["status"] == "scripted: no endpoint"
    assert entries["environment"]["model"] == "ollama/*" and entries["environment"]["key"] == "not needed"

    sent = [r for r in wire.requests if r.method == "GET"]
    assert {r.path for r in sent} == {"/v1/models"}
    assert any("secret-value" in " ".join(r.headers.values()) for r in sent)


def test_table_output_and_key_refused(tmp_path, wire, monkeypatch):
    wire.models_status = 401
    secrets = tmp_path / "secrets.toml"
    secrets.write_text('ANTHROPIC_API_KEY = "wrong"\n')
    secrets.chmod(0o600)
    monkeypatch.setenv("SEMIF_SECRETS", str(secrets))
    ws = _workspace(
        tmp_path,
        f"""
[engine]
model = "anthropic/test-model"
[provider.anthropic]
base_url = "{wire.base_url("anthropic")}"
""",
    )
    result = CliRunner().invoke(models, ["-w", ws])
    assert result.exit_code == 0, result.output
    header, line = result.output.splitlines()
    assert header.split() == ["ROLE", "MODEL", "ENDPOINT", "KEY", "REACHABLE"]
    assert "anthropic/test-model" in line and str(secrets) in line and "yes (HTTP 401 (key refused))" in line
    assert any("wrong" in " ".join(r.headers.values()) for r in wire.requests)


def test_a_key_written_in_the_settings_is_refused_in_one_line(tmp_path):
    ws = _workspace(tmp_path, '[engine]\nmodel = "openai/m"\n[provider.openai]\napi_key = "sk-in-the-workspace"\n')
    result = CliRunner().invoke(main, ["models", "-w", ws])
    assert result.exit_code != 0
    assert "[provider.openai] api_key" in result.output and "secrets" in result.output
    assert "sk-in-the-workspace" not in result.output and "Traceback" not in result.output


def test_a_secrets_file_others_can_read_is_refused(tmp_path, monkeypatch):
    secrets = tmp_path / "secrets.toml"
    secrets.write_text('OPENAI_API_KEY = "sk-shared"\n')
    secrets.chmod(0o644)
    monkeypatch.setenv("SEMIF_SECRETS", str(secrets))
    for settings in ('[engine]\nmodel = "openai/m"\n', '[engine]\nname = "lexical"\n'):  # a model named, and none
        ws = _workspace(tmp_path, settings)
        result = CliRunner().invoke(models, ["-w", ws, "--no-check"])
        assert "chmod 600" in result.output and "sk-shared" not in result.output


def test_no_check_and_nothing_configured(tmp_path):
    ws = _workspace(tmp_path, '[engine]\nname = "lexical"\n')
    result = CliRunner().invoke(models, ["-w", ws, "--no-check"])
    assert result.exit_code == 0
    assert "no models configured" in result.output


def test_bad_model_is_reported_not_raised(tmp_path):
    ws = _workspace(tmp_path, '[engine]\nmodel = "llama3.2"\n')
    result = CliRunner().invoke(models, ["-w", ws, "--json", "--no-check"])
    [entry] = json.loads(result.output)
    assert "provider/model" in entry["problem"]


def test_outside_a_workspace_lists_the_environment(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("OPENAI_API_KEY", "k")
    result = CliRunner().invoke(models, ["--json", "--no-check"])
    assert [e["model"] for e in json.loads(result.output)] == ["openai/*"]


def test_exported_for_the_cli():
    assert COMMANDS == [models]
