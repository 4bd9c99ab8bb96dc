"""The workspace's store of before-images: a copy of each write-dir file, read again only when it changed.

Before a run acts, every regular file of the write dirs up to
:data:`~.observe.IMAGE_KEPT` (1 MiB), until :data:`~.observe.IMAGES_KEPT`
(32 MiB) in all, must have a copy kept, so that what the run changes can be
put back. Reading them all each run costs as much as the files weigh; the
store, in the workspace's records (``data/undo/_store/``, never in a write
dir), keeps them across runs, as git's index does:

- ``blobs/<sha256>``: each content once, named by its sha256, written whole
  (a new file renamed into place) and never changed afterwards;
- ``index.json``: each kept file's absolute path -> its stat key (size,
  mtime_ns, inode, ctime_ns), the sha256 of its bytes, and whether the key
  was settled when read (the file's last change well before the read, so a
  write in the same timestamp tick cannot hide behind an equal key).

:meth:`ImageStore.keep` walks an :class:`~.observe.Observation`: a file
whose stat key, settled, equals the index's and whose blob is there with its
size is not read (its image is the stored blob); any other is read, hashed
and stored. Setting an mtime back (``os.utime``) still changes the ctime,
and a file replaced by a rename has a new inode: both are read again. The
index is written atomically, once, when something changed; then entries of
files no longer in the write dirs (or past the budget) and blobs nothing
refers to are removed, so the store stays within the same 32 MiB. A torn
index reads as empty (every file is read again); a missing or short blob is
read again from its file; a blob whose bytes no longer match its name is
found when its image is used (:meth:`ImageStore.blob`) and is never
given as a before-image.

Blobs a live :class:`BeforeImages` refers to are pinned (a run started from
within another, under the same act lock, must not drop the outer run's
images) until :meth:`BeforeImages.release`.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import os
import threading
import time
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from .._files import open_regular, replace_file
from .observe import IMAGE_KEPT, IMAGES_KEPT, TEXT_KEPT, Observation, StatKey, stat_key

UNDO_DIR = "undo"  # the runs' undo records, in the data dir
STORE_DIR = "_store"  # beside the runs' records in data/undo/; never a run's folder name (those start alnum)
INDEX = "index.json"
BLOBS = "blobs"
SETTLED_NS = 50_000_000  # a key is trusted once the file's last change came this long before it was read
COARSE_SETTLED_NS = 2_000_000_000  # ... or this long, where timestamps are whole milliseconds (coarse filesystems)

_pinned: Counter[str] = Counter()
_pins_lock = threading.Lock()


@dataclass(frozen=True)
class _Entry:
    key: StatKey
    sha256: str
    settled: bool

    def to_json(self) -> list[Any]:
        return [*self.key, self.sha256, self.settled]

    @classmethod
    def from_json(cls, value: Any) -> _Entry | None:
        if not (isinstance(value, list) and len(value) == 6 and all(isinstance(v, int) for v in value[:4])):
            return None
        if not isinstance(value[4], str) or len(value[4]) != 64 or not isinstance(value[5], bool):
            return None
        return cls(StatKey(*value[:4]), value[4], value[5])


@dataclass
class BeforeImages:
    """The before-images of one snapshot: file name -> the sha256 of its bytes (kept in the store), and why the
    others were not kept."""

    store: ImageStore
    shas: dict[str, str] = field(default_factory=dict)
    not_kept: dict[str, str] = field(default_factory=dict)
    read: int = 0  # how many files had to be read (new or changed since they were last kept)

    def text_of(self, name: str) -> str | None:
        """``name``'s text before the run when it was a small UTF-8 file (for its diff), else None."""
        sha = self.shas.get(name)
        data = self.store.blob(sha) if sha is not None else None
        if data is None or len(data) > TEXT_KEPT:
            return None
        try:
            return data.decode("utf-8")
        except UnicodeDecodeError:
            return None

    def release(self) -> None:
        """Let the store drop these blobs when nothing else refers to them."""
        with _pins_lock:
            _pinned.subtract(self.shas.values())
            for sha in [s for s, n in _pinned.items() if n <= 0]:
                del _pinned[sha]
        self.shas = {}


class ImageStore:
    """The before-image store at ``folder`` (see the module's docstring); used under the workspace's act lock."""

    def __init__(self, folder: str | Path) -> None:
        self.folder = Path(folder)
        self.index_path = self.folder / INDEX
        self.blobs = self.folder / BLOBS

    @classmethod
    def of(cls, workspace: Any) -> ImageStore:
        return cls(Path(workspace.data_dir) / UNDO_DIR / STORE_DIR)

    def blob_path(self, sha: str) -> Path:
        return self.blobs / sha

    def blob(self, sha: str) -> bytes | None:
        """The blob ``sha``'s bytes when they still hash to ``sha``; a damaged blob is removed (its file is read
        again next time) and gives None."""
        try:
            data = self.blob_path(sha).read_bytes()
        except OSError:
            return None
        if hashlib.sha256(data).hexdigest() == sha:
            return data
        with contextlib.suppress(OSError):
            self.blob_path(sha).unlink()
        return None

    def keep(
        self, observation: Observation, *, file_limit: int = IMAGE_KEPT, budget: int = IMAGES_KEPT
    ) -> BeforeImages:
        """Before-images of the files ``observation`` lists, reading only those new or changed since kept."""
        index = self._load_index()
        blob_sizes = self._blob_sizes()
        images = BeforeImages(self)
        kept: dict[str, _Entry] = {}
        spent = 0
        for name, stat in observation.files.items():
            full = observation.paths[name]
            if stat.size > file_limit:
                images.not_kept[name] = f"it was larger than {_mib(file_limit)}"
                continue
            if spent + stat.size > budget:
                images.not_kept[name] = f"the write dirs' files up to it passed {_mib(budget)}"
                continue
            entry = index.get(full)
            if not (
                entry is not None
                and entry.settled
                and entry.key == stat_key(stat)
                and blob_sizes.get(entry.sha256) == stat.size
            ):
                entry = self._read(full)
                images.read += 1
                if entry is None:
                    images.not_kept[name] = "it could not be read before the run (it changed while being read)"
                    continue
                blob_sizes[entry.sha256] = entry.key.size
            kept[full] = entry
            images.shas[name] = entry.sha256
            spent += entry.key.size
        with _pins_lock:
            _pinned.update(images.shas.values())
        if kept != index:
            self._write_index(kept)
        self._drop_unused(blob_sizes, {e.sha256 for e in kept.values()})
        return images

    def _read(self, full: str) -> _Entry | None:
        """Read ``full`` once, store its bytes as a blob, and return its entry; None when it is not a regular
        file, cannot be read, or changed while it was read."""
        started = time.time_ns()
        handle = open_regular(full)
        if handle is None:
            return None
        try:
            with handle:
                first = os.fstat(handle.fileno())
                data = handle.read(IMAGE_KEPT + 1)
                last = os.fstat(handle.fileno())
        except OSError:
            return None
        key = stat_key(first)
        if stat_key(last) != key or len(data) != key.size:
            return None
        sha = hashlib.sha256(data).hexdigest()
        target = self.blob_path(sha)
        try:
            if not _has_size(target, len(data)):
                self.blobs.mkdir(parents=True, exist_ok=True)
                replace_file(target, data)
        except OSError:
            return None
        coarse = key.ctime_ns % 1_000_000 == 0
        settled = key.ctime_ns < started - (COARSE_SETTLED_NS if coarse else SETTLED_NS)
        return _Entry(key, sha, settled)

    def _load_index(self) -> dict[str, _Entry]:
        """The index, or nothing when it is missing or torn (then every file is read again)."""
        try:
            raw = json.loads(self.index_path.read_text(encoding="utf-8"))
        except (OSError, ValueError):
            return {}
        files = raw.get("files") if isinstance(raw, dict) and raw.get("version") == 1 else None
        if not isinstance(files, dict):
            return {}
        entries = {path: _Entry.from_json(value) for path, value in files.items()}
        return {path: entry for path, entry in entries.items() if entry is not None}

    def _write_index(self, entries: dict[str, _Entry]) -> None:
        self.folder.mkdir(parents=True, exist_ok=True)
        body = {"version": 1, "files": {path: entry.to_json() for path, entry in entries.items()}}
        with contextlib.suppress(OSError):  # a full disk: the old index stays whole, and its files are read again
            replace_file(self.index_path, json.dumps(body, separators=(",", ":")))

    def _blob_sizes(self) -> dict[str, int]:
        """Each blob's name -> its size (one ``stat`` each: a blob cut short by a crash is not used; a temporary file
        a crash left is unused, and removed)."""
        try:
            with os.scandir(self.blobs) as found:
                return {e.name: e.stat(follow_symlinks=False).st_size for e in found}
        except OSError:
            return {}

    def _drop_unused(self, blob_sizes: dict[str, int], used: set[str]) -> None:
        """Remove the blobs neither the index nor a live snapshot refers to (runs keep their own links)."""
        with _pins_lock:
            unused = set(blob_sizes) - used - set(_pinned)
        for sha in unused:
            with contextlib.suppress(OSError):
                self.blob_path(sha).unlink()

    def size(self) -> int:
        """The bytes the store's blobs take."""
        return sum(self._blob_sizes().values())


def _has_size(path: Path, size: int) -> bool:
    try:
        return path.stat().st_size == size
    except OSError:
        return False


def _mib(size: int) -> str:
    return f"{size // (1024 * 1024)} MiB" if size >= 1024 * 1024 else f"{size} bytes"
