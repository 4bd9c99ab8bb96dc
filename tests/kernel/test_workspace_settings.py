"""semif.toml: a setting of the wrong type, or a write dir that reaches the workspace's records, is one clear line."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from click.testing import CliRunner

from semif_agent.cli import main
from semif_agent.errors import WorkspaceError
from semif_agent.workspace import Workspace


def workspace(tmp_path: Path, settings: str, name: str = "ws") -> Path:
    root = tmp_path / name
    (root / "data").mkdir(parents=True)
    (root / "data" / "categories.json").write_text(json.dumps({"version": 1, "categories": [], "skills": []}))
    (root / "semif.toml").write_text(settings, encoding="utf-8")
    return root


def refusal(tmp_path: Path, settings: str, name: str = "ws") -> str:
    with pytest.raises(WorkspaceError) as caught:
        Workspace.load(workspace(tmp_path, settings, name))
    message = str(caught.value)
    assert "\n" not in message
    return message


@pytest.mark.parametrize(
    ("settings", "expected"),
    [
        ('[skills]\ntimeout = "slow"', '[skills] timeout must be a positive number of seconds, not "slow"'),
        ("[skills]\ntimeout = -1", "[skills] timeout must be a positive number of seconds, not -1"),
        ("[skills]\ntimeout = 0", "[skills] timeout must be a positive number of seconds, not 0"),
        ("[skills]\ntimeout = true", "[skills] timeout must be a positive number of seconds, not true"),
        ('[engine]\nthreshold = "high"', '[engine] threshold must be a number, not "high"'),
        ("[engine]\nname = 5", "[engine] name must be a non-empty string, not 5"),
        ('[engine]\nname = ""', '[engine] name must be a non-empty string, not ""'),
        ("[engine]\ntemperature = false", "[engine] temperature must be a number, not false"),
        ('[log]\nfsync = "yes"', '[log] fsync must be true or false, not "yes"'),
        ('[log]\nenabled = "no"', '[log] enabled must be true or false, not "no"'),
        ("[log]\nmodel_calls = 1", "[log] model_calls must be true or false, not 1"),
        ("[log]\npath = 5", "[log] path must be a non-empty string, not 5"),
        ("[paths]\ndrafts = 3", "[paths] drafts must be a path (a non-empty string), not 3"),
        ('[paths]\nnotes = ["data/notes"]', "[paths] notes must be a path (a non-empty string), not ['data/notes']"),
        ("[paths]\ndata = {}", "[paths] data must be a path (a non-empty string), not a table"),
        (
            '[skills]\nwrite_dirs = "data/drafts"',
            '[skills] write_dirs must be a list of paths (strings), not "data/drafts"',
        ),
        ("[skills]\nwrite_dirs = [1]", "[skills] write_dirs must be a list of paths (strings), not [1]"),
        ('[skills]\nfolders = "more"', '[skills] folders must be a list of paths (strings), not "more"'),
        ('[skills]\nallow_scripts = "yes"', '[skills] allow_scripts must be true or false, not "yes"'),
        ("[skills]\nuser_skills = 0", "[skills] user_skills must be true or false, not 0"),
        ("[routing]\nthreshold = [0.3]", "[routing] threshold must be a number, not [0.3]"),
        ("[forge]\nmodel = 4", "[forge] model must be a non-empty string, not 4"),
        (
            '[config]\nnow = "next tuesday"',
            '[config] now must be an ISO date and time, like "2025-03-10T09:00:00", not "next tuesday"',
        ),
        ("[config]\nnow = 5", '[config] now must be an ISO date and time, like "2025-03-10T09:00:00", not 5'),
        ("paths = 5", "[paths] must be a table, not 5"),
        ('routing = "fast"', '[routing] must be a table, not "fast"'),
    ],
)
def test_a_setting_of_the_wrong_type_is_one_line_naming_it(tmp_path: Path, settings: str, expected: str) -> None:
    message = refusal(tmp_path, settings)
    assert message == f"{tmp_path / 'ws' / 'semif.toml'}: {expected}"


def test_settings_of_the_right_types_load(tmp_path: Path) -> None:
    ws = Workspace.load(
        workspace(
            tmp_path,
            (
                '[engine]\nname = "lexical"\nthreshold = 0.25\n[skills]\ntimeout = 2.5\nallow_scripts = true\n'
                "[log]\nfsync = true\nenabled = false\n[routing]\nthreshold = 1\n"
            ),
        )
    )
    assert ws.settings.skills.timeout == 2.5 and ws.settings.log.enabled is False


def test_the_cli_shows_a_bad_setting_as_one_line(tmp_path: Path) -> None:
    root = workspace(tmp_path, '[skills]\ntimeout = "slow"\n')
    result = CliRunner().invoke(main, ["tree", "-w", str(root)])
    assert result.exit_code == 1
    assert result.stderr.strip().splitlines() == [
        f'Error: {root / "semif.toml"}: [skills] timeout must be a positive number of seconds, not "slow"'
    ]


@pytest.mark.parametrize(
    ("write_dirs", "expected"),
    [
        ('["data"]', '"data" holds the data dir data, where the workspace keeps its records'),
        ('["."]', '"." holds the data dir data'),
        ('["data/drafts", "data/"]', '"data/" holds the data dir data'),
        ('["data/skills"]', '"data/skills" is the skill bodies data/skills ([paths] data)'),
        ('["data/skills/email"]', '"data/skills/email" lies inside the skill bodies data/skills'),
        ('["data/categories.json"]', '"data/categories.json" is the skill manifests data/categories.json'),
        ('["data/router.npz/x"]', '"data/router.npz/x" lies inside the trained router\'s weights data/router.npz'),
        ('["skills"]', '"skills" is the SKILL.md skills skills (skills/)'),
        (
            '["data/drafts", ".semif"]',
            '".semif" is the host\'s own folder .semif (the skill trace, the MCP client tokens)',
        ),
        ('["data/drafts", ".semif/x"]', '".semif/x" lies inside the host\'s own folder .semif'),
        (
            '["data/drafts", ".semif/mcp-tokens.json"]',
            '".semif/mcp-tokens.json" lies inside the host\'s own folder .semif',
        ),
        (
            '["data/drafts", "../shared"]',
            '"../shared" lies outside the workspace: a relative write dir must stay inside it',
        ),
        ('["/"]', '"/" is too broad'),
        ('["/tmp"]', '"/tmp" is too broad'),
        ('["/etc/semif"]', '"/etc/semif" is too broad'),
        ('["~"]', '"~" is too broad'),
    ],
)
def test_a_write_dir_that_reaches_a_record_is_refused(tmp_path: Path, write_dirs: str, expected: str) -> None:
    message = refusal(tmp_path, f"[skills]\nwrite_dirs = {write_dirs}\n")
    assert f"semif.toml: [skills] write_dirs {expected}" in message


def test_a_write_dir_holding_a_configured_log_is_refused(tmp_path: Path) -> None:
    message = refusal(tmp_path, '[log]\npath = "data/drafts/decisions.jsonl"\n')
    assert (
        '[skills] write_dirs "data/drafts" holds the decision log data/drafts/decisions.jsonl ([log] path)' in message
    )
    message = refusal(tmp_path, '[log]\nmodel_calls_path = "data/notes/calls.jsonl"\n', name="ws2")
    assert "holds the model-call log data/notes/calls.jsonl ([log] model_calls_path)" in message


def test_a_write_dir_linked_to_the_data_dir_is_refused(tmp_path: Path) -> None:
    root = workspace(tmp_path, '[skills]\nwrite_dirs = ["data/drafts"]\n')
    (root / "data" / "drafts").symlink_to(root / "data")
    with pytest.raises(WorkspaceError, match='"data/drafts" holds the data dir data'):
        Workspace.load(root)


def test_a_separate_absolute_folder_may_be_a_write_dir(tmp_path: Path) -> None:
    shared = tmp_path / "shared" / "drafts"
    ws = Workspace.load(workspace(tmp_path, f'[skills]\nwrite_dirs = ["data/drafts", "{shared}"]\n'))
    assert ws.write_roots == (ws.root / "data" / "drafts", shared)


def test_write_dirs_default_to_the_folders_of_paths(tmp_path: Path) -> None:
    ws = Workspace.load(workspace(tmp_path, '[paths]\ndata = "data"\ntodos = "lists"\n'))
    assert ws.write_roots == tuple(ws.root / p for p in ("data/drafts", "data/notes", "data/calendar", "lists"))
    assert ws.skill_config()["notes"] == str(ws.root / "data" / "notes")


def test_a_write_dir_reaching_the_secrets_file_or_the_users_skills_is_refused(tmp_path: Path, monkeypatch) -> None:
    monkeypatch.setenv("SEMIF_SECRETS", str(tmp_path / "ws" / "data" / "notes" / "secrets.toml"))
    message = refusal(tmp_path, "")
    assert '"data/notes" holds the secrets file' in message and "skills may not write" in message
    monkeypatch.delenv("SEMIF_SECRETS")
    home = tmp_path / "home"
    monkeypatch.setenv("HOME", str(home))
    monkeypatch.setenv("XDG_CONFIG_HOME", str(tmp_path / "config"))
    for folder, said in (
        (tmp_path / "config", "holds the secrets file"),
        (home / ".agents", "holds the user's SKILL.md"),
    ):
        folder.mkdir(parents=True, exist_ok=True)
        message = refusal(tmp_path, f'[skills]\nwrite_dirs = ["{folder}"]\n', name=f"ws-{folder.name}")
        assert said in message


def test_settings_that_let_skills_write_the_data_dir_are_refused_and_nothing_moves(tmp_path: Path) -> None:
    """There is no older layout to move: ``write_dirs = ["data"]`` beside a notes file is refused, files left as they are."""
    root = workspace(tmp_path, '[skills]\nwrite_dirs = ["data"]\n')
    (root / "data" / "notes.sqlite3").write_bytes(b"notes")
    with pytest.raises(WorkspaceError, match=r'\[skills\] write_dirs "data" holds the data dir data'):
        Workspace.load(root)
    assert (root / "semif.toml").read_text() == '[skills]\nwrite_dirs = ["data"]\n'
    assert sorted(path.name for path in (root / "data").iterdir()) == ["categories.json", "notes.sqlite3"]


def test_settings_are_typed_with_their_defaults(tmp_path: Path) -> None:
    ws = Workspace.load(workspace(tmp_path, '[paths]\ntodos = "lists"\n[routing]\nact_threshold = 0.9\n'))
    assert ws.settings.skills.timeout == 120 and ws.settings.skills.allow_scripts is False
    assert ws.settings.skills.warm_processes is True and ws.settings.skills.user_skills is True
    assert (ws.settings.log.enabled, ws.settings.log.fsync, ws.settings.log.model_calls) == (True, False, True)
    assert ws.settings.log.path == "data/decisions.jsonl"
    assert ws.settings.paths.data == "data" and ws.settings.paths.notes == "data/notes"
    assert ws.settings.skills.write_dirs == ["data/drafts", "data/notes", "data/calendar", "lists"]
    assert ws.settings.routing.act_threshold == 0.9 and ws.settings.engine.name is None


def test_a_plugin_table_and_unknown_keys_are_kept(tmp_path: Path) -> None:
    ws = Workspace.load(
        workspace(
            tmp_path,
            '[engine]\nname = "lexical"\ncache = false\n[myplugin]\nlevel = 3\nwords = ["a"]\n'
            '[config]\nnow = 2025-03-10T09:00:00\ncity = "Lyon"\n',
        )
    )
    assert ws.settings.table("myplugin") == {"level": 3, "words": ["a"]}
    assert ws.settings.table("nothing") == {}
    assert ws.engine_settings["cache"] is False and ws.engine_settings["name"] == "lexical"
    assert ws.settings.table("engine") == {"name": "lexical", "cache": False}
    config = ws.skill_config()
    assert config["city"] == "Lyon" and str(config["now"]) == "2025-03-10 09:00:00"


def test_a_provider_that_is_not_a_table_is_one_line(tmp_path: Path) -> None:
    message = refusal(tmp_path, 'provider = "openai"\n')
    assert message == f'{tmp_path / "ws" / "semif.toml"}: [provider] must be a table, not "openai"'


@pytest.mark.parametrize(
    ("settings", "expected"),
    [
        ("[mcp]\nrerank = 1", "[mcp] rerank must be true or false, not 1"),
        ("[routing]\nact_threshold = 2", "[routing] act_threshold must be a probability from 0 to 1, not 2"),
        ("[routing]\nstrategy = 3", "[routing] strategy must be a non-empty string, not 3"),
        ("[engine]\nthreshold = nan", "[engine] threshold must be a number, not nan"),
        ("[telemetry]\notlp_endpoint = 4", "[telemetry] otlp_endpoint must be a non-empty string, not 4"),
        ("[paths]\nfiles_root = 2", "[paths] files_root must be a path (a non-empty string), not 2"),
    ],
)
def test_every_table_names_a_wrong_value(tmp_path: Path, settings: str, expected: str) -> None:
    assert refusal(tmp_path, settings) == f"{tmp_path / 'ws' / 'semif.toml'}: {expected}"


def test_the_decision_log_is_built_from_the_workspace(tmp_path: Path) -> None:
    from semif_agent.records import DecisionLog

    ws = Workspace.load(workspace(tmp_path, '[log]\npath = "data/my-log.jsonl"\nfsync = true\n'))
    log = DecisionLog.for_workspace(ws)
    assert (log.path, log.fsync, log.enabled) == (ws.root / "data" / "my-log.jsonl", True, True)
    assert DecisionLog.for_workspace(ws, enabled=False).enabled is False


@pytest.mark.parametrize(
    ("settings", "where"),
    [
        ('[config]\nsmtp_pass = "hunter2-smtp"\n', "[config] smtp_pass"),
        ('[config]\ngithub_pat = "x-not-a-token-shape"\n', "[config] github_pat"),
        ('[config]\nslack_session = "abc"\n', "[config] slack_session"),
        ('[config]\ndb_pw = "abc"\n', "[config] db_pw"),
        ('[config]\nopenai = "sk-proj-0123456789abcdefghij0123456789"\n', "[config] openai (an OpenAI or Anthropic"),
        ('[config]\nrepo = "ghp_0123456789abcdefghijABCDEFGHIJ012345"\n', "[config] repo (a GitHub token)"),
        ('[config]\nchat = "xoxb-0123456789-abcdefghij"\n', "[config] chat (a Slack token)"),
        ('[config]\naws_access_key_id = "AKIAIOSFODNN7EXAMPLE"\n', "[config] aws_access_key_id (an AWS access key)"),
        (
            '[config]\nssh_identity = "-----BEGIN OPENSSH PRIVATE KEY-----\\nb3Bl\\n-----END OPENSSH PRIVATE KEY-----"\n',
            "[config] ssh_identity (a private key)",
        ),
        (
            '[config]\ndatabase_url = "postgres://app:S3cretPw@db.internal:5432/prod"\n',
            "[config] database_url (a password in a URL)",
        ),
        ('[provider]\nbase_url = "https://me:S3cret@llm.example/v1"\n', "[provider] base_url (a password in a URL)"),
        (
            '[config]\nwebhooks = [{ url = "https://hooks.example", signing = "whsec_abcdef0123456789" }]\n',
            "[config.webhooks] signing (a webhook signing secret)",
        ),
        ('[config]\nmirrors = ["a", ["ghp_0123456789abcdefghijABCDEFGHIJ012345"]]\n', "[config] mirrors (a GitHub"),
        ('[config]\nsmtp_passwords = ["first"]\n', "[config] smtp_passwords"),
        ('[config.secrets]\nsmtp = "hunter2"\n', "[config.secrets] smtp"),
        ('[myplugin]\nheaders = { "X-Session" = "abc" }\n', "[myplugin.headers] X-Session"),
    ],
)
def test_a_credential_under_an_everyday_name_or_shaped_like_one_is_refused(
    tmp_path: Path, settings: str, where: str
) -> None:
    message = refusal(tmp_path, settings)
    assert message.startswith(f"{tmp_path / 'ws' / 'semif.toml'}: {where}")
    assert "holds a credential" in message and "secrets file" in message and "environment" in message
    for secret in ("hunter2", "0123456789abcdefghij", "S3cret", "b3Bl", "whsec_", "first", '"abc"'):
        assert secret not in message


def test_ordinary_settings_are_not_taken_for_credentials(tmp_path: Path) -> None:
    ordinary = {
        "api_key_env": "MY_KEY",
        "max_tokens_field": "max_completion_tokens",
        "keyboard": "azerty",
        "passes": "two",
        "pass_through": "yes",
        "session_timeout": "5m",
        "key_file": "keys/id.pub",
        "pattern": "*.md",
        "sort_key_env": "SORT",
        "homepage": "https://ann@example.org/~ann",
        "feed": "https://example.org:8443/feed.xml",
        "skill": "task-0123456789abcdefghij",
    }
    lines = "".join(f'{key} = "{value}"\n' for key, value in ordinary.items())
    ws = Workspace.load(workspace(tmp_path, f'[config]\n{lines}[provider]\napi_key_env = "GITHUB_TOKEN"\n'))
    config = ws.skill_config()
    assert {key: config[key] for key in ordinary} == ordinary


@pytest.mark.parametrize(
    ("settings", "expected"),
    [
        ('[log]\npath = "{outside}/.bashrc"\n', '[log] path "{outside}/.bashrc" lies outside the workspace'),
        ('[log]\npath = "../decisions.jsonl"\n', '[log] path "../decisions.jsonl" lies outside the workspace'),
        ('[log]\nmodel_calls_path = "~/calls.jsonl"\n', '[log] model_calls_path "~/calls.jsonl" lies outside'),
        ('[paths]\ndata = "{outside}"\n', '[paths] data "{outside}" lies outside the workspace'),
    ],
)
def test_a_record_the_host_writes_outside_the_workspace_is_refused(
    tmp_path: Path, settings: str, expected: str
) -> None:
    outside = tmp_path / "home"
    (outside / "drafts").mkdir(parents=True)
    (outside / ".bashrc").write_text("# start-up\n")
    message = refusal(tmp_path, settings.format(outside=outside))
    assert message.startswith(f"{tmp_path / 'ws' / 'semif.toml'}: {expected.format(outside=outside)}")
    assert "must be a path inside the workspace" in message
    assert (outside / ".bashrc").read_text() == "# start-up\n"


def test_a_log_linked_out_of_the_workspace_is_refused_and_one_inside_loads(tmp_path: Path) -> None:
    root = workspace(tmp_path, '[log]\npath = "data/decisions.jsonl"\n')
    target = tmp_path / "elsewhere.jsonl"
    (root / "data" / "decisions.jsonl").symlink_to(target)
    with pytest.raises(
        WorkspaceError,
        match=rf'\[log\] path "data/decisions.jsonl" lies outside the workspace '
        rf"\(it leads to {target}\)",
    ):
        Workspace.load(root)
    (root / "data" / "decisions.jsonl").unlink()
    ws = Workspace.load(workspace(tmp_path, '[log]\npath = "logs/decisions.jsonl"\n', name="ws2"))
    assert ws.log_path == tmp_path / "ws2" / "logs" / "decisions.jsonl"


def test_a_write_dir_in_another_workspace_is_refused(tmp_path: Path, monkeypatch) -> None:
    other = workspace(tmp_path, "", name="other")
    for n, (given, how) in enumerate(((other / "data", "lies inside"), (other, "is"), (other / "x", "lies inside"))):
        message = refusal(tmp_path, f'[skills]\nwrite_dirs = ["data/drafts", "{given}"]\n', name=f"ws{n}")
        assert f'[skills] write_dirs "{given}" {how} another workspace, {other} (it has a semif.toml)' in message
        assert "skills may not write another workspace's records" in message
    inner = workspace(tmp_path / "nests", "", name="inner")
    message = refusal(tmp_path, '[skills]\nwrite_dirs = ["inner/data/notes"]\n', name="nests")
    assert f'"inner/data/notes" lies inside another workspace, {inner}' in message
    planted = workspace(tmp_path, "", name="planted")
    (planted / "data" / "drafts").mkdir()
    (planted / "data" / "drafts" / "semif.toml").write_text("")  # what a skill may write in its write dir
    assert Workspace.load(planted).write_roots[0] == planted / "data" / "drafts"
    own = tmp_path / "shared" / "semif" / "workspace"
    monkeypatch.setenv("SEMIF_HOME", str(own))
    message = refusal(tmp_path, f'[skills]\nwrite_dirs = ["{tmp_path / "shared"}"]\n', name="mine")
    assert f'"{tmp_path / "shared"}" holds another workspace, your own {own}' in message


def test_a_workspace_inside_another_folder_with_settings_loads(tmp_path: Path) -> None:
    outer = workspace(tmp_path, "", name="outer")
    ws = Workspace.load(workspace(outer, f'[skills]\nwrite_dirs = ["data/drafts", "{tmp_path / "shared"}"]\n'))
    assert ws.write_roots == (outer / "ws" / "data" / "drafts", tmp_path / "shared")
