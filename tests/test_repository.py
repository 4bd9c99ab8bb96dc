"""The repository's root holds only what belongs there, CI runs the README's test command, every row of
SECURITY.md names a test that exists, and the package gives one name to one thing."""

from __future__ import annotations

import ast
import re
import shutil
import subprocess
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
PACKAGE = ROOT / "src" / "semif_agent"

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


def public_classes() -> list[tuple[str, ast.ClassDef]]:
    """Every public class defined at the top of a module of the package, with its module's path."""
    found = []
    for path in sorted(PACKAGE.rglob("*.py")):
        tree = ast.parse(path.read_text(encoding="utf-8"))
        module = path.relative_to(PACKAGE).as_posix()
        found += [(module, node) for node in tree.body if isinstance(node, ast.ClassDef) and node.name[0] != "_"]
    return found


def test_no_two_public_classes_share_a_name() -> None:
    defined: dict[str, list[str]] = {}
    for module, node in public_classes():
        defined.setdefault(node.name, []).append(module)
    twice = {name: modules for name, modules in defined.items() if len(modules) > 1}
    assert twice == {}, "one name, two classes: name each for what it holds"


def test_router_names_only_the_public_chooser() -> None:
    """Other classes that pick are named for what they are (the tree's walker, the learned head); an interface a host
    implements (a Protocol) or an error about a router may still say router."""
    routers = [
        f"{module}:{node.name}"
        for module, node in public_classes()
        if node.name.endswith("Router")
        and not any(ast.unparse(base).endswith(("Protocol", "Error")) for base in node.bases)
    ]
    assert routers == ["chooser/router.py:Router"]


def test_no_deprecated_alias_beyond_the_ones_a_seed_names() -> None:
    """A 0.1.0 package has no former names to keep: the only deprecated names are the ``*_by_name`` methods seed 003
    gives ``AgentSkillRuntime`` (each a "Deprecated alias"), and no module inspects its caller's frame to warn."""
    aliases, warning, frames = [], [], []
    for path in sorted(PACKAGE.rglob("*.py")):
        text = path.read_text(encoding="utf-8")
        module = path.relative_to(PACKAGE).as_posix()
        aliases += [f"{module}:{name}" for name in re.findall(r"def (\w+)\(.*\n\s+\"\"\"Deprecated alias", text)]
        warning += [module] if "DeprecationWarning" in text else []
        frames += [module] if "_getframe" in text else []
    assert aliases == [
        "catalog/runtime.py:resolve_skill_id_by_name",
        "catalog/runtime.py:activate_skill_by_name",
        "catalog/runtime.py:deactivate_skill_by_name",
    ]
    assert warning == ["catalog/runtime.py"]
    assert frames == []
