"""Parts 2 and 3 of ``bench/encoder_tuning.py``: real-skill requests after implicit labels, and what tuning costs.

``real_skills``: ``bench/mcp.py``'s ``after_implicit_labels`` (top-1 / top-5
of ``Router.find`` on every other request of ``bench/data/skill_requests.jsonl``,
untrained and after ``semif train`` on implicit labels from the rest), once
with ``semif train --json`` (the head on the frozen encoder) and once with
``semif train --encoder --json``; ``--force`` is measured too where the guard
keeps the routing in use.

``cost``: wall time and peak resident memory (``/usr/bin/time -v``) of
``semif train DATASET --encoder --json`` in a fresh process with an empty
embedding cache, on two workspaces:

- 150 skills x 10 requests: the skills are the test fixtures' real SKILL.md
  skills topped up with variants of them (``bench/tree_scale.py``'s
  ``catalog``), 10 to a category; their 1,500 requests are distinct requests
  of HWU64's train split given to the skills at random (labels that mean
  nothing: this measures time and memory, not accuracy);
- 15,000 labelled requests on HWU64's tree: its train and test splits
  (11,036 distinct requests), then 3,964 of them again prefixed "could you"
  (``bench/learning.py``'s ``many_requests``, as its ``--speed`` does): 14,991
  distinct strings, of which only the 11,036 are distinct requests.

``install_size``: a fresh virtual environment with ``semif-agent[local]``
installed from this checkout, then the ``tune`` extra (``onnx`` where the
project does not define the extra yet): the distributions and the megabytes
it adds.
"""

from __future__ import annotations

import importlib.util
import json
import os
import random
import re
import subprocess
import sys
import tempfile
import time
import tomllib
from pathlib import Path

from learning import hwu_workspace, load_hwu, many_requests, write_dataset

from semif_agent.routing.evaluate import Example, load_dataset

BENCH = Path(__file__).resolve().parent
ROOT = BENCH.parent
SKILLS, PER_SKILL, PER_CATEGORY = 150, 10, 10
LARGE = 15_000


def bench_mcp():
    """``bench/mcp.py``, imported under a name that does not hide the ``mcp`` package."""
    spec = importlib.util.spec_from_file_location("bench_mcp", BENCH / "mcp.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def real_skills(collections: bool) -> None:
    mcp = bench_mcp()
    from skill_retrieval import load_requests, pools

    print("find_skills through the Router after implicit labels (top-1 / top-5 on the held-out half)", flush=True)
    for pool, skills, asked in pools(load_requests(), collections):
        for given in ((), ("--encoder",)):
            started, reports = time.perf_counter(), []
            for label, top1, top5 in mcp.after_implicit_labels(skills, asked, *given, reports=reports):
                print(
                    f"  {pool:<12} {len(skills):>5} skills  {len(asked) // 2:>4} held out  "
                    f"{'semif train ' + ' '.join(given):<22} {label:<26} {top1:6.1%} / {top5:6.1%}",
                    flush=True,
                )
            print(f"  ({time.perf_counter() - started:.0f} s)", flush=True)
            for report in reports:
                print(f"    report: {json.dumps(summarised(report))}", flush=True)


def many_skills_workspace(folder: Path, hwu: Path) -> tuple[Path, Path, str]:
    """The 150 skills x 10 requests workspace, its DATASETS file and where its requests come from."""
    sys.path.insert(0, str(BENCH))
    from tree_scale import FIXTURE_CORPUS, catalog, real_skills

    skills = catalog(real_skills([FIXTURE_CORPUS]), SKILLS)
    categories = [f"group{n // PER_CATEGORY + 1:02d}" for n in range(SKILLS)]
    names = [f"{c}.{re.sub(r'[^a-z0-9]+', '_', s[0]).strip('_')}" for c, s in zip(categories, skills)]
    tree = {
        "version": 1,
        "categories": [{"name": c, "description": f"skills of {c}"} for c in sorted(set(categories))],
        "skills": [{"name": n, "category": c, "description": d} for n, c, (_, d) in zip(names, categories, skills)],
    }
    ws = hwu_workspace(folder / "ws", hwu)
    (ws / "data" / "categories.json").write_text(json.dumps(tree))
    texts = sorted({e.text for e in load_hwu(hwu)[1]})
    picked = random.Random(0).sample(texts, SKILLS * PER_SKILL)
    rows = [Example(text, names[i // PER_SKILL]) for i, text in enumerate(picked)]
    data = write_dataset(folder / "requests.jsonl", rows)
    return ws, data, f"{len(picked):,} distinct HWU64 train requests given to {SKILLS} skills at random"


def large_workspace(folder: Path, hwu: Path) -> tuple[Path, Path, str]:
    tree, train_rows, test = load_hwu(hwu)
    rows = many_requests(train_rows + test, LARGE)
    distinct = len({e.text for e in train_rows + test})
    data = write_dataset(folder / "requests.jsonl", rows)
    return (
        hwu_workspace(folder / "ws", hwu),
        data,
        f"HWU64's train and test splits ({distinct:,} distinct requests), then again prefixed 'could you'",
    )


def timed(command: list[str], env: dict[str, str]) -> tuple[float, int, str, str]:
    """Wall seconds, peak resident bytes, stdout and stderr of ``command`` run under ``/usr/bin/time -v``."""
    started = time.perf_counter()
    done = subprocess.run(["/usr/bin/time", "-v", *command], capture_output=True, text=True, env=env)
    wall = time.perf_counter() - started
    peak = re.search(r"Maximum resident set size \(kbytes\): (\d+)", done.stderr)
    if done.returncode != 0:
        raise SystemExit(f"{' '.join(command[:6])} failed:\n{done.stderr[-3000:]}")
    return wall, int(peak.group(1)) * 1024 if peak else 0, done.stdout, done.stderr


WORKSPACES = {"150x10": many_skills_workspace, "15000": large_workspace}


def cost(hwu: Path, workspaces: list[str], epochs: int | None, install: bool) -> None:
    """``semif train --encoder`` timed on each of ``workspaces`` (:data:`WORKSPACES`), at most ``epochs`` epochs."""
    flags = ["--encoder", "--json"] + (["--epochs", str(epochs)] if epochs else [])
    print(f"semif train DATASET {' '.join(flags)} in a fresh process, empty embedding cache", flush=True)
    for name in workspaces:
        with tempfile.TemporaryDirectory() as tmp:
            ws, data, source = WORKSPACES[name](Path(tmp), hwu)
            env = {**os.environ, "SEMIF_CACHE_DIR": str(Path(tmp) / "cache")}
            command = [sys.executable, "-m", "semif_agent", "train", str(data), "-w", str(ws), *flags]
            wall, peak, out, _ = timed(command, env)
            print(
                f"  {len(load_dataset(data)):,} labelled requests ({source}): {wall:.0f} s, "
                f"peak memory {peak / 2**20:,.0f} MiB",
                flush=True,
            )
            print(f"    report: {json.dumps(summarised(json.loads(out)))}", flush=True)
    if install:
        install_size()


def summarised(report: dict) -> dict:
    """What a reader of the cost wants of a training report: its timings, the tuning's, and the decision."""
    found: dict = {"seconds": report.get("seconds")}
    if encoder := report.get("encoder"):
        keys = ("pairs", "held_out_pairs", "estimate_seconds", "seconds", "note", "model_id")
        found["encoder"] = {k: encoder.get(k) for k in keys}
        if tune := encoder.get("tune"):
            found["tune"] = {k: tune.get(k) for k in ("epochs", "best_epoch", "held_out_loss", "seconds", "peak_bytes")}
    if decision := report.get("decision"):
        found["decision"] = {k: decision.get(k) for k in ("switched", "reason")}
    return found


def tune_extra() -> tuple[list[str], str]:
    """What the ``tune`` extra installs, and whether the project defines it."""
    extras = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]["optional-dependencies"]
    if "tune" in extras:
        return [f"{ROOT}[local,tune]"], "the tune extra"
    return ["onnx"], "onnx (the project defines no tune extra yet; the API names onnx as what it needs)"


def installed(python: Path) -> dict[str, str]:
    script = "import json, importlib.metadata as m; print(json.dumps({d.name: d.version for d in m.distributions()}))"
    return json.loads(subprocess.run([str(python), "-c", script], capture_output=True, text=True, check=True).stdout)


def site_bytes(venv: Path) -> int:
    return sum(f.stat().st_size for f in venv.rglob("*") if f.is_file() and not f.is_symlink())


def install_size() -> None:
    with tempfile.TemporaryDirectory() as tmp:
        venv = Path(tmp) / "venv"
        subprocess.run([sys.executable, "-m", "venv", str(venv)], check=True)
        python = venv / "bin" / "python"
        pip = [str(python), "-m", "pip", "install", "-q", "--disable-pip-version-check"]
        subprocess.run([*pip, f"{ROOT}[local]"], check=True)
        before, size = installed(python), site_bytes(venv)
        targets, what = tune_extra()
        subprocess.run([*pip, *targets], check=True)
        after, grown = installed(python), site_bytes(venv)
    added = {n: v for n, v in after.items() if before.get(n) != v}
    print(
        f"installing {what} into a fresh venv with semif-agent[local] ({size / 2**20:,.0f} MiB): "
        f"+{(grown - size) / 2**20:,.1f} MiB, adds {', '.join(f'{n} {v}' for n, v in sorted(added.items()))}",
        flush=True,
    )


if __name__ == "__main__":
    sys.exit("run bench/encoder_tuning.py --real-skills or --cost")
