"""The CLI: user mistakes are one line and a non-zero exit; listings speak JSON."""

from __future__ import annotations

import json
from pathlib import Path

from click.testing import CliRunner

from semif_agent.cli import main


def invoke(*args: str) -> tuple[int, str, str]:
    result = CliRunner().invoke(main, list(args))
    return result.exit_code, result.stdout, result.stderr


def test_run_with_a_scripted_engine_prints_json(make_workspace, tmp_path: Path) -> None:
    root = make_workspace()
    script = tmp_path / "answers.json"
    script.write_text(json.dumps(["email", "email.compose", "Alice", "success"]))
    code, out, err = invoke(
        "run", "Email Alice about lunch", "-w", str(root), "--engine", f"scripted:{script}", "--json"
    )
    assert code == 0, err
    data = json.loads(out)
    assert data["skill"] == "email.compose"
    assert data["assessment"]["label"] == "success"
    assert [d["kind"] for d in data["decisions"]] == ["route", "route", "predict", "assess"]
    assert Path(data["log"]) == root / "data" / "decisions.jsonl"


def test_replaying_a_logged_run_reproduces_its_decisions(make_workspace, tmp_path: Path) -> None:
    root = make_workspace()
    script = tmp_path / "answers.json"
    script.write_text(json.dumps(["email", "email.compose", "Bob", "success"]))
    invoke("run", "Write to Bob", "-w", str(root), "--engine", f"scripted:{script}")
    log = root / "data" / "decisions.jsonl"
    code, out, err = invoke("run", "Write to Bob", "-w", str(root), "--engine", f"scripted:{log}", "--json", "--no-log")
    assert code == 0, err
    assert [d["selected"] for d in json.loads(out)["decisions"]] == ["email", "email.compose", "Bob", "success"]


def test_human_output_shows_route_assessment_and_log(make_workspace, tmp_path: Path) -> None:
    root = make_workspace()
    script = tmp_path / "a.json"
    script.write_text(json.dumps(["email", "email.compose", "Alice", "success"]))
    code, out, _ = invoke("run", "Email Alice", "-w", str(root), "--engine", f"scripted:{script}")
    assert code == 0
    assert "Which contact is the intended recipient? -> Alice" in out
    assert "assessment" in out and "success" in out
    assert "4 decision rows + 1 outcome row" in out


def test_log_lists_filters_and_exports(make_workspace, tmp_path: Path) -> None:
    root = make_workspace()
    script = tmp_path / "a.json"
    script.write_text(json.dumps(["email", "email.compose", "Alice", "success"]))
    nothing = tmp_path / "none.json"
    nothing.write_text(json.dumps(["none"]))
    invoke("run", "Email Alice", "-w", str(root), "--engine", f"scripted:{script}")
    invoke("run", "weather?", "-w", str(root), "--engine", f"scripted:{nothing}")
    code, out, _ = invoke("log", "-w", str(root), "--json")  # one object per run by default
    runs = [json.loads(line) for line in out.splitlines()]
    assert code == 0 and [(r["request"], r["skill"], r["outcome"]) for r in runs] == [
        ("Email Alice", "email.compose", "success"),
        ("weather?", None, "unclear"),
    ]
    code, out, _ = invoke("log", "-w", str(root), "--json", "--decisions")
    rows = [json.loads(line) for line in out.splitlines()]
    assert code == 0 and len(rows) == 5
    assert {r["outcome"] for r in rows} == {"success", "unclear"}
    code, out, _ = invoke("log", "-w", str(root), "--json", "--decisions", "--kind", "predict")
    assert [json.loads(line)["selected"] for line in out.splitlines()] == ["Alice"]
    export = tmp_path / "rows.jsonl"
    code, out, _ = invoke("log", "-w", str(root), "--decisions", "--outcome", "success", "--export", str(export))
    assert code == 0 and len(export.read_text().splitlines()) == 4


def test_tree_and_skills_listings(make_workspace) -> None:
    from ..conftest import SEED_BODY

    root = make_workspace({"email.compose": SEED_BODY, "email.archive": None})
    code, out, _ = invoke("tree", "-w", str(root))
    assert code == 0 and "email.compose" in out and "email.archive (stub)" in out
    code, out, _ = invoke("skills", "list", "-w", str(root), "--json")
    assert [s["name"] for s in json.loads(out)] == ["email.compose", "email.archive"]
    code, out, _ = invoke("skills", "show", "email.compose", "-w", str(root), "--json")
    assert json.loads(out)["cost_budget"] == 3


def test_user_mistakes_are_one_line_and_a_non_zero_exit(make_workspace, tmp_path: Path) -> None:
    root = make_workspace()
    cases = [
        (("run", "x", "-w", str(tmp_path / "missing")), "no such workspace directory"),
        (("tree", "-w", str(tmp_path)), "not a workspace"),
        (("skills", "show", "email.nope", "-w", str(root)), "skill named 'email.nope'"),
        (("skills", "show", "emial.compose", "-w", str(root)), "did you mean email.compose?"),
        (("run", "x", "-w", str(root), "--engine", "warp"), "unknown engine 'warp'"),
        (("run", "  ", "-w", str(root)), "the request is empty"),
    ]
    for args, message in cases:
        code, out, err = invoke(*args)
        assert code == 1, (args, out, err)
        assert message in err and "Traceback" not in err
        assert len(err.strip().splitlines()) == 1, err


def test_malformed_settings_and_manifests_are_one_line(make_workspace) -> None:
    root = make_workspace()
    (root / "data" / "categories.json").write_text("{oops")
    code, _, err = invoke("tree", "-w", str(root))
    assert code == 1 and "invalid JSON at line 1" in err and len(err.strip().splitlines()) == 1
    (root / "semif.toml").write_text("[paths\n")
    code, _, err = invoke("run", "x", "-w", str(root))
    assert code == 1 and "invalid TOML" in err


def test_an_unknown_engine_in_semif_toml_is_one_line_naming_the_file_and_key(make_workspace) -> None:
    root = make_workspace()
    settings = root / "semif.toml"
    settings.write_text('[engine]\nname = "locl"\n' + settings.read_text().replace("[engine]\n", ""))
    code, _, err = invoke("route", "x", "-w", str(root))
    assert code == 1 and len(err.strip().splitlines()) == 1
    assert err.startswith(f"Error: {settings}: [engine] name: unknown engine 'locl' (known: lexical, llm, local")


def test_help_explains_the_commands() -> None:
    code, out, _ = invoke("--help")
    assert code == 0
    for command in ("init", "run", "tree", "skills", "log"):
        assert command in out
    code, out, _ = invoke("run", "--help")
    assert "--engine" in out and "--json" in out


def test_no_help_shows_a_raw_formatting_mark() -> None:
    """Click keeps a paragraph as written only when its ``\\b`` line follows a blank one; else it prints ``\\x08``."""
    import click

    def helps(group: click.Group, path: list[str]):
        context = click.Context(group)
        for name in group.list_commands(context):
            command = group.get_command(context, name)
            yield [*path, name]
            if isinstance(command, click.Group):
                yield from helps(command, [*path, name])

    for path in [[], *helps(main, [])]:
        code, out, _ = invoke(*path, "--help")
        assert code == 0 and "\b" not in out and "\\x08" not in out, path


def test_a_request_that_is_not_utf8_is_one_line_and_nothing_is_logged(make_workspace) -> None:
    root = make_workspace()
    code, out, err = invoke("run", "add \udcff\udcfe to my list", "-w", str(root), "--engine", "lexical")
    assert code == 1 and out == ""
    assert err.strip().splitlines() == [
        "Error: the request is not valid UTF-8 text: character 5 is the byte 0xff "
        "(pass it in UTF-8, e.g. with a UTF-8 locale)"
    ]
    assert not (root / "data" / "decisions.jsonl").exists()
    code, out, err = invoke("route", "add \udcff to my list", "-w", str(root), "--engine", "lexical")
    assert code == 1 and "Error: the request is not valid UTF-8 text: character 5 is the byte 0xff" in err


def test_undecodable_bytes_on_a_real_command_line_are_one_line(make_workspace) -> None:
    import os
    import subprocess
    import sys

    root = make_workspace()
    env = {**os.environ, "LC_ALL": "C.UTF-8", "PYTHONUTF8": "1"}
    done = subprocess.run(
        [sys.executable, "-m", "semif_agent", "run", b"note \xff\xfe", "-w", str(root), "--engine", "lexical"],
        capture_output=True,
        env=env,
        timeout=120,
    )
    assert done.returncode == 1
    assert done.stderr.decode().strip().splitlines() == [
        "Error: the request is not valid UTF-8 text: character 6 is the byte 0xff "
        "(pass it in UTF-8, e.g. with a UTF-8 locale)"
    ]


def test_the_library_refuses_text_that_is_not_utf8(make_workspace) -> None:
    import pytest

    from semif_agent.engine import ScriptedEngine
    from semif_agent.errors import UserError
    from semif_agent.loop import SkillRunner
    from semif_agent.skills import Request
    from semif_agent.workspace import Workspace

    with pytest.raises(UserError, match="character 2 is a lone surrogate U\\+D800"):
        Request("a\ud800b")
    with pytest.raises(UserError, match="must be text, not bytes"):
        Request(b"add milk")  # type: ignore[arg-type]  # a bad argument on purpose
    root = make_workspace()
    with pytest.raises(UserError, match="character 5 is the byte 0xff"):
        SkillRunner(Workspace.load(root), engine=ScriptedEngine(["email"])).run("add \udcff")
    assert not (root / "data" / "decisions.jsonl").exists()
