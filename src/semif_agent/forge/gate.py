"""The behavioural gate: run a body, in a separate limited process, on sample requests.

The body runs in the skill sandbox (the confined process SKILL.md scripts run
in: memory, CPU, file-size and process limits, a reduced environment, and,
where the kernel has Landlock, writes only to its own folders), against a
throw-away copy of the workspace, with the scripted engine answering each
decision twice (the first real option, then ``none``). It must return the
right types, write only under the write dirs (the write guard names the
offending path) and stay within its ``cost_budget``; a crash, a hang or a
memory blow-up is a failure too. The host's data is never touched.

What the body can read matches a real run: the copy is a folder named like
the workspace (no trace of the gate in any path), with its settings, its
manifests and skill bodies (the candidate at its own body path), a copy of
the write dirs, and its read-only inputs (``[paths]`` entries outside the
write dirs) linked at their usual places; ``ctx.config`` has the same keys,
``ctx.run_id`` is a run id like any other, the engine bears the workspace
engine's name and model, and ``ctx`` is the same class with the same
attributes. Sample runs still differ in what no body should look at (the
time, the process, the folder above the workspace).
"""

from __future__ import annotations

import json
import os
import shutil
import tempfile
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ..contract import Violation
from ..tree.manifests import body_path_for
from ..workspace import Workspace

GATE_TIMEOUT = 30.0
MEMORY_MB = 1024
CHILD = Path(__file__).with_name("_gate_child.py")


@dataclass
class GateReport:
    ok: bool
    results: list[dict[str, Any]] = field(default_factory=list)
    error: str = ""

    def violations(self) -> list[Violation]:
        if self.error:
            return [Violation("gate", 1, self.error)]
        kinds = {"write": "writes outside the data dirs", "budget": "exceeds its cost_budget",
                 "types": "returns the wrong types", "error": "raises"}
        out = []
        for result in self.results:
            if not result["ok"]:
                what = kinds.get(result.get("kind", ""), "fails")
                out.append(Violation("gate", 1, f"{what} on {result['request']!r} "
                                                f"(engine answering {result['answers']}): {result['problem']}"))
        return out

    def to_dict(self) -> dict[str, Any]:
        return {"ok": self.ok, "results": self.results, "error": self.error}


async def run_gate(
    source: str, *, name: str, category: str, budget: int, samples: list[str], workspace: Workspace,
    timeout: float = GATE_TIMEOUT, engine_name: str | None = None, engine_model: str | None = None,
) -> GateReport:
    """Run ``source`` on ``samples`` in the sandbox against a copy of ``workspace``.

    ``engine_name``/``engine_model`` are what the body's engine says it is
    (default: the workspace's engine).
    """
    from ..catalog.limits import SandboxLimits, confinement_spec
    from ..catalog.sandbox import run_subprocess

    with tempfile.TemporaryDirectory() as tmp:
        base = Path(tmp)
        copy = base / workspace.root.name
        moved, linked = _copy_workspace(workspace, copy)
        body = Path(moved(str(body_path_for(workspace.bodies_dir, category, name))))
        body.parent.mkdir(parents=True, exist_ok=True)
        body.write_text(source, encoding="utf-8")
        config = {k: moved(v) if isinstance(v, str) else v for k, v in workspace.skill_config().items()}
        job_dir = base / "job"
        job_dir.mkdir()
        job = {"name": name, "category": category, "budget": budget, "body": str(body), "samples": samples,
               "config": config, "write_roots": [moved(str(r)) for r in workspace.write_roots],
               "engine": engine_name or _engine_name(workspace), "model": engine_model}
        (job_dir / "job.json").write_text(json.dumps(job), encoding="utf-8")
        run_dir = base / "run"
        run_dir.mkdir()
        outside = [v for k, v in config.items() if isinstance(v, str) and k != "workspace" and Path(v).is_absolute()
                   and not _inside(Path(v), copy) and Path(v).exists()]
        limits = SandboxLimits(memory_mb=MEMORY_MB, readable_paths=tuple(dict.fromkeys((*linked, *outside))))
        spec = confinement_spec(limits, timeout_sec=timeout, workspace_root=copy, skill_dir=job_dir, run_dir=run_dir)
        env = {k: v for k, v in os.environ.items() if k in limits.env_allow}
        env.update({"HOME": os.environ.get("HOME", str(copy)), "TMPDIR": str(run_dir), "PYTHONDONTWRITEBYTECODE": "1"})
        result = await run_subprocess(CHILD, [str(job_dir / "job.json")], cwd=copy, env=env, spec=spec,
                                      timeout_sec=timeout, max_output_bytes=limits.max_output_bytes)
    if result.error_type == "timeout":
        return GateReport(False, error=f"the body did not finish its sample runs within {timeout:g} s")
    lines = result.stdout.strip().splitlines()
    try:
        report = json.loads(lines[-1])
    except (IndexError, json.JSONDecodeError):
        tail = result.stderr.strip().splitlines()[-1:] or [f"exit status {result.exit_code} ({result.error_type})"]
        return GateReport(False, error=f"the sample run crashed: {tail[0][:300]}")
    if not report["loaded"]:
        return GateReport(False, error=f"the body could not be loaded: {report['error']}")
    results = report["results"]
    return GateReport(all(r["ok"] for r in results), results)


def _copy_workspace(workspace: Workspace, dest: Path) -> tuple[Callable[[str], str], list[str]]:
    """Copy ``workspace`` to ``dest``: settings, manifests, bodies and write dirs copied, read-only inputs linked.

    Returns a function mapping an original path to its place in the copy
    (a data dir or write dir outside the workspace goes under ``dest/.outside``;
    other paths are kept), and the originals the links point to.
    """
    places = {workspace.root: dest}
    if not _inside(workspace.data_dir, workspace.root):
        places[workspace.data_dir] = dest / ".outside" / "data"
    for root in workspace.write_roots:
        if not _inside(root, workspace.root):
            places[root] = dest / ".outside" / root.name

    def moved(value: str) -> str:
        path = Path(value)
        for original, place in sorted(places.items(), key=lambda item: -len(item[0].parts)):
            if path == original or original in path.parents:
                return str(place / path.relative_to(original))
        return value

    dest.mkdir(parents=True)
    shutil.copy2(workspace.settings_file, dest / workspace.settings_file.name)
    data = Path(moved(str(workspace.data_dir)))
    data.mkdir(parents=True, exist_ok=True)
    if workspace.categories_path.is_file():
        shutil.copy2(workspace.categories_path, data / workspace.categories_path.name)
    if workspace.bodies_dir.is_dir():
        shutil.copytree(workspace.bodies_dir, data / workspace.bodies_dir.name,
                        ignore=shutil.ignore_patterns("__pycache__", "*.pyc", ".*"))
    for root in workspace.write_roots:
        target = Path(moved(str(root)))
        if root.is_dir():
            shutil.copytree(root, target, symlinks=True, dirs_exist_ok=True, ignore=shutil.ignore_patterns(".*"))
        else:
            target.mkdir(parents=True, exist_ok=True)
    linked = []
    for key, value in workspace.skill_config().items():
        if key == "workspace" or not isinstance(value, str):
            continue
        original, copied = Path(value), Path(moved(value))
        if copied == original or copied.exists() or copied.is_symlink() or not original.exists():
            continue
        copied.parent.mkdir(parents=True, exist_ok=True)
        copied.symlink_to(original, target_is_directory=original.is_dir())
        linked.append(value)
    return moved, linked


def _inside(path: Path, root: Path) -> bool:
    return path == root or root in path.parents


def _engine_name(workspace: Workspace) -> str:
    from ..engine.registry import default_engine_name

    return workspace.settings["engine"].get("name") or default_engine_name()
