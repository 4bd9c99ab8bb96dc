"""Shared fixtures: isolated user dirs and caches, no real model calls, the loopback wire server,
small workspaces built from code, and one local Ray cluster for the run; and the fast default.

Plain ``python -m pytest`` (or a folder) runs the fast subset: tests marked
``slow``, ``browser``, ``cluster``, ``extras`` or ``reference`` (see pyproject.toml) are
left out. ``--all`` runs every test; so does naming a test file or a test,
or choosing with ``-m`` or ``-k``. Tests that use the ``cluster``, ``browser``,
``reference_python`` or ``reference_sdist`` fixtures get their marker from it.
The fast subset runs in one process a core where pytest-xdist is installed
(``-n 0`` for one process). A one-process fast run names, at its end, the
tests that cost more than :data:`FAST_TEST_CPU_SECONDS` of CPU, so the fast
subset stays fast.

``tests/`` goes on ``sys.path`` so ``support`` (the shared test helpers) imports.
"""

from __future__ import annotations

import json
import os
import resource
import sys
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parent))

from support.seed_body import seed_body
from support.wire_server import WireServer

from semif_agent.llm import RetryPolicy, block_model_requests, create_provider

FIXTURES = Path(__file__).parent / "fixtures"
SKILLS_CORPUS = FIXTURES / "skills-corpus"  # 24 real SKILL.md skills (see its README)
SEED_BODY = seed_body(FIXTURES)
CONTACTS = [
    {"name": "Alice", "email": "alice@example.com", "description": "Alice Martin, finance lead, quarterly reports"},
    {"name": "Bob", "email": "bob@example.com", "description": "Bob Chen, engineering manager"},
]


LEFT_OUT_BY_DEFAULT = ("slow", "browser", "cluster", "extras", "reference")
"""The markers of the tests the fast default leaves out."""
LEFT_OUT = ", ".join(LEFT_OUT_BY_DEFAULT[:-1]) + f" or {LEFT_OUT_BY_DEFAULT[-1]}"

MARKER_OF_FIXTURE = {
    "cluster": "cluster",
    "browser": "browser",
    "reference_python": "reference",
    "reference_sdist": "reference",
}
"""A test that uses one of these fixtures, even through another fixture, gets the marker."""


def pytest_addoption(parser: pytest.Parser) -> None:
    parser.addoption(
        "--all",
        action="store_true",
        dest="run_all",
        help=f"run every test: without it, a plain run or a folder leaves out the tests marked {LEFT_OUT}",
    )


def fast_default(config: pytest.Config) -> bool:
    """Whether this run leaves the slow tests out: no ``--all``, ``-m`` or ``-k``, and no test file or test named."""
    if config.option.run_all or config.option.markexpr or config.option.keyword:
        return False
    named = [arg.split("::", 1)[0] for arg in config.args]
    return not any("::" in arg for arg in config.args) and not any(Path(arg).is_file() for arg in named)


FAST_DEFAULT_PROCESSES = 4
"""At most this many processes run the fast default (one a core, where there are two or more cores)."""


@pytest.hookimpl(tryfirst=True)  # before pytest-xdist's own, which turns the number of processes into workers
def pytest_cmdline_main(config: pytest.Config) -> None:
    """The fast default runs in one process a core (up to :data:`FAST_DEFAULT_PROCESSES`) where pytest-xdist is
    installed, unless ``-n`` says otherwise (``-n 0``: one process, and the CPU report at the end)."""
    if hasattr(config, "workerinput") or not config.pluginmanager.hasplugin("xdist"):
        return
    cores = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count() or 1
    if config.option.numprocesses is None and cores > 1 and fast_default(config) and not config.option.usepdb:
        config.option.numprocesses = min(cores, FAST_DEFAULT_PROCESSES)


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    for item in items:
        for fixture in set(getattr(item, "fixturenames", ())) & MARKER_OF_FIXTURE.keys():
            item.add_marker(MARKER_OF_FIXTURE[fixture])
    if not fast_default(config):
        return
    kept = [item for item in items if not any(item.get_closest_marker(name) for name in LEFT_OUT_BY_DEFAULT)]
    if len(kept) < len(items):
        config.hook.pytest_deselected(items=[item for item in items if item not in kept])
        items[:] = kept


FAST_TEST_CPU_SECONDS = 3.0
"""A test of the fast subset that costs more CPU than this (its own and its finished processes', setup included)
is named at the end of a fast run: mark it slow, or make it cheaper. CPU time, not wall time, so a busy machine
does not name tests that are only waiting for a core."""
COSTLY = pytest.StashKey[list[tuple[float, str]]]()


def _cpu_seconds() -> float:
    me, children = resource.getrusage(resource.RUSAGE_SELF), resource.getrusage(resource.RUSAGE_CHILDREN)
    return me.ru_utime + me.ru_stime + children.ru_utime + children.ru_stime


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_protocol(item: pytest.Item, nextitem: pytest.Item | None) -> Iterator[None]:
    if not fast_default(item.config):
        yield
        return
    before = _cpu_seconds()
    yield
    spent = _cpu_seconds() - before
    if spent > FAST_TEST_CPU_SECONDS:
        item.config.stash.setdefault(COSTLY, []).append((spent, item.nodeid))


def pytest_terminal_summary(terminalreporter: pytest.TerminalReporter, config: pytest.Config) -> None:
    costly = sorted(config.stash.get(COSTLY, []), reverse=True)
    if costly:
        terminalreporter.write_sep(
            "=", f"fast tests over {FAST_TEST_CPU_SECONDS:g} CPU-seconds: mark them slow or make them cheaper"
        )
        for spent, nodeid in costly:
            terminalreporter.write_line(f"{spent:6.1f} CPU-s  {nodeid}")


def pytest_report_header(config: pytest.Config) -> str | None:
    if fast_default(config):
        return f"the fast subset: tests marked {LEFT_OUT} are left out (--all runs every test)"
    return None


@pytest.fixture(scope="session")
def cluster(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Any]:
    """The ``ray`` module, connected to one local cluster of 2 CPUs for the whole run, with its own embedding cache.

    Started by the first test that asks for it and shut down at the end of the
    run; skipped without the ``ray`` extra. The workers cache embeddings in a
    folder of their own, so nothing they compute comes from what a local run
    in the same test computed.
    """
    ray = pytest.importorskip("ray", reason="the ray extra is not installed: pip install 'semif-agent[ray]'")
    cache = tmp_path_factory.mktemp("cluster-cache")
    env = {"SEMIF_CACHE_DIR": str(cache)}
    if os.environ.get("PYTHONPATH"):
        env["PYTHONPATH"] = os.environ["PYTHONPATH"]
    ray.init(num_cpus=2, include_dashboard=False, log_to_driver=False, runtime_env={"env_vars": env})
    try:
        yield ray
    finally:
        ray.shutdown()


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
    """No test sees the host's provider keys or endpoints, nor its secrets file."""
    for name in (*PROVIDER_ENV, "SEMIF_SECRETS", "XDG_CONFIG_HOME"):
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
