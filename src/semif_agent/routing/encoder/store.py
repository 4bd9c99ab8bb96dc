"""Where a workspace keeps its tuned encoder, and the one command that switches between it and the installed one.

``data/encoder/`` holds the tuned model (``model-<sha>.onnx``, the ONNX int8 format the engine runs) and its
``encoder.json`` (its file, the id its embeddings and the routers trained on it carry, its sha256, what it was
tuned from and on). Each encoder has its own routing: the learned head trained on its embeddings and the
routing values switched with it (``data/router.json``, ``router.npz``, ``routing.json``). The routing of the
encoder not in use is kept in ``data/encoder/base/`` or ``data/encoder/tuned/``, so switching back is one step
that loses nothing (:func:`switch_encoder`).
"""

from __future__ import annotations

import contextlib
import json
import os
import secrets
import shutil
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any, Literal

from ..._files import replace_file
from ...engine.local import (
    MODEL_ID,
    MODEL_SHA256,
    TUNED_MANIFEST,
    TUNED_VERSION,
    ModelFile,
    read_regular,
    tuned_id,
    tuned_model,
)
from ...errors import UserError
from ...workspace import Workspace
from ..learned import ROUTER_FILE, WEIGHTS_FILE
from ..tune import ENCODER_DIR, ROUTING_FILE, routing_settings, save_tuned

ROUTING_FILES = (ROUTER_FILE, WEIGHTS_FILE, ROUTING_FILE)
"""The files of the data dir that belong to the encoder they were made with."""

Encoder = Literal["base", "tuned"]


def encoder_folder(workspace: Workspace) -> Path:
    """``data/encoder``: the tuned encoder and the routing kept for the encoder not in use."""
    return workspace.data_dir / ENCODER_DIR


def encoder_in_use(workspace: Workspace) -> Encoder:
    """``"tuned"`` when the local engine embeds with the workspace's tuned encoder, else ``"base"``."""
    return "tuned" if routing_settings(workspace, "local").encoder == "tuned" else "base"


def routing_encoder(workspace: Workspace) -> Encoder:
    """The encoder the routing in ``data/`` belongs to (``routing.json``'s ``encoder``; unset: the installed one).
    What semif.toml says does not change it: switching keeps these files for this encoder, whatever embeds."""
    path = workspace.data_dir / ROUTING_FILE
    try:
        said = json.loads(path.read_text(encoding="utf-8")) if path.is_file() else {}
    except (OSError, ValueError):
        said = {}
    return "tuned" if isinstance(said, dict) and said.get("encoder") == "tuned" else "base"


def stored_encoder(workspace: Workspace) -> dict[str, Any] | None:
    """What ``encoder.json`` says of the workspace's tuned encoder, or ``None`` when it has none."""
    manifest = encoder_folder(workspace) / TUNED_MANIFEST
    if not manifest.is_file():
        return None
    tuned_model(encoder_folder(workspace))  # a malformed manifest is one line here
    said: dict[str, Any] = json.loads(manifest.read_text(encoding="utf-8"))
    return said


@contextmanager
def tuning_lock(workspace: Workspace) -> Iterator[None]:
    """Held while ``semif train --encoder`` tunes ``workspace``'s encoder: a second one is one :class:`UserError` line
    (two would each replay against the routing they started with, and the last to finish would win unsaid)."""
    import fcntl

    folder = encoder_folder(workspace)
    made = not folder.exists()
    folder.mkdir(parents=True, exist_ok=True)
    fd = os.open(folder, os.O_RDONLY | getattr(os, "O_DIRECTORY", 0) | getattr(os, "O_CLOEXEC", 0))
    try:
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            raise UserError(
                "another semif train --encoder is tuning this workspace's encoder: let it finish, then train again"
            ) from None
        yield
    finally:
        os.close(fd)  # closing releases the lock
        if made:  # nothing tuned: no folder left behind
            with contextlib.suppress(OSError):
                folder.rmdir()


def candidate_folder(workspace: Workspace) -> Path:
    """A new folder in ``data/encoder`` for a tuned encoder being measured (a complete encoder folder: its model
    and ``encoder.json``, so an engine, here or on a cluster's workers, can load it before it is switched to)."""
    for left in encoder_folder(workspace).glob(".candidate-*"):  # what a killed tuning left
        if not _running(left.name.split("-")[1]):
            discard(left)
    folder = encoder_folder(workspace) / f".candidate-{os.getpid()}-{secrets.token_hex(4)}"
    folder.mkdir(parents=True)
    return folder


def _running(pid: str) -> bool:
    """Whether the process ``pid`` (a folder name's part) still runs here; a name that is no pid is not."""
    if not pid.isdigit():
        return False
    try:
        os.kill(int(pid), 0)
    except ProcessLookupError:
        return False
    except OSError:  # another user's process: running
        return True
    return True


def model_name(sha256: str) -> str:
    """The file name of the tuned model of digest ``sha256``."""
    return f"model-{sha256[:16]}.onnx"


def write_manifest(folder: Path, sha256: str, about: dict[str, Any]) -> ModelFile:
    """Write ``folder``'s ``encoder.json`` for the model ``model_name(sha256)`` in it; returns the model."""
    manifest = {
        "version": TUNED_VERSION,
        "file": model_name(sha256),
        "model_id": tuned_id(sha256),
        "sha256": sha256,
        "base": MODEL_ID,
        "base_sha256": MODEL_SHA256,
        **about,
    }
    replace_file(folder / TUNED_MANIFEST, json.dumps(manifest, indent=1) + "\n")
    return ModelFile(folder / model_name(sha256), tuned_id(sha256), sha256)


def publish_candidate(workspace: Workspace, candidate: Path) -> None:
    """Make the encoder in ``candidate`` the workspace's tuned encoder: its model moved into ``data/encoder``,
    then its ``encoder.json`` (one rename each; the files of earlier tuned encoders removed after)."""
    folder = encoder_folder(workspace)
    model = tuned_model(candidate)
    os.replace(model.path, folder / model.path.name)
    os.replace(candidate / TUNED_MANIFEST, folder / TUNED_MANIFEST)
    for old in folder.glob("model-*.onnx"):
        if old.name != model.path.name:
            old.unlink(missing_ok=True)


def discard(candidate: Path) -> None:
    """Remove a candidate folder (what was not switched to, or what publishing left)."""
    shutil.rmtree(candidate, ignore_errors=True)


def keep_routing(workspace: Workspace, slot: Encoder) -> None:
    """Copy the routing in use (router, its weights, the switched values) into ``data/encoder/<slot>/``."""
    _copy_files(workspace.data_dir, encoder_folder(workspace) / slot, slot=encoder_folder(workspace) / slot)


MAX_ROUTING_FILE = 1 << 30  # bytes: a router of 10,000 skills weighs tens of MB


def _copy_files(source: Path, target: Path, *, slot: Path) -> None:
    """Make ``target``'s routing files those of ``source`` (a file ``source`` lacks is removed from ``target``).

    The encoder's ``slot`` (the one of the two in ``data/encoder``) and ``data/encoder`` may not be links, nor any file
    read a link or anything but a regular file: a workspace someone gives could otherwise have switching read,
    write or delete files outside it."""
    _refuse_link(slot)
    target.mkdir(parents=True, exist_ok=True)
    for name in ROUTING_FILES:
        if os.path.lexists(source / name):
            try:
                data = read_regular(source / name, MAX_ROUTING_FILE)
            except OSError as exc:
                raise UserError(f"{source / name}: cannot be read as a routing file ({exc})") from exc
            replace_file(target / name, data)
        else:
            (target / name).unlink(missing_ok=True)


def _refuse_link(folder: Path) -> None:
    """A :class:`UserError` when ``folder`` (or ``data/encoder`` above it) is a link or not a folder."""
    for path in (folder, folder.parent):
        if path.is_symlink() or (os.path.lexists(path) and not path.is_dir()):
            raise UserError(f"{path} is a link or not a folder: switching encoders does not follow it")


def switch_encoder(workspace: Workspace, to: Encoder) -> str:
    """Route with the ``to`` encoder and the routing kept for it; the routing in use is kept for its encoder.

    Returns what was done, in words. Switching to an encoder already in use changes nothing; switching to
    ``tuned`` without one (``semif train --encoder`` makes it) is a :class:`UserError`.
    """
    now = routing_encoder(workspace)
    folder = encoder_folder(workspace)
    given = workspace.settings.routing.encoder
    override = f" (but semif.toml's [routing] encoder = {given!r} decides)" if given not in (None, to) else ""
    if to == now:
        return f"the {_named(to)} is in use already; nothing changed{override}"
    if to == "tuned":
        if stored_encoder(workspace) is None or not (folder / "tuned").is_dir():
            raise UserError("this workspace has no tuned encoder: semif train --encoder makes one")
    kept = folder / to
    for slot in (folder / now, kept):  # checked before anything moves
        _refuse_link(slot)
    keep_routing(workspace, now)
    if kept.is_dir():
        _copy_files(kept, workspace.data_dir, slot=kept)
    else:  # the base encoder before any routing was kept for it: the untrained routing
        for name in ROUTING_FILES:
            (workspace.data_dir / name).unlink(missing_ok=True)
    path = workspace.data_dir / ROUTING_FILE
    values: dict[str, Any] = json.loads(path.read_text(encoding="utf-8")) if path.is_file() else {}
    save_tuned(workspace, {**values, "encoder": to})
    return f"switched to the {_named(to)} and the routing trained on it{override}"


def forget_tuned_slot(workspace: Workspace) -> None:
    """Drop the routing kept for an earlier tuned encoder (a new one replaces it)."""
    shutil.rmtree(encoder_folder(workspace) / "tuned", ignore_errors=True)


def _named(encoder: Encoder) -> str:
    return "workspace's tuned encoder" if encoder == "tuned" else "installed encoder"
