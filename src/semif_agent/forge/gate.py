"""The behavioural gate: run a body, in a separate limited process, on sample requests.

The body runs in the skill sandbox (the confined process SKILL.md scripts run
in: memory, CPU, file-size and process limits, a reduced environment, and,
where the kernel has Landlock, writes only to its own folders), against a
throw-away copy of the workspace's data, with the scripted engine answering
each decision twice (the first real option, then ``none``). It must return
the right types, write only under the data dirs (the write guard names the
offending path) and stay within its ``cost_budget``; a crash, a hang or a
memory blow-up is a failure too. The host's data is never touched.
"""

from __future__ import annotations

import json
import os
import shutil
import tempfile
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ..workspace import Workspace
from .checker import Violation

GATE_TIMEOUT = 30.0
MEMORY_MB = 1024
CHILD = Path(__file__).with_name("_gate_child.py")
_SKIP = ("decisions.jsonl", "skills", "routing.json")


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
    timeout: float = GATE_TIMEOUT,
) -> GateReport:
    """Run ``source`` on ``samples`` in the sandbox against a copy of ``workspace``'s data."""
    from ..catalog.limits import SandboxLimits, confinement_spec
    from ..catalog.sandbox import run_subprocess

    with tempfile.TemporaryDirectory(prefix="semif-gate-") as tmp:
        base = Path(tmp)
        copy = _copy_data(workspace, base / "ws")
        code = base / "body"
        code.mkdir()
        (code / "body.py").write_text(source, encoding="utf-8")
        config = _config(workspace, copy)
        job = {"name": name, "category": category, "budget": budget, "body": str(code / "body.py"),
               "samples": samples, "config": config, "write_roots": [str(r) for r in copy.write_roots]}
        (code / "job.json").write_text(json.dumps(job), encoding="utf-8")
        run_dir = base / "run"
        run_dir.mkdir()
        readable = tuple(str(v) for k, v in config.items() if k != "workspace" and Path(str(v)).exists()
                         and not str(v).startswith(str(copy.root)))
        limits = SandboxLimits(memory_mb=MEMORY_MB, readable_paths=readable)
        spec = confinement_spec(limits, timeout_sec=timeout, workspace_root=copy.root, skill_dir=code, run_dir=run_dir)
        env = {k: v for k, v in os.environ.items() if k in limits.env_allow}
        env.update({"HOME": str(copy.root), "TMPDIR": str(run_dir), "PYTHONDONTWRITEBYTECODE": "1"})
        result = await run_subprocess(CHILD, [str(code / "job.json")], cwd=copy.root, env=env, spec=spec,
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


def _copy_data(workspace: Workspace, dest: Path) -> Workspace:
    """A workspace at ``dest`` with the settings and a copy of the writable data (no log, no bodies)."""
    dest.mkdir(parents=True)
    shutil.copy2(workspace.settings_file, dest / workspace.settings_file.name)
    for root in workspace.write_roots:
        if root.is_dir():
            inside = root == workspace.root or workspace.root in root.parents
            target = dest / (root.relative_to(workspace.root) if inside else root.name)
            shutil.copytree(root, target, symlinks=True,
                            ignore=lambda folder, names: [n for n in names if n in _SKIP or n.startswith(".")])
    return Workspace.load(dest)


def _config(original: Workspace, copy: Workspace) -> dict[str, Any]:
    """The copy's config, except read-only paths (outside the data dirs), which point at the originals."""
    config = copy.skill_config()
    roots = original.write_roots
    for key, value in original.skill_config().items():
        path = Path(str(value))
        if key != "workspace" and path.is_absolute() and not any(path == r or r in path.parents for r in roots):
            config[key] = value
    return config
