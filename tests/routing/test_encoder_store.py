"""A workspace's tuned encoder: the bar it must clear to switch in, where it is kept, how the engine runs it, and the
one step between it and the installed model."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import numpy as np
import pytest
from click.testing import CliRunner

from semif_agent.cli import main
from semif_agent.engine._onnx import file_sha256
from semif_agent.engine.embed_cache import EmbeddingStore, cache_key
from semif_agent.engine.local import (
    MODEL_ID,
    MODEL_SHA256,
    TUNED_MANIFEST,
    TUNED_VERSION,
    Embedder,
    model_file,
    shared_embedder,
    tuned_model,
)
from semif_agent.errors import EngineConfigError, UserError
from semif_agent.routing.encoder import store
from semif_agent.routing.switching import Flip, decide
from semif_agent.starter import create_workspace
from semif_agent.workspace import Workspace

# ---- the bar a tuned encoder clears: a gain beyond noise, and no person's label broken


def replay(fixed: int, broken: int, *, labelled_broken: bool = False) -> tuple[list[bool], list[bool], list[Flip]]:
    """Replay outcomes with ``fixed`` requests now right and ``broken`` now wrong, among 40 right either way."""
    before = [True] * 40 + [False] * fixed + [True] * broken
    after = [True] * 40 + [True] * fixed + [False] * broken
    flips = [Flip(f"fixed {i}", "a", "b", "a", "examples") for i in range(fixed)]
    source = "label" if labelled_broken else "examples"
    flips += [Flip(f"broken {i}", "a", "a", "b", source) for i in range(broken)]
    return before, after, flips


def test_a_new_encoder_must_fix_more_than_noise_would_while_a_new_head_need_not() -> None:
    few = decide("the learned router", *replay(2, 0), None, require_gain=True)
    assert not few.switched and "not better beyond noise" in few.reason and few.reason.startswith("kept ")
    assert "\n" not in few.reason
    assert decide("the learned router", *replay(8, 0), None, require_gain=True).switched
    assert decide("the learned router", *replay(2, 0), None).switched  # the head alone: nothing broken is enough
    nothing = decide("the learned router", *replay(0, 0), None, require_gain=True)
    assert not nothing.switched and "0 right that were wrong" not in nothing.reason  # "0 requests", said in words
    forced = decide("the learned router", *replay(2, 0), None, require_gain=True, force=True)
    assert forced.switched and forced.forced and "(--force), although" in forced.reason


@pytest.mark.parametrize("require_gain", [False, True])
def test_a_broken_persons_label_keeps_the_routing_with_or_without_the_gain_bar(require_gain: bool) -> None:
    decision = decide("the learned router", *replay(30, 1, labelled_broken=True), None, require_gain=require_gain)
    assert not decision.switched and "a person's label is never broken" in decision.reason
    forced = decide(
        "the learned router", *replay(30, 1, labelled_broken=True), None, require_gain=require_gain, force=True
    )
    assert forced.switched and forced.forced


# ---- where the tuned encoder is kept, and switching between it and the installed one


def routing_files(ws: Workspace) -> dict[str, bytes]:
    return {name: (ws.data_dir / name).read_bytes() for name in store.ROUTING_FILES}


def put_routing(folder: Path, encoder: str, tag: str) -> None:
    """Routing files as training writes them, told apart by ``tag``."""
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "router.json").write_text(json.dumps({"trained": tag}), encoding="utf-8")
    (folder / "router.npz").write_bytes(f"weights of {tag}".encode() + bytes(range(256)))
    routing = {"strategy": "learned", "engine": "local", "encoder": encoder, "trained_at": tag}
    (folder / "routing.json").write_text(json.dumps(routing, indent=2) + "\n", encoding="utf-8")


def fake_tuned(ws: Workspace, content: bytes = b"tuned model bytes") -> Path:
    """A tuned encoder in ``data/encoder`` as publishing leaves it (its model is not a real one: nothing embeds)."""
    folder = store.encoder_folder(ws)
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / "model.tmp"
    path.write_bytes(content)
    sha = file_sha256(path)
    path.rename(folder / store.model_name(sha))
    store.write_manifest(folder, sha, {"pairs": 3})
    return folder / store.model_name(sha)


@pytest.fixture
def tuned_ws(tmp_path: Path) -> Workspace:
    """A starter workspace routing with a (stand-in) tuned encoder, the base encoder's routing kept aside."""
    ws = Workspace.load(create_workspace(tmp_path / "ws"))
    fake_tuned(ws)
    put_routing(ws.data_dir, "tuned", "tuned")
    put_routing(store.encoder_folder(ws) / "tuned", "tuned", "tuned")
    put_routing(store.encoder_folder(ws) / "base", "base", "base")
    return ws


def test_off_and_on_again_keep_each_encoders_routing_byte_for_byte(tuned_ws: Workspace) -> None:
    ws = tuned_ws
    tuned = routing_files(ws)
    base = {name: (store.encoder_folder(ws) / "base" / name).read_bytes() for name in store.ROUTING_FILES}
    assert store.encoder_in_use(ws) == "tuned"

    said = store.switch_encoder(ws, "base")
    assert said == "switched to the installed encoder and the routing trained on it"
    assert store.encoder_in_use(ws) == "base" and routing_files(ws) == base
    assert store.switch_encoder(ws, "tuned").startswith("switched to the workspace's tuned encoder")
    assert store.encoder_in_use(ws) == "tuned" and routing_files(ws) == tuned
    store.switch_encoder(ws, "base")
    assert routing_files(ws) == base
    assert store.stored_encoder(ws) is not None  # going back to the installed model keeps the tuned one


def test_switching_to_the_encoder_in_use_changes_nothing(tuned_ws: Workspace) -> None:
    before = routing_files(tuned_ws)
    kept = sorted(p.relative_to(tuned_ws.data_dir) for p in store.encoder_folder(tuned_ws).rglob("*"))
    assert store.switch_encoder(tuned_ws, "tuned") == "the workspace's tuned encoder is in use already; nothing changed"
    assert routing_files(tuned_ws) == before
    assert sorted(p.relative_to(tuned_ws.data_dir) for p in store.encoder_folder(tuned_ws).rglob("*")) == kept


def test_on_without_a_tuned_encoder_is_one_line_naming_the_command_that_makes_one(tmp_path: Path) -> None:
    ws = Workspace.load(create_workspace(tmp_path / "ws"))
    with pytest.raises(UserError, match="semif train --encoder") as raised:
        store.switch_encoder(ws, "tuned")
    assert "\n" not in str(raised.value)
    assert not store.encoder_folder(ws).exists()
    result = CliRunner().invoke(main, ["encoder", "on", "-w", str(ws.root)])
    assert result.exit_code != 0 and "semif train --encoder" in result.stderr
    assert "Traceback" not in result.output and len(result.stderr.strip().splitlines()) == 1


def test_a_semif_toml_override_is_said_when_switching(tuned_ws: Workspace) -> None:
    with tuned_ws.settings_file.open("a", encoding="utf-8") as handle:
        handle.write('\n[routing]\nencoder = "tuned"\n')
    ws = Workspace.load(tuned_ws.root)
    said = store.switch_encoder(ws, "base")
    assert "semif.toml's [routing] encoder = 'tuned' decides" in said


def test_a_semif_toml_override_never_makes_one_encoders_routing_the_others(tuned_ws: Workspace) -> None:
    ws = tuned_ws
    tuned = routing_files(ws)
    store.switch_encoder(ws, "base")
    with ws.settings_file.open("a", encoding="utf-8") as handle:
        handle.write('\n[routing]\nencoder = "tuned"\n')
    ws = Workspace.load(ws.root)
    said = store.switch_encoder(ws, "base")  # the data's routing is the base encoder's already
    assert said.startswith("the installed encoder is in use already; nothing changed (but semif.toml's")
    store.switch_encoder(ws, "tuned")
    assert routing_files(ws) == tuned


def test_publishing_a_candidate_moves_its_model_and_manifest_in_and_removes_older_models(tuned_ws: Workspace) -> None:
    ws = tuned_ws
    folder = store.encoder_folder(ws)
    (older,) = folder.glob("model-*.onnx")
    candidate = store.candidate_folder(ws)
    assert candidate.parent == folder and candidate.name.startswith(".candidate-")
    written = candidate / "model.partial"
    written.write_bytes(b"a newer tuned model")
    sha = file_sha256(written)
    written.rename(candidate / store.model_name(sha))
    model = store.write_manifest(candidate, sha, {"pairs": 7})
    assert model.model_id == store.tuned_id(sha) == f"{MODEL_ID}+tuned-{sha[:12]}"

    store.publish_candidate(ws, candidate)
    assert not older.exists()
    assert sorted(p.name for p in folder.glob("model-*.onnx")) == [store.model_name(sha)]
    said = store.stored_encoder(ws)
    assert said is not None and said["sha256"] == sha and said["pairs"] == 7 and said["base_sha256"] == MODEL_SHA256
    assert tuned_model(folder).path == folder / store.model_name(sha)
    store.discard(candidate)
    assert not candidate.exists()


@pytest.mark.slow
def test_a_candidate_not_switched_to_leaves_nothing(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    # Tuning itself is stood in for (it is measured elsewhere): the base weights come back as "tuned", so the head
    # trained on them fixes nothing beyond noise over the router trained on the base model, and the gain bar keeps it.
    from semif_agent.loop.settings import RunSettings
    from semif_agent.routing.encoder import tuning, workspace_tuning
    from semif_agent.routing.training import examples_from_tree
    from semif_agent.tree.tree import SkillTree

    def not_tuned(weights, pairs, held_out, settings, *, progress=None):  # type: ignore[no-untyped-def]  # stands in for tune_encoder
        report = tuning.TuneReport(1, 1, 1, [1.0], [2.0, 1.0], 0.1, False, 0)
        return weights, report

    import semif_agent.routing.encoder as package

    monkeypatch.setattr(package, "tune_encoder", not_tuned)
    monkeypatch.setattr(package, "estimate_seconds", lambda weights, pairs, settings: 1.0)
    ws = Workspace.load(create_workspace(tmp_path / "ws"))
    assert CliRunner().invoke(main, ["train", "-w", str(ws.root), "--no-log"]).exit_code == 0
    before = {p.relative_to(ws.root): p.read_bytes() for p in ws.root.rglob("*") if p.is_file()}
    settings = RunSettings.resolve(ws, engine="local")
    engine = settings.build_engine()
    tree = SkillTree.for_workspace(ws)
    current = settings.build_strategy(tree, engine)
    router, report, path, done = workspace_tuning.tune_workspace(
        ws, tree, examples_from_tree(tree), engine, current=current, held_out=0.2
    )
    assert report is not None and not report.decision.switched and path is None
    assert done.model_id is not None and done.model_id != MODEL_ID
    assert "not better beyond noise" in report.decision.reason
    after = {p.relative_to(ws.root): p.read_bytes() for p in ws.root.rglob("*") if p.is_file()}
    assert after == before, "a tuned encoder not switched to leaves no file behind, and the routing as it was"
    assert not store.encoder_folder(ws).exists() or not any(store.encoder_folder(ws).iterdir())


# ---- the engine runs a tuned file by its own id and digest


def write_manifest(folder: Path, said: object) -> None:
    folder.mkdir(parents=True, exist_ok=True)
    (folder / TUNED_MANIFEST).write_text(json.dumps(said), encoding="utf-8")


GOOD = {"version": TUNED_VERSION, "file": "model-x.onnx", "model_id": "m+tuned-x", "sha256": "ab" * 32}


@pytest.mark.parametrize(
    "said",
    [
        None,  # no manifest
        "{not json",
        {**GOOD, "version": TUNED_VERSION + 1},
        {**GOOD, "version": 0},
        {**GOOD, "file": "../x"},
        {**GOOD, "file": "sub/model.onnx"},
        {key: value for key, value in GOOD.items() if key != "sha256"},
        {**GOOD, "model_id": ""},
        ["a list"],
    ],
)
def test_a_missing_or_malformed_manifest_is_one_engine_config_error_line(tmp_path: Path, said: object) -> None:
    folder = tmp_path / "encoder"
    folder.mkdir()
    if isinstance(said, str):
        (folder / TUNED_MANIFEST).write_text(said, encoding="utf-8")
    elif said is not None:
        write_manifest(folder, said)
    with pytest.raises(EngineConfigError) as raised:
        tuned_model(folder)
    message = str(raised.value)
    assert "\n" not in message and "semif train --encoder" in message and "semif encoder off" in message
    write_manifest(folder, GOOD)
    assert tuned_model(folder).model_id == "m+tuned-x"


def copy_as_tuned(folder: Path) -> Path:
    """The installed model's bytes as a workspace's tuned encoder (its own id; the same weights)."""
    folder.mkdir(parents=True, exist_ok=True)
    target = folder / store.model_name(MODEL_SHA256)
    shutil.copyfile(model_file(), target)
    store.write_manifest(folder, MODEL_SHA256, {})
    return target


def test_a_tuned_file_changed_after_its_manifest_was_written_is_refused(tmp_path: Path) -> None:
    path = copy_as_tuned(tmp_path / "encoder")
    model = tuned_model(tmp_path / "encoder")
    with path.open("ab") as handle:
        handle.write(b"\0")
    with pytest.raises(EngineConfigError, match="sha256") as raised:
        Embedder(model.path, model_id=model.model_id, model_sha256=model.sha256, cache_dir=tmp_path / "cache")
    assert "semif train --encoder" in str(raised.value) and "\n" not in str(raised.value)


@pytest.mark.slow
def test_a_tuned_files_vectors_are_cached_under_its_own_id_and_the_base_models_never_serve_it(tmp_path: Path) -> None:
    text = "email Bob about the launch"
    cache = tmp_path / "embeddings.sqlite3"
    planted = np.full(384, 1 / np.sqrt(384), dtype=np.float32)  # what no model computes for the text
    EmbeddingStore(cache).put_many([(cache_key(MODEL_ID, text), planted.tobytes())])
    base = Embedder(model_file(), store=EmbeddingStore(cache), cache_dir=tmp_path / "cache")
    np.testing.assert_array_equal(base.embed([text])[0], planted)  # the base model's entry is used by the base model

    copy_as_tuned(tmp_path / "encoder")
    tuned = shared_embedder({"encoder": str(tmp_path / "encoder"), "cache": str(cache)})
    assert tuned.model_id == store.tuned_id(MODEL_SHA256) != MODEL_ID
    vector = tuned.embed([text])[0]
    assert tuned.computed == 1 and not np.allclose(vector, planted)
    stored = EmbeddingStore(cache).get_many([cache_key(tuned.model_id, text), cache_key(MODEL_ID, text)])
    np.testing.assert_array_equal(np.frombuffer(stored[cache_key(tuned.model_id, text)], np.float32), vector)
    np.testing.assert_array_equal(np.frombuffer(stored[cache_key(MODEL_ID, text)], np.float32), planted)


# ---- the [routing] encoder setting


def test_an_unknown_encoder_setting_is_one_line_from_a_command(tmp_path: Path) -> None:
    root = create_workspace(tmp_path / "ws")
    with (root / "semif.toml").open("a", encoding="utf-8") as handle:
        handle.write('\n[routing]\nencoder = "bogus"\n')
    result = CliRunner().invoke(main, ["run", "add buy milk to my to-do list", "-w", str(root)])
    assert result.exit_code != 0 and "Traceback" not in result.output
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1 and "encoder" in lines[0] and '"tuned"' in lines[0], result.stderr


def test_a_damaged_manifest_still_lets_semif_encoder_off_go_back_and_say_why(tuned_ws: Workspace) -> None:
    ws = tuned_ws
    (store.encoder_folder(ws) / TUNED_MANIFEST).write_text("{broken", encoding="utf-8")
    base = {name: (store.encoder_folder(ws) / "base" / name).read_bytes() for name in store.ROUTING_FILES}
    off = CliRunner().invoke(main, ["encoder", "off", "-w", str(ws.root)])
    assert off.exit_code == 0, off.output
    assert "switched to the installed encoder" in off.stdout and "the tuned encoder cannot be read" in off.stdout
    assert store.encoder_in_use(ws) == "base" and routing_files(ws) == base
    status = CliRunner().invoke(main, ["encoder", "-w", str(ws.root), "--json"])
    assert status.exit_code == 0 and "cannot be read" in json.loads(status.stdout)["problem"]
    on = CliRunner().invoke(main, ["encoder", "on", "-w", str(ws.root)])
    assert on.exit_code != 0 and len(on.stderr.strip().splitlines()) == 1 and "semif train --encoder" in on.stderr
    assert routing_files(ws) == base


def test_tuning_routing_values_keeps_the_encoder_the_routing_belongs_to(tuned_ws: Workspace) -> None:
    from semif_agent.routing.tune import save_tuned

    save_tuned(tuned_ws, {"strategy": "examples", "engine": "local", "threshold": 0.3})  # what semif eval --tune saves
    assert store.routing_encoder(tuned_ws) == store.encoder_in_use(tuned_ws) == "tuned"
    said = json.loads((tuned_ws.data_dir / "routing.json").read_text())
    assert said == {"strategy": "examples", "engine": "local", "threshold": 0.3, "encoder": "tuned"}
    save_tuned(tuned_ws, {"strategy": "learned", "encoder": "base"})  # training on the installed model says so
    assert store.routing_encoder(tuned_ws) == "base"


def test_a_killed_tunings_candidate_folder_is_removed_by_the_next_tuning(tmp_path):
    import subprocess
    import sys

    from semif_agent.routing.encoder import store
    from semif_agent.starter import create_workspace
    from semif_agent.workspace import Workspace

    ws = Workspace.load(create_workspace(tmp_path / "ws"))
    gone = subprocess.run([sys.executable, "-c", "import os; print(os.getpid())"], capture_output=True, text=True)
    left = store.encoder_folder(ws) / f".candidate-{gone.stdout.strip()}-0a0b0c0d"
    left.mkdir(parents=True)
    (left / "model.partial").write_bytes(b"half a model")
    alive = store.candidate_folder(ws)  # this process's: another tuning running here is left alone
    mine = store.candidate_folder(ws)
    assert not left.exists()
    assert alive.is_dir() and mine.is_dir()
