"""The repository's root holds only what belongs there, CI runs the README's test command, and every row of
SECURITY.md names a test that exists."""

from __future__ import annotations

import re
import shutil
import subprocess
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]

TOP_LEVEL = {".ci", ".gitignore", "README.md", "SECURITY.md", "bench", "clients", "pyproject.toml", "src", "tests"}
"""Every tracked entry allowed at the root; a licence, notice or changelog file may sit beside them."""

BESIDE = re.compile(r"(LICEN[CS]E|NOTICE|COPYING|CHANGELOG|CHANGES)(\.(md|txt|rst))?", re.IGNORECASE)


def tracked_top_level() -> set[str]:
    if shutil.which("git") is None:
        pytest.skip("git is not installed: the tracked files cannot be listed")
    listed = subprocess.run(["git", "ls-files"], cwd=ROOT, capture_output=True, text=True, check=False)
    if listed.returncode != 0 or not listed.stdout:
        pytest.skip("not a git checkout: the tracked files cannot be listed")
    return {line.split("/", 1)[0] for line in listed.stdout.splitlines()}


def test_the_root_holds_only_what_belongs_there() -> None:
    stray = {name for name in tracked_top_level() - TOP_LEVEL if not BESIDE.fullmatch(name)}
    assert stray == set(), "a file left by a run, or a new top-level entry: remove it, or add it to TOP_LEVEL"


def test_ci_runs_the_readmes_test_command() -> None:
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    quick_start = readme[readme.index("## Quick start") : readme.index("\n## ", readme.index("## Quick start") + 1)]
    commands = re.findall(r"^```sh\n(.*?)\n```$", quick_start, re.S | re.M)
    ci = [
        line for line in (ROOT / ".ci" / "run").read_text(encoding="utf-8").splitlines() if line.startswith("python3")
    ]
    assert len(commands) == 2 and ci == [commands[1]]
    assert commands[1].endswith("python -m pytest --all"), "CI and the README run every test, not the fast subset"


def test_every_boundary_of_the_threat_model_names_a_test_that_exists() -> None:
    model = (ROOT / "SECURITY.md").read_text(encoding="utf-8")
    rows = [line for line in model.splitlines() if line.startswith("| ") and not line.startswith("| boundary")]
    boundaries = [row for row in rows if row.count(" | ") >= 3 and not set(row) <= set("|- ")]
    assert len(boundaries) >= 20
    for row in boundaries:
        named = re.findall(r"(tests/[\w/]+\.py)(?:::(\w+))?", row.rsplit(" | ", 1)[-1])
        assert named, f"a boundary without its test: {row[:80]}"
        for path, test in named:
            source = (ROOT / path).read_text(encoding="utf-8")
            assert not test or re.search(rf"^(async )?def {test}\(", source, re.M), f"{path}::{test} does not exist"
