"""A starter workspace with a few real runs, ``semif ui`` serving it in its own process, and a headless Chromium.

The browser is the system's Chromium (the Debian package), driven by
Playwright; Playwright's own browser download is never used. Without a
Chromium the browser tests are skipped, saying why, except under CI
(``$CI`` set), where a missing browser is a failure.
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest

from semif_agent.engine import create_engine
from semif_agent.loop.runner import SkillRunner
from semif_agent.starter import create_workspace
from semif_agent.workspace import Workspace

REQUESTS = (
    "Email Alice that the quarterly report is ready",
    "Add a note: buy milk on the way home",
    "What is on my calendar tomorrow?",
    "Show my email drafts",
    "<script>window.__injected = 1</script> remind me to water the plants",
)


@dataclass
class Served:
    url: str
    workspace: Path
    process: subprocess.Popen
    said: str = ""  # what it printed before serving


def make_workspace(root: Path, requests: tuple[str, ...] = REQUESTS) -> Path:
    """A starter workspace on the lexical engine, with one real run per request (the real SkillRunner)."""
    create_workspace(root)
    settings = root / "semif.toml"
    settings.write_text(
        settings.read_text(encoding="utf-8").replace("[engine]\n", '[engine]\nname = "lexical"\n', 1), encoding="utf-8"
    )
    runner = SkillRunner(Workspace.load(root), engine=create_engine("lexical"))
    for text in requests:
        runner.run(text)
    return root


def semif_env(home: Path) -> dict[str, str]:
    env = {
        **os.environ,
        "HOME": str(home),
        "SEMIF_HOME": str(home / "semif-workspace"),
        "XDG_DATA_HOME": str(home / "share"),
        "XDG_CONFIG_HOME": str(home / "config"),
        "COLUMNS": "200",
    }
    env.pop("SEMIF_WORKSPACE", None)
    return env


def semif(home: Path, *args: str) -> subprocess.CompletedProcess:
    """``semif ARGS`` in a new process."""
    return subprocess.run(
        [sys.executable, "-m", "semif_agent", *args],
        capture_output=True,
        text=True,
        env=semif_env(home),
        timeout=180,
        check=False,
    )


def start_ui(workspace: Path, home: Path, *extra: str) -> Served:
    """``semif ui -w WORKSPACE --port 0`` in its own process, once it says where it serves."""
    process = subprocess.Popen(
        [sys.executable, "-m", "semif_agent", "ui", "-w", str(workspace), "--port", "0", *extra],
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
        env=semif_env(home),
    )
    said = []
    for line in process.stdout:  # type: ignore[union-attr]  # stdout is a pipe here
        said.append(line)
        found = re.search(r"serving .* at (http://\S+/)", line)
        if found:
            return Served(found.group(1), workspace, process, "".join(said))
    process.wait(timeout=10)
    raise AssertionError("semif ui did not start:\n" + "".join(said))


def stop(served: Served) -> None:
    served.process.terminate()
    try:
        served.process.wait(timeout=10)
    except subprocess.TimeoutExpired:
        served.process.kill()
        served.process.wait(timeout=10)


@pytest.fixture(scope="module")
def served(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Served]:
    """A workspace with a few runs, served by ``semif ui``."""
    base = tmp_path_factory.mktemp("ui")
    server = start_ui(make_workspace(base / "ws"), base / "home")
    yield server
    stop(server)


def chromium_path() -> str | None:
    return shutil.which("chromium") or shutil.which("chromium-browser")


@pytest.fixture(scope="module")
def browser() -> Iterator:
    """One headless system Chromium for the module."""
    path = chromium_path()
    if path is None:
        if os.environ.get("CI"):
            pytest.fail("no chromium on PATH under CI: .ci/run installs it (apt-get install -y chromium)")
        pytest.skip(
            "no chromium on PATH: install the system's Chromium (apt-get install -y chromium) to run the browser tests"
        )
    sync_api = pytest.importorskip("playwright.sync_api", reason="Playwright is not installed (the test extra has it)")
    with sync_api.sync_playwright() as playwright:
        launched = playwright.chromium.launch(executable_path=path, headless=True)
        yield launched
        launched.close()


@pytest.fixture
def page(browser):
    context = browser.new_context(viewport={"width": 1200, "height": 900})
    opened = context.new_page()
    yield opened
    context.close()
