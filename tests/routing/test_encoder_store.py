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
    assert model.model_id == store.tuned_id(sha) == f"{MODEL_ID}+tuned-{sha[:32]}"

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
        {**GOOD, "sha256": "not a digest"},
        {**GOOD, "file": ".staging"},
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
    with pytest.raises(EngineConfigError, match="model-x.onnx"):  # the manifest is fine, its model is missing
        tuned_model(folder)
    (folder / "model-x.onnx").write_bytes(b"a model")
    assert tuned_model(folder).model_id == store.tuned_id(GOOD["sha256"])


def test_a_tuned_encoders_id_comes_from_its_digest_whatever_its_manifest_claims(tmp_path: Path) -> None:
    """A workspace someone gives cannot name its model after the installed one: its vectors would be cached under
    the installed model's id and served to every other workspace of the user."""
    folder = tmp_path / "encoder"
    write_manifest(folder, {**GOOD, "model_id": MODEL_ID})
    (folder / "model-x.onnx").write_bytes(b"a model")
    model = tuned_model(folder)
    assert model.model_id == f"{MODEL_ID}+tuned-{GOOD['sha256'][:32]}" != MODEL_ID


@pytest.mark.parametrize("kind", ["manifest link", "model link", "manifest fifo", "model fifo", "model folder"])
def test_a_tuned_encoder_that_is_a_link_or_not_a_file_is_refused_without_opening_it(tmp_path: Path, kind: str) -> None:
    import os

    folder, outside = tmp_path / "encoder", tmp_path / "outside"
    outside.mkdir()
    write_manifest(folder, GOOD)
    (folder / "model-x.onnx").write_bytes(b"a model")
    secret = outside / "secret"
    secret.write_text(json.dumps(GOOD))
    what, how = kind.split()
    target = folder / (TUNED_MANIFEST if what == "manifest" else "model-x.onnx")
    target.unlink()
    if how == "link":
        target.symlink_to(secret)
    elif how == "fifo":
        os.mkfifo(target)  # opened for reading, a pipe nobody writes would hang the host
    else:
        target.mkdir()
    with pytest.raises(EngineConfigError) as raised:
        tuned_model(folder)
    assert "\n" not in str(raised.value) and "semif encoder off" in str(raised.value)


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


@pytest.mark.slow
@pytest.mark.parametrize("override", ["base", "tuned"])
def test_semif_tomls_encoder_routes_with_that_encoders_own_router(tmp_path: Path, override: str) -> None:
    """``[routing] encoder`` picks the encoder and the router trained on it, wherever ``semif encoder`` left each:
    no warning, the learned strategy, the right model."""
    import warnings

    from semif_agent.loop.settings import RunSettings
    from semif_agent.routing.learned import Learned

    root = create_workspace(tmp_path / "ws")
    trained = CliRunner().invoke(main, ["train", "-w", str(root), "--force", "--json"])  # the installed model's router
    assert trained.exit_code == 0, trained.output
    ws = Workspace.load(root)
    copy_as_tuned(store.encoder_folder(ws))
    (store.encoder_folder(ws) / "tuned").mkdir()
    store.switch_encoder(ws, "tuned")  # the base router is kept aside; the tuned encoder routes untrained
    trained = CliRunner().invoke(main, ["train", "-w", str(root), "--force", "--json"])  # the tuned one's router
    assert trained.exit_code == 0, trained.output
    if override == "tuned":
        store.switch_encoder(ws, "base")  # now the tuned router is the one kept aside
    settings_file = root / "semif.toml"
    settings_file.write_text(settings_file.read_text() + f'\n[routing]\nencoder = "{override}"\n')
    ws = Workspace.load(root)
    settings = RunSettings.resolve(ws, engine="local")
    engine = settings.build_engine()
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # a router of the other encoder would warn and route untrained
        strategy = settings.build_strategy(settings.build_tree(engine), engine)
    assert isinstance(strategy, Learned)
    assert engine.model == (MODEL_ID if override == "base" else store.tuned_id(MODEL_SHA256))
    retrained = CliRunner().invoke(main, ["train", "-w", str(root), "--force", "--json"])
    assert retrained.exit_code == 0, retrained.output
    other = "tuned" if override == "base" else "base"
    kept = json.loads((store.encoder_folder(ws) / other / "router.json").read_text())
    assert kept["model"] == (store.tuned_id(MODEL_SHA256) if other == "tuned" else MODEL_ID)  # not overwritten


def test_semif_encoder_says_when_the_tuned_file_is_not_the_one_its_manifest_records(tuned_ws: Workspace) -> None:
    status = CliRunner().invoke(main, ["encoder", "-w", str(tuned_ws.root), "--json"])
    assert status.exit_code == 0 and json.loads(status.stdout)["problem"] is None
    model = next(store.encoder_folder(tuned_ws).glob("model-*.onnx"))
    with model.open("ab") as handle:
        handle.write(b"\0")
    status = CliRunner().invoke(main, ["encoder", "-w", str(tuned_ws.root)])
    assert status.exit_code == 0
    said = [line for line in status.stdout.splitlines() if line.startswith("tuned:")]
    assert len(said) == 1 and "sha256" in said[0] and "semif encoder off" in said[0]
    model.unlink()
    status = CliRunner().invoke(main, ["encoder", "-w", str(tuned_ws.root), "--json"])
    assert "cannot be read" in json.loads(status.stdout)["problem"]


def test_a_second_tuning_of_one_workspace_is_refused_while_the_first_runs(tmp_path: Path) -> None:
    import subprocess
    import sys

    ws = Workspace.load(create_workspace(tmp_path / "ws"))
    holder = subprocess.Popen(  # another process tuning this workspace: it holds the lock until told to stop
        [sys.executable, "-c", HOLD_THE_LOCK, str(ws.root)], stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True
    )
    try:
        assert holder.stdout is not None and holder.stdout.readline().strip() == "holding"
        with pytest.raises(UserError, match="another semif train --encoder is tuning") as raised:
            with store.tuning_lock(ws):
                pass
        assert "\n" not in str(raised.value)
    finally:
        holder.communicate("", timeout=60)
    with store.tuning_lock(ws):  # once it is done, the next one goes ahead
        pass


HOLD_THE_LOCK = """
import sys
from semif_agent.routing.encoder import store
from semif_agent.workspace import Workspace
with store.tuning_lock(Workspace.load(sys.argv[1])):
    print("holding", flush=True)
    sys.stdin.read()
"""


@pytest.mark.parametrize("link", ["base slot", "tuned slot", "encoder folder", "router file"])
def test_switching_follows_no_link_out_of_the_workspace(tmp_path: Path, link: str) -> None:
    """A workspace someone gives, whose encoder folders or routing files are links elsewhere: switching neither
    deletes, writes nor reads anything there, and says why in one line."""
    ws = Workspace.load(create_workspace(tmp_path / "ws"))
    fake_tuned(ws)
    put_routing(ws.data_dir, "tuned", "tuned")
    elsewhere = tmp_path / "elsewhere"
    put_routing(elsewhere, "base", "theirs")  # another workspace's routing, or a secret
    before = {path.name: path.read_bytes() for path in elsewhere.iterdir()}
    folder = store.encoder_folder(ws)
    if link == "base slot":
        (folder / "base").symlink_to(elsewhere)
    elif link == "tuned slot":
        put_routing(folder / "base", "base", "base")
        store.switch_encoder(ws, "base")
        shutil.rmtree(folder / "tuned")
        (folder / "tuned").symlink_to(elsewhere)
    elif link == "encoder folder":
        moved = tmp_path / "moved"
        folder.rename(moved)
        folder.symlink_to(moved)
    else:
        put_routing(folder / "base", "base", "base")
        (folder / "base" / "router.json").unlink()
        (folder / "base" / "router.json").symlink_to(elsewhere / "router.json")
    to = "tuned" if link == "tuned slot" else "base"
    done = CliRunner().invoke(main, ["encoder", "off" if to == "base" else "on", "-w", str(ws.root)])
    assert done.exit_code != 0 and len(done.stderr.strip().splitlines()) == 1, done.output
    assert {path.name: path.read_bytes() for path in elsewhere.iterdir()} == before
    assert json.loads((ws.data_dir / "router.json").read_text()) != json.loads(before["router.json"])


@pytest.mark.slow
@pytest.mark.parametrize("content", ["garbage", "narrow"])
def test_a_tuned_file_of_its_true_digest_that_cannot_run_is_one_line(tmp_path: Path, content: str) -> None:
    """Bytes that are no model, or a model whose output is not 384 wide: one EngineConfigError line, no traceback."""
    folder = tmp_path / "encoder"
    folder.mkdir()
    if content == "garbage":
        data = b"\x08\x07 this is not an ONNX model" * 100
    else:
        onnx = pytest.importorskip("onnx")
        from onnx import TensorProto, helper

        node = helper.make_node("Cast", ["input_ids"], ["last_hidden_state"], to=TensorProto.FLOAT)
        graph = helper.make_graph(
            [node],
            "narrow",
            [helper.make_tensor_value_info("input_ids", TensorProto.INT64, ["b", "n"])],
            [helper.make_tensor_value_info("last_hidden_state", TensorProto.FLOAT, ["b", "n"])],
        )
        data = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)]).SerializeToString()
        onnx.checker.check_model(onnx.load_from_string(data))
    (folder / "model.tmp").write_bytes(data)
    sha = file_sha256(folder / "model.tmp")
    (folder / "model.tmp").rename(folder / store.model_name(sha))
    store.write_manifest(folder, sha, {})
    with pytest.raises(EngineConfigError) as raised:
        embedder = shared_embedder({"encoder": str(folder), "cache": False})
        embedder.embed(["hello there"])
    assert "\n" not in str(raised.value) and "cannot be run" in str(raised.value)
