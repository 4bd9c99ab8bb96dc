"""Ray is loaded only by the work that asks for it; without the extra, --ray says how to get it in one line."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import semif_agent

SRC = Path(semif_agent.__file__).resolve().parents[1]


def _python(code: str, tmp_path: Path) -> tuple[subprocess.CompletedProcess[str], set[str]]:
    """Run CODE in a new interpreter on this source tree: (the process, the modules it imported)."""
    code += "\nimport sys, json\nprint(json.dumps(sorted(sys.modules)), file=sys.stderr)\n"
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(SRC), os.environ.get("PYTHONPATH", "")])}
    done = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, env=env, check=False, cwd=tmp_path
    )
    return done, set(json.loads(done.stderr.strip().splitlines()[-1]))


def _semif(args: list[str], *, without_ray: bool = False) -> str:
    hide = "sys.modules['ray'] = None  # as if the extra were not installed\n" if without_ray else ""
    return (
        "import sys\n" + hide + "from semif_agent.cli import main\ntry:\n"
        f"    main({args!r}, prog_name='semif')\nexcept SystemExit as exc:\n    print(f'exit {{exc.code or 0}}')\n"
    )


def test_help_and_the_distributed_package_do_not_load_ray(tmp_path: Path) -> None:
    for args in (["--help"], ["eval", "--help"], ["train", "--help"], ["run", "--help"]):
        done, modules = _python(_semif(args), tmp_path)
        assert "exit 0" in done.stdout, done.stdout
        assert args == ["--help"] or "--ray [ADDRESS]" in done.stdout
        assert not {m for m in modules if m == "ray" or m.startswith("ray.")}, args
    _, modules = _python("import semif_agent.distributed.jobs, semif_agent.distributed.batch", tmp_path)
    assert "ray" not in modules


def test_without_the_extra_ray_is_one_line_naming_it(tmp_path: Path) -> None:
    dataset = tmp_path / "data.jsonl"
    dataset.write_text(json.dumps({"text": "hello", "skill": None}) + "\n")
    tree = tmp_path / "tree.json"
    tree.write_text(
        json.dumps(
            {
                "categories": [{"name": "notes", "description": "Notes"}],
                "skills": [{"name": "notes.add", "category": "notes", "description": "Save a note"}],
            }
        )
    )
    done, modules = _python(
        _semif(["eval", str(dataset), "--tree", str(tree), "--engine", "lexical", "--ray"], without_ray=True), tmp_path
    )
    assert "exit 1" in done.stdout
    assert "--ray needs Ray: pip install 'semif-agent[ray]'" in done.stderr
    assert "Traceback" not in done.stderr


def test_ray_alone_is_refused_for_a_single_request(tmp_path: Path) -> None:
    done, _ = _python(_semif(["run", "Add milk to my todo list", "--ray"]), tmp_path)
    assert "exit 2" in done.stdout or "exit 1" in done.stdout
    assert "--batch FILE.jsonl" in done.stderr


def test_a_worker_given_one_cpu_runs_the_model_on_one_thread(monkeypatch) -> None:
    from semif_agent.engine import _onnx

    monkeypatch.setenv("OMP_NUM_THREADS", "1")  # what Ray sets for an actor of one CPU
    assert _onnx.default_threads() == 1
    monkeypatch.setenv("OMP_NUM_THREADS", "64")
    assert _onnx.default_threads() == _onnx.MAX_THREADS
    monkeypatch.setenv("OMP_NUM_THREADS", "many")
    assert 1 <= _onnx.default_threads() <= _onnx.MAX_THREADS
