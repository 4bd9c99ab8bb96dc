"""The behavioural gate: run a body, in a separate limited process, on sample requests.

The body runs against a throw-away copy of the workspace's data, with the
scripted engine answering each decision twice (the first real option, then
``none``). It must return the right types, write only under the data dirs,
and stay within its ``cost_budget``; a crash, a hang or a memory blow-up is a
failure too. The host's data is never touched.
"""

from __future__ import annotations

import asyncio
import json
import os
import shutil
import signal
import sys
import tempfile
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ..workspace import Workspace
from .checker import Violation

GATE_TIMEOUT = 30.0
MEMORY_LIMIT = 1 << 30
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
    """Run ``source`` on ``samples`` in a child process against a copy of ``workspace``'s data."""
    with tempfile.TemporaryDirectory(prefix="semif-gate-") as tmp:
        copy = _copy_data(workspace, Path(tmp) / "ws")
        body = Path(tmp) / "body.py"
        body.write_text(source, encoding="utf-8")
        job = {"name": name, "category": category, "budget": budget, "body": str(body), "samples": samples,
               "config": _config(workspace, copy), "write_roots": [str(r) for r in copy.write_roots]}
        process = await asyncio.create_subprocess_exec(
            sys.executable, "-m", "semif_agent.forge._gate_child",
            stdin=asyncio.subprocess.PIPE, stdout=asyncio.subprocess.PIPE, stderr=asyncio.subprocess.PIPE,
            cwd=str(copy.root), start_new_session=True, preexec_fn=_limit, env=_env(),
        )
        try:
            out, err = await asyncio.wait_for(process.communicate(json.dumps(job).encode()), timeout)
        except asyncio.TimeoutError:
            _kill(process.pid)
            await process.wait()
            return GateReport(False, error=f"the body did not finish its sample runs within {timeout:g} s")
        finally:
            _kill(process.pid)
    lines = out.decode(errors="replace").strip().splitlines()
    try:
        report = json.loads(lines[-1])
    except (IndexError, json.JSONDecodeError):
        tail = err.decode(errors="replace").strip().splitlines()[-1:] or [f"exit status {process.returncode}"]
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


def _limit() -> None:  # runs in the child before exec
    import resource

    resource.setrlimit(resource.RLIMIT_AS, (MEMORY_LIMIT, MEMORY_LIMIT))
    resource.setrlimit(resource.RLIMIT_CORE, (0, 0))


def _env() -> dict[str, str]:
    keep = ("PATH", "LANG", "LC_ALL", "PYTHONPATH", "SEMIF_CACHE_DIR")
    return {k: v for k, v in os.environ.items() if k in keep}


def _kill(pid: int) -> None:
    try:
        os.killpg(pid, signal.SIGKILL)
    except (ProcessLookupError, PermissionError):
        pass
