"""Provider keys come from the environment or a secrets file outside the workspace, never from semif.toml."""

from __future__ import annotations

import pytest

from semif_agent.errors import WorkspaceError
from semif_agent.llm import ProviderConfigError
from semif_agent.llm.providers.openai import OpenAIProvider
from semif_agent.llm.secrets import read_secret, secret_source, secrets_file
from semif_agent.llm.settings import connection_options, default_model
from semif_agent.starter import create_workspace
from semif_agent.workspace import Workspace


def _secrets(tmp_path, text, mode=0o600):
    path = tmp_path / "secrets.toml"
    path.write_text(text, encoding="utf-8")
    path.chmod(mode)
    return path


def test_the_environment_wins_over_the_secrets_file(tmp_path, monkeypatch) -> None:
    path = _secrets(tmp_path, 'OPENAI_API_KEY = "from-file"\nOTHER = "other"\n')
    monkeypatch.setenv("SEMIF_SECRETS", str(path))
    assert secret_source("OTHER") == ("other", str(path))
    assert read_secret("OPENAI_API_KEY") == "from-file"
    monkeypatch.setenv("OPENAI_API_KEY", "from-env")
    assert secret_source("OPENAI_API_KEY") == ("from-env", "$OPENAI_API_KEY")
    assert read_secret("MISSING") is None


def test_the_default_file_is_under_the_user_config_folder(tmp_path, monkeypatch) -> None:
    monkeypatch.setenv("XDG_CONFIG_HOME", str(tmp_path / "config"))
    assert secrets_file() == tmp_path / "config" / "semif" / "secrets.toml"
    (tmp_path / "config" / "semif").mkdir(parents=True)
    _secrets(tmp_path / "config" / "semif", 'ANTHROPIC_API_KEY = "ant"\n')
    assert read_secret("ANTHROPIC_API_KEY") == "ant"
    choice = default_model({})
    assert choice.detected and choice.model.startswith("anthropic/")
    assert choice.reason == "ANTHROPIC_API_KEY in the secrets file"


def test_a_provider_takes_its_key_and_a_named_variable_from_the_file(tmp_path, monkeypatch) -> None:
    path = _secrets(tmp_path, 'OPENAI_API_KEY = "sk-default"\nMY_KEY = "sk-named"\n')
    monkeypatch.setenv("SEMIF_SECRETS", str(path))
    assert OpenAIProvider("test-model").api_key == "sk-default"
    options = connection_options("openai", {"provider": {"api_key_env": "MY_KEY"}}, primary=True)
    assert options["api_key"] == "sk-named"


@pytest.mark.parametrize("mode", [0o644, 0o640, 0o604])
def test_a_file_others_can_read_is_refused_naming_the_fix(tmp_path, monkeypatch, mode) -> None:
    path = _secrets(tmp_path, 'OPENAI_API_KEY = "sk-open"\n', mode)
    monkeypatch.setenv("SEMIF_SECRETS", str(path))
    with pytest.raises(ProviderConfigError, match="chmod 600") as caught:
        read_secret("OPENAI_API_KEY")
    assert "sk-open" not in str(caught.value)


def test_a_link_or_bad_toml_is_refused(tmp_path, monkeypatch) -> None:
    real = _secrets(tmp_path, 'OPENAI_API_KEY = "x"\n')
    link = tmp_path / "link.toml"
    link.symlink_to(real)
    monkeypatch.setenv("SEMIF_SECRETS", str(link))
    with pytest.raises(ProviderConfigError, match="cannot read"):
        read_secret("OPENAI_API_KEY")
    broken = tmp_path / "broken.toml"
    broken.write_text("OPENAI_API_KEY = \n")
    broken.chmod(0o600)
    monkeypatch.setenv("SEMIF_SECRETS", str(broken))
    with pytest.raises(ProviderConfigError, match="not valid TOML"):
        read_secret("OPENAI_API_KEY")


@pytest.mark.parametrize(
    ("table", "where"),
    [
        ('[provider]\napi_key = "sk-1"\n', "[provider] api_key"),
        ('[provider.openai]\napi_key = "sk-1"\n', "[provider.openai] api_key"),
        ('[judge]\napi_key = "sk-1"\n', "[judge] api_key"),
        ('[provider]\nfallbacks = [{model = "openai/m", api_key = "sk-1"}]\n', "[provider.fallbacks] api_key"),
        ('[notes]\nOPENAI_API_KEY = "sk-1"\n', "[notes] OPENAI_API_KEY"),  # a table bodies are given, as [config]
        ('[provider]\nopenai_api_key = "sk-1"\n', "[provider] openai_api_key"),
        ('[provider.openai]\ndefault_headers = {Authorization = "Bearer sk-1"}\n', "Authorization"),
        ('[tools]\ngithub_token = "sk-1"\n', "[tools] github_token"),
        ('[notes]\ngithubToken = "sk-1"\n', "[notes] githubToken"),  # camel case
        ('[notes]\nclientSecret = "sk-1"\n', "[notes] clientSecret"),
        ('[notes]\nOPENAI_KEY = "sk-1"\n', "[notes] OPENAI_KEY"),
        ('[notes]\npassphrase = "sk-1"\n', "[notes] passphrase"),
    ],
)
def test_a_key_in_semif_toml_is_refused(tmp_path, table, where) -> None:
    root = create_workspace(tmp_path / "ws")
    with (root / "semif.toml").open("a", encoding="utf-8") as handle:
        handle.write("\n" + table)
    with pytest.raises(WorkspaceError) as caught:
        Workspace.load(root)
    message = str(caught.value)
    assert where in message and "secrets file" in message and "sk-1" not in message
    assert "\n" not in message


def test_settings_that_name_a_variable_or_count_tokens_are_not_credentials(tmp_path) -> None:
    root = create_workspace(tmp_path / "ws")
    with (root / "semif.toml").open("a", encoding="utf-8") as handle:
        handle.write(
            '\n[provider]\napi_key_env = "MY_KEY"\nmax_tokens_field = "max_completion_tokens"\n'
            '[notes]\nauthor = "Ann"\nkeyword = "x"\nauth = false\n'
        )
    assert Workspace.load(root).settings.provider["api_key_env"] == "MY_KEY"
