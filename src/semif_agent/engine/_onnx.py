"""The ONNX side of the local engine: the model file's check, and sessions that start fast.

- :func:`verify_model` hashes the model file once per installed file. The verified
  digest is recorded in the cache folder (``verified-models.json``) under the file's
  path, size, modification time, inode and change time; a later process trusts a
  matching record, and any change to the file means hashing it again.
- :func:`build_session` makes an onnxruntime session that shares the cores politely
  (a set number of intra-op threads, one inter-op thread, no spinning threads, no
  memory arena kept at its high-water mark). The first session saves its optimised
  graph in the cache folder (``onnx/<model digest>-ort<version>/``, weights in a side
  file); later sessions load that graph as is. The saved files are checked against
  their own record (size, times, inode, else sha256) before use; a missing, corrupt
  or unwritable cache falls back on the original model and is rebuilt.

Standard library at import time; onnxruntime is imported by :func:`build_session`.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import os
import shutil
import tempfile
import threading
import time
from collections.abc import Mapping
from pathlib import Path
from types import ModuleType
from typing import Any

from .._files import replace_file
from ..errors import EngineConfigError
from .embed_cache import default_cache_path

RECORD_NAME = "verified-models.json"
GRAPH_FOLDER = "onnx"
GRAPH_FILE = "graph.onnx"
GRAPH_DATA = "graph.data"
GRAPH_RECORD = "record.json"
MAX_THREADS = 4
STALE_SECONDS = 3600  # a graph still being saved after an hour was abandoned

_verified: set[tuple[object, ...]] = set()
_record_lock = threading.Lock()


def cache_folder() -> Path | None:
    """Where the verification record and saved graphs live (beside the embedding cache)."""
    try:
        return default_cache_path().parent
    except RuntimeError:  # no home folder to put it in
        return None


def default_threads() -> int:
    """Intra-op threads: ``$OMP_NUM_THREADS`` when set, else the cores this process may use; at most :data:`MAX_THREADS`.

    A process given a share of the machine says so in ``OMP_NUM_THREADS`` (a Ray
    worker with one CPU has it at 1), so several such processes do not each
    spread over every core.
    """
    asked = os.environ.get("OMP_NUM_THREADS", "").strip()
    if asked.isdigit() and int(asked) > 0:
        return min(int(asked), MAX_THREADS)
    try:
        available = len(os.sched_getaffinity(0))
    except AttributeError:  # not on Linux
        available = os.cpu_count() or 1
    return max(1, min(available, MAX_THREADS))


def file_sha256(path: Path) -> str:
    digest = hashlib.sha256()
    with open(path, "rb") as handle:
        for block in iter(lambda: handle.read(1 << 20), b""):
            digest.update(block)
    return digest.hexdigest()


def _fingerprint(path: Path) -> dict[str, int]:
    """What changes when a file is written, replaced or touched."""
    stat = os.stat(path)
    return {"size": stat.st_size, "mtime_ns": stat.st_mtime_ns, "inode": stat.st_ino, "ctime_ns": stat.st_ctime_ns}


def _read_json(path: Path) -> dict[str, object]:
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return {}
    return data if isinstance(data, dict) else {}


def _write_json(path: Path, data: Mapping[str, object]) -> None:
    """Replace ``path`` atomically; best effort (an unwritable folder is skipped)."""
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        replace_file(path, json.dumps(data, indent=1, sort_keys=True))
    except OSError:
        pass


def verify_model(path: Path, sha256: str, *, hint: str, cache_dir: Path | None) -> None:
    """Refuse ``path`` unless its sha256 is ``sha256``; hash it only when no record vouches for it."""
    try:
        fingerprint = _fingerprint(path)
    except OSError as exc:
        raise EngineConfigError(f"{path}: cannot read the embedding model ({exc.strerror})") from exc
    name = os.path.abspath(path)
    key = (name, sha256, *fingerprint.values())
    if key in _verified:
        return
    record_path = cache_dir / RECORD_NAME if cache_dir else None
    verified = {**fingerprint, "sha256": sha256}
    if record_path is None or _read_json(record_path).get(name) != verified:
        try:
            digest = file_sha256(path)
        except OSError as exc:
            raise EngineConfigError(f"{path}: cannot read the embedding model ({exc.strerror})") from exc
        if digest != sha256:
            raise EngineConfigError(f"{path}: the embedding model's sha256 is {digest}, expected {sha256}; {hint}")
        if record_path is not None:
            with _record_lock:
                records = {p: r for p, r in _read_json(record_path).items() if os.path.exists(p)}
                records[name] = verified
                _write_json(record_path, records)
    _verified.add(key)


def build_session(model_path: Path, model_sha256: str, *, threads: int, cache_dir: Path | None) -> Any:
    """An inference session on the verified model, from its saved optimised graph when there is a sound one."""
    import onnxruntime as ort

    folder = cache_dir / GRAPH_FOLDER / f"{model_sha256[:16]}-ort{ort.__version__}" if cache_dir else None
    if folder is not None and _graph_intact(folder, model_sha256, ort.__version__):
        try:
            return _session(ort, folder / GRAPH_FILE, threads, optimise=False)
        except Exception:  # noqa: BLE001 - onnxruntime raises several kinds; the original model still works
            shutil.rmtree(folder, ignore_errors=True)  # the recorded bytes, yet not loadable: save them again
    staging = _staging_folder(folder) if folder is not None else None
    if staging is not None:
        try:
            session = _session(ort, model_path, threads, optimise=True, save_to=staging)
        except Exception:  # noqa: BLE001 - saving failed (disk full?): build without saving
            shutil.rmtree(staging, ignore_errors=True)
        else:
            _publish(staging, folder, model_sha256, ort.__version__)  # type: ignore[arg-type]  # onnxruntime ships no types; its __version__ is a str
            return session
    return _session(ort, model_path, threads, optimise=True)


def _session(
    ort: ModuleType, path: Path, threads: int, *, optimise: bool, save_to: Path | None = None, spinning: bool = False
) -> Any:
    options = ort.SessionOptions()
    options.log_severity_level = 3
    options.intra_op_num_threads = threads
    options.inter_op_num_threads = 1
    options.execution_mode = ort.ExecutionMode.ORT_SEQUENTIAL
    # Idle threads sleep instead of spinning, so whatever runs next on the same cores is not starved.
    options.add_session_config_entry("session.intra_op.allow_spinning", "1" if spinning else "0")
    options.add_session_config_entry("session.inter_op.allow_spinning", "1" if spinning else "0")
    # Batches change shape; without the arena, each one's activations are freed when it ends.
    options.enable_cpu_mem_arena = False
    # Extended, not "all": the saved graph holds no layout tied to this machine's CPU.
    levels = ort.GraphOptimizationLevel
    options.graph_optimization_level = levels.ORT_ENABLE_EXTENDED if optimise else levels.ORT_DISABLE_ALL
    if save_to is not None:
        options.optimized_model_filepath = str(save_to / GRAPH_FILE)
        # Weights in a side file: loading them later skips parsing 90 MB of protobuf.
        options.add_session_config_entry("session.optimized_model_external_initializers_file_name", GRAPH_DATA)
        options.add_session_config_entry("session.optimized_model_external_initializers_min_size_in_bytes", "1024")
    return ort.InferenceSession(str(path), options, providers=["CPUExecutionProvider"])


def _graph_intact(folder: Path, model_sha256: str, ort_version: str) -> bool:
    """Whether every file of the saved graph is the one its record describes."""
    record = _read_json(folder / GRAPH_RECORD)
    files = record.get("files")
    if record.get("model_sha256") != model_sha256 or record.get("onnxruntime") != ort_version:
        return False
    if not isinstance(files, dict) or GRAPH_FILE not in files:
        return False
    refreshed = False
    for name, expected in files.items():
        try:
            fingerprint = _fingerprint(folder / name)
            if {**fingerprint, "sha256": expected.get("sha256")} == expected:
                continue
            if fingerprint["size"] != expected.get("size") or file_sha256(folder / name) != expected.get("sha256"):
                return False
        except (OSError, AttributeError):
            return False
        files[name] = {**fingerprint, "sha256": expected["sha256"]}  # same bytes, new times (a copied cache)
        refreshed = True
    if refreshed:
        _write_json(folder / GRAPH_RECORD, record)
    return True


def _staging_folder(folder: Path) -> Path | None:
    """A new private folder beside ``folder`` to save a graph in; leftovers of killed starts are removed."""
    try:
        folder.parent.mkdir(parents=True, exist_ok=True)
        for stale in folder.parent.glob(f".{folder.name}.*"):
            with contextlib.suppress(OSError):
                if time.time() - stale.stat().st_mtime > STALE_SECONDS:
                    shutil.rmtree(stale)
        return Path(tempfile.mkdtemp(dir=folder.parent, prefix=f".{folder.name}."))
    except OSError:
        return None


def _publish(staging: Path, folder: Path, model_sha256: str, ort_version: str) -> None:
    """Record the saved files' sizes and digests, then move them into place in one rename."""
    try:
        files = {
            entry.name: {**_fingerprint(Path(entry.path)), "sha256": file_sha256(Path(entry.path))}
            for entry in os.scandir(staging)
        }
        if GRAPH_FILE not in files:
            raise OSError("onnxruntime saved no graph")
        record = {"model_sha256": model_sha256, "onnxruntime": ort_version, "files": files}
        (staging / GRAPH_RECORD).write_text(json.dumps(record, indent=1, sort_keys=True), encoding="utf-8")
        if folder.exists() and not _graph_intact(folder, model_sha256, ort_version):
            shutil.rmtree(folder, ignore_errors=True)  # the unsound copy that was not used
        os.rename(staging, folder)
    except OSError:  # unwritable, or another process published first
        shutil.rmtree(staging, ignore_errors=True)
