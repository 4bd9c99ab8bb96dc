"""The workspace's store of before-images: a copy of each write-dir file, read again only when it changed.

Before a run acts, every regular file of the write dirs up to
:data:`~.observe.IMAGE_KEPT` (1 MiB), until :data:`~.observe.IMAGES_KEPT`
(32 MiB) in all, must have a copy kept, so that what the run changes can be
put back. Reading them all each run costs as much as the files weigh; the
store, in the workspace's records (``data/undo/_store/``, never in a write
dir), keeps them across runs, as git's index does:

- ``pack-<id>``: the files' bytes, each content once, appended one after the
  other (one file written, where a file per copy costs a file creation each);
- ``index.json``: the pack's name, and each kept file's absolute path -> its
  stat key (size, mtime_ns, inode, ctime_ns), the sha256 of its bytes,
  whether the key was settled when read (the file's last change well before
  the read, so that a write in the same timestamp tick cannot hide behind an
  equal key), and where its bytes are in the pack.

:meth:`ImageStore.keep` walks an :class:`~.observe.Observation`: a file
whose stat key, settled, equals the index's, and whose bytes lie within the
pack, is not read (its image is in the pack); any other is read, hashed and
appended. Setting an mtime back (``os.utime``) still changes the ctime, and
a file put in place by a rename has another inode: both are read again.

The pack is appended to first, then the index is written whole (a new file
renamed over it), so a crash leaves the old index or the new one, never an
entry pointing past what was written. A torn index reads as empty (every file
is read again, into a new pack). Every image is checked against its sha256
when it is used (a diff, a run's undo record): bytes that do not match are
never given as a before-image, and their entry is dropped (the file is read
again by the next run). Entries of files no longer in the write dirs
are dropped; when the pack passes the budget, or holds more unused bytes than
used ones, its used bytes are copied (each checked: a damaged one is read
again from its file) into a new pack, so the store stays within 32 MiB.

A pack a live :class:`BeforeImages` refers to is pinned (a run started from
within another, under the same act lock, must not drop the outer run's
images) until :meth:`BeforeImages.release`.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import os
import secrets
import threading
import time
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, BinaryIO

from .._files import replace_file
from .observe import IMAGE_KEPT, IMAGES_KEPT, TEXT_KEPT, Observation, ObservedFiles, StatKey, stat_key

if TYPE_CHECKING:
    from ..workspace import Workspace

UNDO_DIR = "undo"  # the runs' undo records, in the data dir
STORE_DIR = "_store"  # beside the runs' records in data/undo/; never a run's folder name (those start alnum)
INDEX = "index.json"
INDEX_VERSION = 2
SETTLED_NS = 50_000_000  # a key is trusted once the file's last change came this long before it was read
COARSE_SETTLED_NS = 2_000_000_000  # ... or this long, where timestamps are whole milliseconds (coarse filesystems)
SMALL_PACK = 1024 * 1024  # a pack this small is never compacted for its unused bytes

_pinned: Counter[str] = Counter()
_pins_lock = threading.Lock()

# An index entry: [size, mtime_ns, ino, ctime_ns, sha256, settled, offset in the pack].
_SHA, _SETTLED, _OFFSET = 4, 5, 6


@dataclass
class BeforeImages:
    """The before-images of one snapshot: file name -> the sha256 of its bytes, where those are in the store's
    pack, and why the other files were not kept."""

    store: ImageStore
    pack: Path | None = None
    shas: dict[str, str] = field(default_factory=dict)
    offsets: dict[str, tuple[int, int]] = field(default_factory=dict)  # sha256 -> (offset, size) in the pack
    not_kept: dict[str, str] = field(default_factory=dict)
    read: int = 0  # how many files had to be read (new or changed since they were last kept)
    pinned: str | None = None  # the pack this snapshot keeps from being dropped, until released

    def blob(self, sha: str) -> bytes | None:
        """The bytes that hash to ``sha``, from the pack; None when they are not there or no longer match."""
        where = self.offsets.get(sha)
        if self.pack is None or where is None:
            return None
        try:
            with open(self.pack, "rb") as handle:
                handle.seek(where[0])
                data = handle.read(where[1])
        except OSError:
            return None
        if hashlib.sha256(data).hexdigest() == sha:
            return data
        self.store.forget(sha)
        return None

    def bytes_of(self, name: str) -> bytes | None:
        """``name``'s bytes before the run, checked against their sha256; None when not kept or damaged."""
        sha = self.shas.get(name)
        return None if sha is None else self.blob(sha)

    def text_of(self, name: str) -> str | None:
        """``name``'s text before the run when it was a small UTF-8 file (for its diff), else None."""
        sha = self.shas.get(name)
        if sha is None or self.offsets[sha][1] > TEXT_KEPT:
            return None
        data = self.blob(sha)
        try:
            return data.decode("utf-8") if data is not None else None
        except UnicodeDecodeError:
            return None

    def release(self) -> None:
        """Let the store drop this pack once it is replaced and nothing else refers to it."""
        if self.pinned is not None:
            with _pins_lock:
                _pinned[self.pinned] -= 1
                if _pinned[self.pinned] <= 0:
                    del _pinned[self.pinned]
        self.pinned = None


class ImageStore:
    """The before-image store at ``folder`` (see the module's docstring); used under the workspace's act lock."""

    def __init__(self, folder: str | Path) -> None:
        self.folder = Path(folder)
        self.index_path = self.folder / INDEX

    @classmethod
    def of(cls, workspace: Workspace) -> ImageStore:
        return cls(Path(workspace.data_dir) / UNDO_DIR / STORE_DIR)

    def keep(
        self, observation: Observation, *, file_limit: int = IMAGE_KEPT, budget: int = IMAGES_KEPT
    ) -> BeforeImages:
        """Before-images of the files ``observation`` lists, reading only those new or changed since kept."""
        pack_name, index = self._load_index()
        pack = self.folder / pack_name if pack_name else self.folder / f"pack-{secrets.token_hex(8)}"
        images = BeforeImages(self, pack)
        try:
            pack_size = pack.stat().st_size
        except OSError:
            pack_size = 0
        where: dict[str, int] = {}  # sha256 -> offset of its bytes in the pack
        kept: dict[str, list[Any]] = {}
        names: dict[str, str] = {}  # absolute path -> the observation's name of it
        spent = 0
        with _Appender(pack) as appender, ObservedFiles(observation) as files:
            for name, stat in observation.files.items():
                full = observation.paths[name]
                if stat.size > file_limit:
                    images.not_kept[name] = f"it was larger than {_mib(file_limit)}"
                    continue
                if spent + stat.size > budget:
                    images.not_kept[name] = f"the write dirs' files up to it passed {_mib(budget)}"
                    continue
                entry: list[Any] | None = index.get(full)
                if not _still_good(entry, stat[:4], pack_size):
                    images.read += 1
                    entry = _read(files.open(name), appender, where)
                if entry is None:
                    images.not_kept[name] = "it could not be read before the run (it changed while being read)"
                    continue
                kept[full], names[full] = entry, name
                where.setdefault(entry[_SHA], entry[_OFFSET])
                images.shas[name] = entry[_SHA]
                images.offsets[entry[_SHA]] = (entry[_OFFSET], entry[0])
                spent += entry[0]
            pack_size = max(pack_size, appender.end)
        live = sum(size for _, size in images.offsets.values())
        if kept and (pack_size > budget or pack_size > max(2 * live, SMALL_PACK)):
            self._compact(images, kept, names, observation)
        elif kept != index or pack_name != pack.name:
            self._write_index(pack.name, kept)
        if images.pack is not None:
            images.pinned = str(images.pack)
            with _pins_lock:
                _pinned[images.pinned] += 1
        self._drop_other_packs(images.pack)
        return images

    def forget(self, sha: str) -> None:
        """Drop the index's entries whose bytes hash to ``sha`` (found damaged): their files are read again."""
        pack, index = self._load_index()
        left = {path: entry for path, entry in index.items() if not (isinstance(entry, list) and sha in entry)}
        if pack is not None and left != index:
            self._write_index(pack, left)

    def _compact(
        self, images: BeforeImages, kept: dict[str, list[Any]], names: dict[str, str], observation: Observation
    ) -> None:
        """Copy the used bytes into a new pack (a damaged copy is read again from its file), then point the index
        and ``images`` at it."""
        old = BeforeImages(self, images.pack, offsets=dict(images.offsets))
        images.pack = self.folder / f"pack-{secrets.token_hex(8)}"
        images.offsets = {}
        where: dict[str, int] = {}
        with _Appender(images.pack) as appender, ObservedFiles(observation) as files:
            for full, entry in list(kept.items()):
                sha = entry[_SHA]
                if sha not in where:
                    data = old.blob(sha)
                    if data is not None:
                        where[sha] = appender.append(data)
                if sha in where:
                    entry[_OFFSET] = where[sha]
                else:  # damaged: read again from its file
                    fresh = _read(files.open(names[full]), appender, where)
                    if fresh is None:
                        del kept[full]
                        del images.shas[names[full]]
                        images.not_kept[names[full]] = "it could not be read before the run"
                        continue
                    kept[full] = entry = fresh
                    images.shas[names[full]] = entry[_SHA]
                images.offsets[entry[_SHA]] = (entry[_OFFSET], entry[0])
        self._write_index(images.pack.name, kept)

    def _load_index(self) -> tuple[str | None, dict[str, Any]]:
        """The pack's name and the index (path -> entry, each checked where it is used); nothing when it is missing
        or torn (then every file is read again)."""
        try:
            raw = json.loads(self.index_path.read_text(encoding="utf-8"))
        except (OSError, ValueError):
            return None, {}
        if not isinstance(raw, dict) or raw.get("version") != INDEX_VERSION:
            return None, {}
        pack, files = raw.get("pack"), raw.get("files")
        if not (isinstance(pack, str) and pack.startswith("pack-") and os.sep not in pack and isinstance(files, dict)):
            return None, {}
        return pack, files

    def _write_index(self, pack: str, entries: dict[str, list[Any]]) -> None:
        self.folder.mkdir(parents=True, exist_ok=True)
        body = {"version": INDEX_VERSION, "pack": pack, "files": entries}
        with contextlib.suppress(OSError):  # a full disk: the old index stays whole, and its files are read again
            replace_file(self.index_path, json.dumps(body, separators=(",", ":")))

    def _drop_other_packs(self, current: Path | None) -> None:
        """Remove the packs the index no longer names and no live snapshot refers to, and leftover temporary files."""
        try:
            names = os.listdir(self.folder)
        except OSError:
            return
        with _pins_lock:
            keep = {INDEX, *(Path(p).name for p in _pinned if Path(p).parent == self.folder)}
        if current is not None:
            keep.add(current.name)
        for name in set(names) - keep:
            with contextlib.suppress(OSError):
                (self.folder / name).unlink()

    def size(self) -> int:
        """The bytes the store takes (its packs and index)."""
        try:
            return sum(entry.stat().st_size for entry in os.scandir(self.folder))
        except OSError:
            return 0


class _Appender:
    """Appends to a pack, opened on the first append; ``end`` is the pack's size after the appends."""

    def __init__(self, pack: Path) -> None:
        self.pack = pack
        self.handle: BinaryIO | None = None
        self.end = 0

    def __enter__(self) -> _Appender:
        return self

    def __exit__(self, *exc: object) -> None:
        if self.handle is not None:
            self.handle.close()

    def append(self, data: bytes) -> int:
        """Append ``data``; its offset."""
        if self.handle is None:
            self.pack.parent.mkdir(parents=True, exist_ok=True)
            self.handle = open(self.pack, "ab")
        offset = self.handle.tell()
        self.handle.write(data)
        self.end = offset + len(data)
        return offset


def _still_good(entry: object, key: tuple[int, ...], pack_size: int) -> bool:
    """Whether an index entry still stands for its file, whose stat key is now ``key``: the same key, settled when
    read, and its bytes within the pack."""
    return (
        isinstance(entry, list)
        and len(entry) == 7
        and entry[:4] == list(key)
        and entry[_SETTLED] is True
        and isinstance(entry[_SHA], str)
        and isinstance(entry[_OFFSET], int)
        and 0 <= entry[_OFFSET] <= pack_size - entry[0]
    )


def _read(handle: BinaryIO | None, appender: _Appender, where: dict[str, int]) -> list[Any] | None:
    """Read the file ``handle`` once (:class:`~.observe.ObservedFiles`: never through a link) and append its bytes to
    the pack (unless the same bytes are there); its index entry, or None without a handle, when it cannot be read,
    or when it changed while it was read."""
    started = time.time_ns()
    if handle is None:
        return None
    try:
        with handle:
            first = os.fstat(handle.fileno())
            data = handle.read(IMAGE_KEPT + 1)
            last = os.fstat(handle.fileno())
    except OSError:
        return None
    key: StatKey = stat_key(first)
    if stat_key(last) != key or len(data) != key.size:
        return None
    sha = hashlib.sha256(data).hexdigest()
    try:
        offset = where[sha] if sha in where else appender.append(data)
    except OSError:
        return None
    where[sha] = offset
    coarse = key.ctime_ns % 1_000_000 == 0
    settled = key.ctime_ns < started - (COARSE_SETTLED_NS if coarse else SETTLED_NS)
    return [*key, sha, settled, offset]


def _mib(size: int) -> str:
    return f"{size // (1024 * 1024)} MiB" if size >= 1024 * 1024 else f"{size} bytes"
