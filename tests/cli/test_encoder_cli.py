"""`semif train --encoder` and `semif encoder` as a user runs them: one starter workspace tuned once for the module."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from semif_agent.engine._onnx import file_sha256
from semif_agent.engine.local import MODEL_ID
from semif_agent.starter import create_workspace

pytestmark = pytest.mark.slow

TUNING_TIMEOUT = 1800  # tuning one epoch takes minutes on a busy CPU
READ_ONLY = "show my email drafts"  # a request whose skill only reads: runs leave the workspace as it was


def semif(
    *args: str, cwd: Path, env: dict[str, str] | None = None, python: tuple[str, ...] = ("-m", "semif_agent")
) -> subprocess.CompletedProcess[str]:
    """``semif ARGS`` in a new process in ``cwd``, with the test's own home and caches (as the suite set them)."""
    return subprocess.run(
        [sys.executable, *python, *args],
        cwd=cwd,
        capture_output=True,
        text=True,
        env={**os.environ, "COLUMNS": "200", **(env or {})},
        timeout=TUNING_TIMEOUT,
    )


@pytest.fixture(scope="module")
def tuned(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, dict[str, Any], str]:
    """A starter workspace after ``semif train --encoder --epochs 1 --json``: its root, the JSON and what stderr said."""
    root = create_workspace(tmp_path_factory.mktemp("tuned") / "ws")
    done = semif("train", "--encoder", "--epochs", "1", "--json", cwd=root)
    assert done.returncode == 0, done.stderr
    return root, json.loads(done.stdout), done.stderr


def models_of_run(root: Path, run_id: str) -> set[str]:
    """The models the decision rows of run ``run_id`` name."""
    rows = [json.loads(line) for line in (root / "data" / "decisions.jsonl").read_text().splitlines()]
    return {row["model"] for row in rows if row.get("run_id") == run_id and "model" in row}


def run_models(root: Path) -> set[str]:
    done = semif("run", READ_ONLY, "--json", cwd=root)
    assert done.returncode == 0, done.stderr
    return models_of_run(root, json.loads(done.stdout)["run_id"])


def test_train_encoder_reports_the_tuning_and_keeps_the_tuned_file_it_names(
    tuned: tuple[Path, dict[str, Any], str],
) -> None:
    root, report, said = tuned
    encoder = report["encoder"]
    assert encoder["pairs"] >= 20 and encoder["held_out_pairs"] > 0
    losses = encoder["tune"]["held_out_loss"]
    assert len(losses) == 2 and encoder["tune"]["epochs"] == 1  # before tuning, after its one epoch
    assert "tuning the encoder on" in said and "about" in said  # the estimate, said before tuning starts
    assert report["decision"]["switched"] and report["saved_to"] == str(root / "data" / "router.json")

    manifest = json.loads((root / "data" / "encoder" / "encoder.json").read_text())
    model = root / "data" / "encoder" / manifest["file"]
    assert file_sha256(model) == manifest["sha256"]
    assert manifest["model_id"] == encoder["model_id"] != MODEL_ID and manifest["model_id"].startswith(MODEL_ID)
    assert [p.name for p in (root / "data" / "encoder").glob("*.onnx")] == [manifest["file"]]
    assert not list((root / "data" / "encoder").glob(".candidate-*")), "the candidate folder is not left behind"
    assert json.loads((root / "data" / "router.json").read_text())["model"] == manifest["model_id"]


def test_runs_embed_with_the_encoder_in_use_and_off_and_on_switch_in_one_step(
    tuned: tuple[Path, dict[str, Any], str],
) -> None:
    root, report, _ = tuned
    tuned_id = report["encoder"]["model_id"]
    done = semif("encoder", "--json", cwd=root)
    assert done.returncode == 0, done.stderr
    status = json.loads(done.stdout)
    assert status["in_use"] == "tuned" and status["tuned"]["model_id"] == tuned_id
    assert run_models(root) == {tuned_id}

    done = semif("encoder", "off", cwd=root)
    assert done.returncode == 0, done.stderr
    assert "switched to the installed encoder" in done.stdout and "in use: the installed encoder" in done.stdout
    assert run_models(root) == {MODEL_ID}
    done = semif("encoder", "on", cwd=root)
    assert done.returncode == 0, done.stderr
    assert "in use: the tuned encoder" in done.stdout
    assert run_models(root) == {tuned_id}


def test_a_router_of_the_tuned_encoder_routes_the_untrained_way_when_routing_json_says_base(
    tuned: tuple[Path, dict[str, Any], str], tmp_path: Path
) -> None:
    root = shutil.copytree(tuned[0], tmp_path / "ws")
    routing = json.loads((root / "data" / "routing.json").read_text())
    (root / "data" / "routing.json").write_text(json.dumps({**routing, "encoder": "base"}))  # edited by hand
    done = semif("route", READ_ONLY, cwd=root)
    assert done.returncode == 0, done.stderr
    assert "Traceback" not in done.stderr and "semif train" in done.stderr and "untrained way" in done.stderr
    assert "email.list_drafts" in done.stdout
    dataset = tmp_path / "dataset.jsonl"
    dataset.write_text(json.dumps({"text": READ_ONLY, "skill": "email.list_drafts"}) + "\n")
    done = semif("eval", str(dataset), "--json", cwd=root)  # every strategy but the one that cannot route here
    assert done.returncode == 0, done.stderr
    assert "learned" not in json.loads(done.stdout)["strategies"] and "the learned strategy is left out" in done.stderr
    done = semif("eval", str(dataset), "--strategy", "learned", cwd=root)
    assert done.returncode != 0 and "Traceback" not in done.stderr and "semif train" in done.stderr


def test_eval_measures_the_router_trained_on_the_tuned_encoder(
    tuned: tuple[Path, dict[str, Any], str], tmp_path: Path
) -> None:
    dataset = tmp_path / "dataset.jsonl"
    dataset.write_text(json.dumps({"text": READ_ONLY, "skill": "email.list_drafts"}) + "\n")
    done = semif("eval", str(dataset), "--json", cwd=tuned[0])
    assert done.returncode == 0, done.stderr
    assert "learned" in json.loads(done.stdout)["strategies"] and "warning" not in done.stderr


def test_epochs_without_encoder_is_a_usage_error(tmp_path: Path) -> None:
    root = create_workspace(tmp_path / "ws")
    done = semif("train", "--epochs", "2", cwd=root)
    assert done.returncode == 2 and "--epochs and --layers are for --encoder" in done.stderr
    assert not (root / "data" / "router.json").exists()


def test_too_few_examples_say_why_nothing_was_tuned_and_write_nothing(tmp_path: Path) -> None:
    root = tmp_path / "ws"
    (root / "data").mkdir(parents=True)
    (root / "semif.toml").write_text('[paths]\ndata = "data"\n', encoding="utf-8")
    skills = [
        {"name": "notes.add", "category": "notes", "description": "Save a personal note", "examples": NOTES},
        {"name": "todos.add", "category": "todos", "description": "Add a task to the to-do list", "examples": TODOS},
    ]
    categories = [{"name": "notes", "description": "Personal notes"}, {"name": "todos", "description": "To-do list"}]
    (root / "data" / "categories.json").write_text(
        json.dumps({"version": 1, "categories": categories, "skills": skills}), encoding="utf-8"
    )
    done = semif("train", "--encoder", cwd=root)
    assert done.returncode == 0, done.stderr
    assert "to tune on (20 needed" in done.stdout and "the encoder in use is kept" in done.stdout
    assert not (root / "data" / "encoder").exists()
    assert not (root / "data" / "router.json").exists()


NOTES = ["remember that the wifi password is on the fridge", "note the plumber's number", "jot down the gate code"]
TODOS = ["add buy milk to my list", "remind me to call the bank", "put renew passport on my to-dos"]

WITHOUT_ONNX = (
    "import runpy, sys; sys.modules['onnx'] = None; sys.argv = ['semif', *sys.argv[1:]]; "
    "runpy.run_module('semif_agent', run_name='__main__')"
)


def test_without_onnx_tuning_is_one_line_naming_the_extra(tmp_path: Path) -> None:
    root = create_workspace(tmp_path / "ws")
    done = semif("train", "--encoder", cwd=root, python=("-c", WITHOUT_ONNX))
    assert done.returncode != 0 and "Traceback" not in done.stderr
    lines = done.stderr.strip().splitlines()
    assert len(lines) == 1 and "semif-agent[tune]" in lines[0], done.stderr
    assert not (root / "data" / "encoder").exists() and not (root / "data" / "router.json").exists()
