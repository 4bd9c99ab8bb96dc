"""`semif run --engine llm` routes and assesses a request end to end against the loopback server."""

from __future__ import annotations

import json

from click.testing import CliRunner
from support.wire_server import WireReply

from semif_agent.cli import main
from semif_agent.starter import create_workspace


def letter(answer: str, usage_in: int) -> WireReply:
    top = {answer: -0.05, "B" if answer != "B" else "A": -3.2, "C": -5.0}
    return WireReply(
        text=answer, logprobs=({"token": answer, "logprob": -0.05, "top": top},), usage={"input": usage_in, "output": 1}
    )


def test_run_with_the_llm_engine_routes_acts_assesses_and_logs_model_tokens_and_cost(
    wire, tmp_path, monkeypatch
) -> None:
    monkeypatch.setenv("SEMIF_TEST_WIRE_KEY", "test-key")
    root = create_workspace(tmp_path / "ws")
    with (root / "semif.toml").open("a") as handle:
        handle.write(
            f'\n[provider]\nbase_url = "{wire.base_url("openai")}"\napi_key_env = "SEMIF_TEST_WIRE_KEY"\n'
            '[provider.pricing."openai/test-model"]\ninput = 1.0\noutput = 2.0\n'
        )
    # category (A = email), skill (A = email.compose), recipient (A = Alice Martin), verdict (A = success)
    wire.queue(letter("A", 120), letter("A", 90), letter("A", 140), letter("A", 200))
    # a recipient the request does not name, so the skill asks the model which contact it is
    result = CliRunner().invoke(
        main,
        [
            "run",
            "Email the owner of the quarterly report that it is ready",
            "-w",
            str(root),
            "--engine",
            "llm",
            "--model",
            "openai/test-model",
            "--json",
        ],
    )
    assert result.exit_code == 0, result.output
    data = json.loads(result.stdout)
    assert data["skill"] == "email.compose"
    assert data["assessment"]["label"] == "success"
    drafts = list((root / "data" / "drafts").iterdir())
    assert len(drafts) == 1 and drafts[0].read_text().startswith("To: Alice Martin")
    rows = [json.loads(line) for line in (root / "data" / "decisions.jsonl").read_text().splitlines()]
    decisions = [r for r in rows if r["kind"] != "outcome"]
    assert [r["kind"] for r in decisions] == ["route", "route", "predict", "assess"]
    assert {r["model"] for r in decisions} == {"openai/test-model"}
    assert [r["usage"]["input_tokens"] for r in decisions] == [120, 90, 140, 200]
    assert decisions[0]["usage"]["cost_usd"] > 0
    assert abs(sum(decisions[0]["probabilities"].values()) - 1.0) < 1e-6
    assert decisions[-1]["engine"] == "llm-judge"
    posts = wire.posts()
    assert len(posts) == 4 and all(p.api == "openai" for p in posts)
    assert "Which contact is the intended recipient?" in json.dumps(posts[2].body)


def test_run_on_a_skill_md_skill_with_a_model_has_the_agent_follow_it_and_the_llm_judge_assess_it(
    wire, tmp_path, monkeypatch
) -> None:
    secrets = tmp_path / "secrets.toml"  # the key from a secrets file outside the workspace
    secrets.write_text('SEMIF_TEST_WIRE_KEY = "test-key"\n')
    secrets.chmod(0o600)
    monkeypatch.setenv("SEMIF_SECRETS", str(secrets))
    root = create_workspace(tmp_path / "ws")
    folder = root / "skills" / "release-notes"
    folder.mkdir(parents=True)
    (folder / "SKILL.md").write_text(
        "---\nname: release-notes\ndescription: Write release notes from merged changes.\n"
        "---\n# Release notes\n\nGroup the changes by kind; lead with what users notice.\n"
    )
    with (root / "semif.toml").open("a") as handle:
        handle.write(f'\n[provider]\nbase_url = "{wire.base_url("openai")}"\napi_key_env = "SEMIF_TEST_WIRE_KEY"\n')
    wire.queue(
        WireReply(text="Release notes: faster start-up; two fixes.", usage={"input": 300, "output": 12}),
        letter("A", 200),
    )
    result = CliRunner().invoke(
        main,
        [
            "run",
            "write the release notes",
            "-w",
            str(root),
            "--skill",
            "release-notes",
            "--model",
            "openai/test-model",
            "--json",
        ],
    )
    assert result.exit_code == 0, result.output
    data = json.loads(result.stdout)
    assert data["skill"] == "release-notes" and data["instructions"] is None
    assert data["new_state"] == "Release notes: faster start-up; two fixes."
    assert data["assessment"]["label"] == "success" and data["assessment"]["engine"] == "llm-judge"
    first = wire.posts()[0].body
    system = " ".join(m["content"] for m in first["messages"] if m["role"] == "system")
    assert '<skill_content name="release-notes"' in system and "lead with what users notice" in system
    calls = [json.loads(line) for line in (root / "data" / "model_calls.jsonl").read_text().splitlines()]
    assert [c["purpose"] for c in calls] == ["run"]
