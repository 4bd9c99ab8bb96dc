"""Shared fixtures: isolated user dirs and caches, no real model calls, the loopback wire server,
and small workspaces built from code.

``tests/`` goes on ``sys.path`` so ``support`` (the shared test helpers) imports.
"""

from __future__ import annotations

import json
import sys
from collections.abc import Callable
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parent))

from support.wire_server import WireServer

from semif_agent.llm import RetryPolicy, block_model_requests, create_provider

FIXTURES = Path(__file__).parent / "fixtures"
SKILLS_CORPUS = FIXTURES / "skills-corpus"  # 24 real SKILL.md skills (see its README)
SEED_BODY = (FIXTURES / "seed_email_compose.py").read_text(encoding="utf-8")
CONTACTS = [
    {"name": "Alice", "email": "alice@example.com", "description": "Alice Martin, finance lead, quarterly reports"},
    {"name": "Bob", "email": "bob@example.com", "description": "Bob Chen, engineering manager"},
]


PROVIDER_ENV = (
    "OPENAI_API_KEY",
    "OPENAI_BASE_URL",
    "OPENAI_ORG_ID",
    "OPENAI_PROJECT_ID",
    "OPENAI_CUSTOM_HEADERS",
    "ANTHROPIC_API_KEY",
    "ANTHROPIC_AUTH_TOKEN",
    "ANTHROPIC_BASE_URL",
    "ANTHROPIC_PROFILE",
    "ANTHROPIC_CUSTOM_HEADERS",
    "OPENROUTER_API_KEY",
    "OLLAMA_BASE_URL",
)


@pytest.fixture(scope="session", autouse=True)
def _no_real_model_calls():
    """Only loopback endpoints may be called from the suite."""
    with block_model_requests(allow_loopback=True):
        yield


@pytest.fixture(autouse=True)
def _clean_provider_env(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    """No test sees the host's provider keys or endpoints."""
    for name in PROVIDER_ENV:
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("ANTHROPIC_CONFIG_DIR", str(tmp_path / "no-anthropic-config"))


@pytest.fixture(scope="session")
def _wire_server():
    with WireServer() as server:
        yield server


@pytest.fixture
def wire(_wire_server):
    """The loopback server speaking the Anthropic and OpenAI APIs, with no replies queued and no requests recorded."""
    _wire_server.reset()
    yield _wire_server
    _wire_server.reset()


@pytest.fixture
def provider_retry() -> RetryPolicy:
    """The retry policy :func:`provider_for` gives its providers: none here; a suite may override it."""
    return RetryPolicy(max_retries=0)


@pytest.fixture
def provider_for(wire, provider_retry):
    """``provider_for("openai", model="test-model", **options)``: a provider of that API pointed at the wire server."""

    def build(api: str, model: str = "test-model", **options):
        options.setdefault("api_key", "test-key")
        options.setdefault("base_url", wire.base_url(api))
        options.setdefault("retry", provider_retry)
        options.setdefault("timeout", 5.0)
        return create_provider(f"{api}/{model}", **options)

    return build


@pytest.fixture(scope="session", autouse=True)
def _isolate_caches(tmp_path_factory: pytest.TempPathFactory) -> None:
    """Engines built during the tests cache embeddings in a temporary folder."""
    import os

    os.environ["SEMIF_CACHE_DIR"] = str(tmp_path_factory.mktemp("semif-cache"))


@pytest.fixture(autouse=True)
def _isolate_user_dirs(tmp_path_factory: pytest.TempPathFactory, monkeypatch: pytest.MonkeyPatch) -> None:
    """No test touches the real per-user workspace, or sees the user's own ~/.agents/skills."""
    home = tmp_path_factory.mktemp("semif-home")
    monkeypatch.setenv("SEMIF_HOME", str(home / "workspace"))
    monkeypatch.setenv("HOME", str(home))
    monkeypatch.delenv("SEMIF_WORKSPACE", raising=False)  # the workspace a command uses is the one each test gives


@pytest.fixture
def make_workspace(tmp_path: Path) -> Callable[..., Path]:
    """Build a workspace: ``make_workspace(skills={"email.compose": SOURCE or None}, ...)``.

    ``None`` as a source makes a stub. With ``admitted``, the bodies' digests
    are recorded as if they had passed admission, so a run goes straight to
    the runtime checks (a body that fails the static contract still runs).
    Returns the workspace root.
    """

    def build(
        skills: dict[str, str | None] | None = None,
        *,
        categories: dict[str, str] | None = None,
        budgets: dict[str, int] | None = None,
        descriptions: dict[str, str] | None = None,
        settings: str = "",
        name: str = "ws",
        admitted: bool = False,
    ) -> Path:
        root = tmp_path / name
        (root / "data").mkdir(parents=True)
        skills = {"email.compose": SEED_BODY} if skills is None else skills
        cats = categories or {n.split(".")[0]: f"{n.split('.')[0]} things" for n in skills}
        manifests = []
        for full, source in skills.items():
            category, leaf = full.split(".", 1)
            manifests.append(
                {
                    "name": full,
                    "category": category,
                    "description": (descriptions or {}).get(full, f"{leaf.replace('_', ' ')} for {category}"),
                    "cost_budget": (budgets or {}).get(full, 3),
                }
            )
            if source is not None:
                body = root / "data" / "skills" / category / f"{leaf}.py"
                body.parent.mkdir(parents=True, exist_ok=True)
                body.write_text(source, encoding="utf-8")
        (root / "data" / "categories.json").write_text(
            json.dumps(
                {
                    "version": 1,
                    "categories": [{"name": n, "description": d} for n, d in cats.items()],
                    "skills": manifests,
                },
                indent=2,
            ),
            encoding="utf-8",
        )
        (root / "data" / "contacts.json").write_text(json.dumps(CONTACTS), encoding="utf-8")
        (root / "semif.toml").write_text(
            '[paths]\ndata = "data"\ndrafts = "data/drafts"\ncontacts = "data/contacts.json"\n' + settings,
            encoding="utf-8",
        )
        if admitted:
            from semif_agent.contract import record_body
            from semif_agent.workspace import Workspace

            ws = Workspace.load(root)
            for full, source in skills.items():
                if source is not None:
                    record_body(ws, full, source)
        return root

    return build
