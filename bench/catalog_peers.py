"""The peers the catalog benchmarks measure against, installed under ``.bench/`` (git-ignored).

- ``skills-ref`` 0.1.1, the Agent Skills reference library, in its own virtual
  environment (``.bench/skills-ref-venv``); timed inside that interpreter.
- ``agentsociety2`` 2.9.3's skill registry and runtime: its wheel (that version, pinned) is downloaded
  without dependencies and unpacked (``.bench/agentsociety2``), and only the
  modules the skill code needs (PyYAML and the standard library) are loaded,
  without running the package's heavy ``__init__`` files.

Also the generator of skill folders the benchmarks scan.
"""

from __future__ import annotations

import importlib
import subprocess
import sys
import types
import zipfile
from pathlib import Path
from typing import Any

from _fair import peer_venv

REPO = Path(__file__).resolve().parents[1]
BENCH = REPO / ".bench"
SKILLS_REF_VERSION = "0.1.1"
AGENTSOCIETY2 = "2.9.3"


def _run(command: list[str]) -> None:
    done = subprocess.run(command, capture_output=True, text=True)
    if done.returncode != 0:
        raise SystemExit(f"failed: {' '.join(command)}\n{done.stderr[-2000:]}")


def skills_ref_python() -> Path:
    """The Python of a virtual environment with skills-ref 0.1.1 (created on first use, checked on each)."""
    return peer_venv("skills-ref-venv", {"skills-ref": SKILLS_REF_VERSION})


def agentsociety2() -> dict[str, Any]:
    """agentsociety2's ``skill_registry`` and ``skill_runtime`` modules (and friends), loaded directly."""
    target = BENCH / "agentsociety2"
    if not (target / "agentsociety2").is_dir():
        wheels = BENCH / "wheels"
        wheels.mkdir(parents=True, exist_ok=True)
        if not list(wheels.glob(f"agentsociety2-{AGENTSOCIETY2}-*.whl")):
            _run(
                [
                    sys.executable,
                    "-m",
                    "pip",
                    "download",
                    "--quiet",
                    "--no-deps",
                    "--disable-pip-version-check",
                    f"agentsociety2=={AGENTSOCIETY2}",
                    "-d",
                    str(wheels),
                ]
            )
        with zipfile.ZipFile(next(wheels.glob(f"agentsociety2-{AGENTSOCIETY2}-*.whl"))) as wheel:
            wheel.extractall(target)
    package = target / "agentsociety2"
    for name, folder in (
        ("agentsociety2", package),
        ("agentsociety2.agent", package / "agent"),
        ("agentsociety2.agent.base", package / "agent" / "base"),
    ):
        if name not in sys.modules:  # namespace stubs: skip the heavy __init__ files
            stub = types.ModuleType(name)
            stub.__path__ = [str(folder)]  # type: ignore[attr-defined]  # a stub package for the peer's imports
            sys.modules[name] = stub
    modules = {
        short: importlib.import_module(f"agentsociety2.{path}")
        for short, path in (
            ("registry", "agent.base.skill_registry"),
            ("runtime", "agent.base.skill_runtime"),
            ("fs", "agent.base.workspace_fs"),
            ("trace", "trace"),
        )
    }
    unpacked = [p.name.removesuffix(".dist-info").split("-")[1] for p in target.glob("agentsociety2-*.dist-info")]
    if unpacked != [AGENTSOCIETY2]:
        raise SystemExit(
            f"{target} holds agentsociety2 {unpacked}, the benches pin {AGENTSOCIETY2}: remove it to unpack again"
        )
    modules["version"] = AGENTSOCIETY2
    return modules


def generate_skills(root: Path, count: int, *, hook: str | None = None) -> list[Path]:
    """``count`` skill folders under ``root``, each with a SKILL.md, a reference and (optionally) a hook."""
    root.mkdir(parents=True, exist_ok=True)
    folders = []
    for index in range(count):
        name = f"skill-{index:05d}"
        folder = root / name
        (folder / "references").mkdir(parents=True, exist_ok=True)
        hooks = "hooks:\n  pre_step: scripts/hook.py\n" if hook else ""
        (folder / "SKILL.md").write_text(
            f"---\nname: {name}\ndescription: Handles task family {index}; use it when the request mentions topic {index}.\n"
            f'license: MIT\nmetadata:\n  author: bench\n  version: "1.{index % 10}"\n{hooks}---\n'
            f"# {name}\n\nStep one. Step two. See references/notes.md.\n",
            encoding="utf-8",
        )
        (folder / "references" / "notes.md").write_text("notes\n", encoding="utf-8")
        if hook:
            (folder / "scripts").mkdir(exist_ok=True)
            (folder / "scripts" / "hook.py").write_text(hook, encoding="utf-8")
        folders.append(folder)
    return folders
